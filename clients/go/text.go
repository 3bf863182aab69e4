// The text form (docs/FORMAT.md §5): what bloomfilter_out prints and
// bloomfilter_in accepts, parsed with the input function's exact rules.

package bloomfilter

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
)

const textPrefix = "bloomfilter:1"

// String returns the text form (FORMAT.md §5, or §9.4 for a growing
// filter, §10.4 for a union).  For a filter of family other, whose text names a type only
// the server knows, the type is printed as its OID.
func (f *Filter) String() string {
	if f.grow != nil {
		return f.grow.String()
	}
	var b strings.Builder
	b.Grow(200 + base64.StdEncoding.EncodedLen(len(f.bits)))
	b.WriteString(textPrefix + " layout=blocked hash=xxh3_64 family=")
	b.WriteString(familyText(f.family, f.detail, "oid:"+strconv.FormatUint(uint64(f.detail), 10)))
	b.WriteString(" nhashes=" + strconv.Itoa(f.k))
	b.WriteString(" nbits=" + strconv.FormatUint(f.NBits(), 10))
	b.WriteString(" seed=" + strconv.FormatInt(f.seed, 10))
	b.WriteString(" capacity=" + strconv.FormatInt(f.capacity, 10))
	b.WriteString(" fpr=" + formatFPR(f.fpr))
	b.WriteString(" inserted=" + strconv.FormatUint(f.inserted, 10))
	b.WriteString(" bits=")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(f.bits)
	enc.Close()
	return b.String()
}

// formatFPR prints a rate in [0, 1) as PostgreSQL's float8 output does:
// the shortest round-trip digits, exponent form below 1e-4 ("1e-05").
func formatFPR(x float64) string {
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// ParseText reads the text form of any form ("bloomfilter:1 ...", a
// growing filter's "bloomgrowing:1 ..." or a union's "bloomunion:1 ..."),
// rejecting what the server's
// input function rejects (a *FormatError with SQLSTATE 22P02).  A filter
// of family other cannot be read: its text names a type that only the
// server can resolve (ErrNonPortable).
func ParseText(s string) (*Filter, error) {
	// as the server tells them apart
	if strings.HasPrefix(s, growTextPrefix+" ") || strings.HasPrefix(s, unionTextPrefix+" ") {
		return parseGrowingText(s)
	}
	return parsePlainText(s)
}

// parsePlainText reads the text form of a plain filter (§5).
func parsePlainText(s string) (*Filter, error) {
	if !strings.HasPrefix(s, textPrefix) {
		return nil, textError("the value does not start with %q", textPrefix)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return nil, textError("the value contains a NUL byte")
	}
	p := s[len(textPrefix):]
	next := func(key string) (string, bool) {
		if !strings.HasPrefix(p, " "+key+"=") {
			return "", false
		}
		p = p[len(key)+2:]
		v := p
		if i := strings.IndexByte(p, ' '); i >= 0 {
			v = p[:i]
		}
		p = p[len(v):]
		return v, true
	}
	f := &Filter{}
	if v, ok := next("layout"); !ok || v != "blocked" {
		return nil, textError("expected \"layout=blocked\" after the version")
	}
	if v, ok := next("hash"); !ok || v != "xxh3_64" {
		return nil, textError("expected \"hash=xxh3_64\" after the layout")
	}
	v, ok := next("family")
	if ok {
		var err error
		if ok, err = f.parseFamily(v); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, textError("expected \"family=\" and a known element family after the hash")
	}
	v, ok = next("nhashes")
	k, okNum := parseU64(v)
	if !ok || !okNum || k < 1 || k > maxHashes {
		return nil, textError("expected \"nhashes=\" and a number from 1 to 64")
	}
	f.k = int(k)
	v, ok = next("nbits")
	nbits, okNum := parseU64(v)
	if !ok || !okNum || nbits == 0 || nbits%blockBits != 0 || nbits/blockBits > maxBlocks {
		return nil, textError("expected \"nbits=\" and a positive multiple of 512 of at most %d",
			maxBlocks*blockBits)
	}
	f.nblocks = nbits / blockBits
	v, ok = next("seed")
	if f.seed, okNum = parseI64(v); !ok || !okNum {
		return nil, textError("expected \"seed=\" and a bigint")
	}
	v, ok = next("capacity")
	if f.capacity, okNum = parseI64(v); !ok || !okNum || f.capacity < 0 {
		return nil, textError("expected \"capacity=\" and a non-negative bigint")
	}
	v, ok = next("fpr")
	if !ok || v == "" {
		return nil, textError("expected \"fpr=\" and a number")
	}
	var errNum error
	if f.fpr, errNum = strconv.ParseFloat(v, 64); errNum != nil || !(f.fpr >= 0 && f.fpr < 1) {
		return nil, textError("expected \"fpr=\" and a number in [0, 1)")
	}
	v, ok = next("inserted")
	if f.inserted, okNum = parseU64(v); !ok || !okNum {
		return nil, textError("expected \"inserted=\" and a non-negative number")
	}
	v, ok = next("bits")
	if !ok || p != "" {
		return nil, textError("expected \"bits=\" and base64 as the last field")
	}
	nbytes := int(f.nblocks * blockBytes)
	if len(v) != base64.StdEncoding.EncodedLen(nbytes) {
		return nil, textError("the bits hold %d base64 characters; %d bits need %d",
			len(v), nbits, base64.StdEncoding.EncodedLen(nbytes))
	}
	// Strict: standard alphabet, '=' padding, zero pad bits, no newlines.
	bits, err := base64.StdEncoding.Strict().DecodeString(v)
	if err != nil || len(bits) != nbytes || strings.ContainsAny(v, "\r\n") {
		return nil, textError("the bits are not valid base64")
	}
	f.bits = bits
	if f.family == FamilyRecord && recordHasOther(f.detail) {
		f.flags = flagNonPort
	}
	if err := f.check(textError); err != nil {
		return nil, err
	}
	// one text per filter, as the server reads it: leading zeros, signs and
	// other spellings of the same numbers are refused
	if f.String() != s {
		return nil, textError("the text is not what bloomfilter output prints for this filter")
	}
	return f, nil
}

// parseFamily reads "integer", "record(integer,text)" or "other(type)".
func (f *Filter) parseFamily(s string) (bool, error) {
	name, args, paren := strings.Cut(s, "(")
	fam, ok := familyFromName(name)
	if !ok {
		return false, nil
	}
	f.family = fam
	if fam != FamilyRecord && fam != FamilyOther {
		return !paren, nil
	}
	if !paren || !strings.HasSuffix(args, ")") {
		return false, nil
	}
	args = args[:len(args)-1]
	if fam == FamilyOther {
		// the server resolves the type name to its OID; a client cannot
		return false, ErrNonPortable
	}
	// As the server: fields separated by commas; a trailing comma ends
	// the list, an empty field elsewhere is an error.
	n := 0
	for args != "" {
		field, rest, comma := strings.Cut(args, ",")
		ff, ok := familyFromName(field)
		if !ok || ff == FamilyNone || ff == FamilyRecord || n >= maxRecordFields {
			return false, nil
		}
		f.detail |= uint32(ff) << (4 * n)
		n++
		args = rest
		_ = comma
	}
	return n > 0, nil
}

// parseU64 accepts 1 to 20 decimal digits (leading zeros allowed) that
// fit in 64 bits, as the server does.
func parseU64(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// parseI64 accepts an optional '-' then parseU64's digits, within int64.
func parseI64(s string) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	u, ok := parseU64(s)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}
