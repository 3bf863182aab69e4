// Go types for SQL values whose family a plain Go type cannot tell
// (numeric, enum, bpchar, uuid, date, timestamp, timestamptz, records,
// typed NULLs), and conversions from time.Time and decimal texts.

package bloomfilter

import (
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"strings"
	"time"
)

// Numeric is a numeric value in decimal text ("1.50", "-2e3", "NaN",
// "Infinity").  It hashes as PostgreSQL's canonical form ("1.5", "-2000").
// A plain string probed against a numeric filter is read the same way.
type Numeric string

// Enum is an enum label (enums hash by label, not by OID).  A plain string
// probed against an enum filter is taken as a label.
type Enum string

// Bpchar is a char(n) value: trailing spaces do not count, as in SQL.
type Bpchar string

// UUID is a uuid's 16 bytes in printed order.  A plain string probed
// against a uuid filter is parsed as a uuid.
type UUID [16]byte

// Date is a date as days since 2000-01-01 (PostgreSQL's representation).
type Date int64

// Timestamp is a timestamp without time zone: microseconds since
// 2000-01-01 00:00:00 of the wall clock.
type Timestamp int64

// TimestampTZ is a timestamp with time zone: microseconds since
// 2000-01-01 00:00:00 UTC.
type TimestampTZ int64

// The infinities of the date and time types.
const (
	DateInfinity           Date        = math.MaxInt32
	DateNegInfinity        Date        = math.MinInt32
	TimestampInfinity      Timestamp   = math.MaxInt64
	TimestampNegInfinity   Timestamp   = math.MinInt64
	TimestampTZInfinity    TimestampTZ = math.MaxInt64
	TimestampTZNegInfinity TimestampTZ = math.MinInt64
)

// Record is a composite key (user × attribute, a multi-column index):
// its fields in order, nil for NULL.
type Record []any

// Null is a NULL record field of the given family, for hashing a record
// without a filter to take the field's family from (see Hash).
type Null Family

const pgEpochUnix = 946684800 // 2000-01-01 00:00:00 UTC in Unix seconds

// DateOf returns the calendar date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()/86400 - pgEpochUnix/86400)
}

// roundMicros rounds nanoseconds to microseconds, half to even, as
// PostgreSQL rounds fractional seconds.
func roundMicros(ns int) int64 {
	us, rem := int64(ns/1000), ns%1000
	if rem > 500 || rem == 500 && us%2 == 1 {
		us++
	}
	return us
}

// TimestampOf returns the wall-clock time of t in t's location, as a
// timestamp without time zone (drivers give such columns in UTC).
func TimestampOf(t time.Time) Timestamp {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	wall := time.Date(y, mo, d, h, mi, s, 0, time.UTC)
	return Timestamp((wall.Unix()-pgEpochUnix)*1000000 + roundMicros(t.Nanosecond()))
}

// TimestampTZOf returns the instant t as a timestamp with time zone.
func TimestampTZOf(t time.Time) TimestampTZ {
	return TimestampTZ((t.Unix()-pgEpochUnix)*1000000 + roundMicros(t.Nanosecond()))
}

// ParseUUID reads a uuid in the forms PostgreSQL accepts: 32 hex digits,
// optionally with a hyphen after any group of four, optionally in braces.
func ParseUUID(s string) (UUID, error) {
	var u UUID
	bad := errors.New("bloomfilter: invalid uuid " + quoteShort(s))
	braces := strings.HasPrefix(s, "{")
	if braces {
		if !strings.HasSuffix(s, "}") {
			return u, bad
		}
		s = s[1 : len(s)-1]
	}
	for i := 0; i < 16; i++ {
		if len(s) < 2 || !isHex(s[0]) || !isHex(s[1]) {
			return u, bad
		}
		hex.Decode(u[i:i+1], []byte(s[:2]))
		s = s[2:]
		if i%2 == 1 && i < 15 && strings.HasPrefix(s, "-") {
			s = s[1:]
		}
	}
	if s != "" {
		return u, bad
	}
	return u, nil
}

// String prints the uuid as PostgreSQL does.
func (u UUID) String() string {
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return "\"" + s + "\""
}

// numericText returns the canonical text of a numeric given as decimal
// text (FORMAT.md §3): PostgreSQL's output without insignificant trailing
// zeros or a trailing point, NaN and ±Infinity spelled so.
func numericText(s string) (string, error) {
	bad := errors.New("bloomfilter: invalid numeric " + quoteShort(s))
	s = strings.Trim(s, " \t\n\v\f\r")
	if strings.EqualFold(s, "nan") {
		return "NaN", nil
	}
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if strings.EqualFold(s, "infinity") || strings.EqualFold(s, "inf") {
		if neg {
			return "-Infinity", nil
		}
		return "Infinity", nil
	}
	n := digitsRun(s, 0)
	intPart := s[:n]
	s = s[n:]
	frac := ""
	if strings.HasPrefix(s, ".") {
		n = digitsRun(s, 1)
		frac = s[1 : 1+n]
		s = s[1+n:]
	}
	if intPart == "" && frac == "" {
		return "", bad
	}
	exp := 0
	if s != "" && (s[0]|0x20) == 'e' {
		e := s[1:]
		eneg := false
		if e != "" && (e[0] == '+' || e[0] == '-') {
			eneg = e[0] == '-'
			e = e[1:]
		}
		if e == "" || digitsRun(e, 0) != len(e) || len(e) > 7 {
			return "", bad
		}
		for i := 0; i < len(e); i++ {
			exp = exp*10 + int(e[i]-'0')
		}
		if eneg {
			exp = -exp
		}
		s = ""
	}
	if s != "" {
		return "", bad
	}
	return decimalText(neg, strings.TrimLeft(intPart+frac, "0"), len(frac)-exp), nil
}

// decimalText formats ±digits·10^-scale without leading zeros, trailing
// fractional zeros or a trailing point ("0" for zero, which has no sign).
func decimalText(neg bool, digits string, scale int) string {
	if digits == "" {
		return "0"
	}
	var ip, fp string
	switch {
	case scale <= 0:
		ip = digits + strings.Repeat("0", -scale)
	case len(digits) <= scale:
		ip, fp = "0", strings.Repeat("0", scale-len(digits))+digits
	default:
		ip, fp = digits[:len(digits)-scale], digits[len(digits)-scale:]
	}
	fp = strings.TrimRight(fp, "0")
	out := ip
	if fp != "" {
		out += "." + fp
	}
	if neg {
		out = "-" + out
	}
	return out
}

// ratText is the canonical text of an exact rational with a finite
// decimal expansion (its denominator has no prime factor but 2 and 5).
func ratText(r *big.Rat) (string, error) {
	d := new(big.Int).Set(r.Denom())
	mod := new(big.Int)
	for _, p := range []int64{2, 5} {
		bp := big.NewInt(p)
		for mod.Mod(d, bp).Sign() == 0 {
			d.Quo(d, bp)
		}
	}
	if !d.IsInt64() || d.Int64() != 1 {
		return "", errors.New("bloomfilter: " + r.String() + " has no finite decimal expansion")
	}
	// multiply by 10 until the denominator divides the numerator
	num := new(big.Int).Abs(r.Num())
	ten := big.NewInt(10)
	scale := 0
	for mod.Mod(num, r.Denom()).Sign() != 0 {
		num.Mul(num, ten)
		scale++
	}
	num.Quo(num, r.Denom())
	return decimalText(r.Sign() < 0, strings.TrimLeft(num.String(), "0"), scale), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// digitsRun returns the length of the run of decimal digits at s[i:].
func digitsRun(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j - i
}
