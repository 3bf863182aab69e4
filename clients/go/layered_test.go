package bloomfilter

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

// The checks that the tests of growing filters (growing_test.go) and of
// unions (union_test.go) share: both are layered values (FORMAT.md §9,
// §10) that a client reads and never changes.

// layeredKind is what tells the two layouts apart in those checks.
type layeredKind struct {
	name    string             // in messages: "growing filter", "union"
	is      func(*Filter) bool // (*Filter).IsGrowing or (*Filter).IsUnion
	refused error              // the error of a change: ErrGrowing, ErrUnion
	other   error              // the other layout's error, never returned
	says    string             // what the refusal's message says
	prefix  string             // the text form's prefix
}

var (
	growingKind = layeredKind{"growing filter", (*Filter).IsGrowing, ErrGrowing, ErrUnion,
		"server", growTextPrefix}
	unionKind = layeredKind{"union", (*Filter).IsUnion, ErrUnion, ErrGrowing,
		"read-only", unionTextPrefix}
)

// checkLayeredLookups: every key lo..hi is found (as an int64, through
// ContainsInt64, and as an int32), the rate measured over 10 000 absent
// keys is near FPR(), and a text value is of another family.
func checkLayeredLookups(t *testing.T, k layeredKind, f *Filter, lo, hi int64) {
	t.Helper()
	for key := lo; key <= hi; key++ {
		a, err1 := f.Contains(key)
		b, err2 := f.ContainsInt64(key)
		c, err3 := f.Contains(int32(key))
		if !a || !b || !c || err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("key %d of a layer lost: %v %v %v %v %v %v", key, a, b, c, err1, err2, err3)
		}
	}
	fp := 0
	for key := int64(1000000); key < 1010000; key++ {
		if ok, _ := f.ContainsInt64(key); ok {
			fp++
		}
	}
	if rate := float64(fp) / 10000; rate > 3*f.FPR()+0.005 {
		t.Errorf("measured rate %v, FPR() %v", rate, f.FPR())
	}
	var fe *FamilyError
	if _, err := f.Contains("text"); !errors.As(err, &fe) {
		t.Errorf("a text value against a %s of integers: %v", k.name, err)
	}
}

// checkLayeredRoundTrip: the text form parses to the same bytes, Scan
// reads the bytes, the text and bytea's hex text, and Value is the text.
func checkLayeredRoundTrip(t *testing.T, k layeredKind, f *Filter) {
	t.Helper()
	raw, text := f.Bytes(), f.String()
	ft, err := ParseText(text)
	if err != nil || string(ft.Bytes()) != string(raw) || !k.is(ft) {
		t.Fatalf("ParseText: %v", err)
	}
	for _, src := range []any{raw, text, []byte(text), `\x` + hex.EncodeToString(raw)} {
		var fs Filter
		if err := fs.Scan(src); err != nil || string(fs.Bytes()) != string(raw) || !k.is(&fs) {
			t.Errorf("Scan(%T): %v", src, err)
		}
	}
	if v, err := f.Value(); err != nil || v != text {
		t.Errorf("Value: %v", err)
	}
}

// checkLayeredReadOnly: f refuses Add (of the key absent and of its
// member), AddHash, Add on a clone, and Union and Intersect with the plain
// filter and itself, with its layout's error; none of that changes it; a
// Refresher of its bytes answers for member and refuses Add too.
func checkLayeredReadOnly(t *testing.T, k layeredKind, f, plain *Filter, member, absent int64) {
	t.Helper()
	before := f.Bytes()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, k.refused) || errors.Is(err, k.other) {
			t.Errorf("%s on a %s: %v, want %v", what, k.name, err, k.refused)
		}
	}
	_, err := f.Add(absent)
	check("Add", err)
	if err != nil && !strings.Contains(err.Error(), k.says) {
		t.Errorf("the error does not say %q: %v", k.says, err)
	}
	_, err = f.Add(member) // a member: refused all the same
	check("Add of a member", err)
	_, err = f.AddHash(12345)
	check("AddHash", err)
	_, err = f.Clone().Add(absent)
	check("Add on a clone", err)
	for _, pair := range [][2]*Filter{{f, plain}, {plain, f}, {f, f}} {
		_, err = pair[0].Union(pair[1])
		check("Union", err)
		_, err = pair[0].Intersect(pair[1])
		check("Intersect", err)
	}
	if string(f.Bytes()) != string(before) {
		t.Errorf("a refused operation changed the %s", k.name)
	}
	r := NewRefresher(valueSource(before), RefresherOptions{})
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Contains(member); !ok || err != nil || !k.is(r.Filter()) {
		t.Errorf("Refresher of a %s: %v %v", k.name, ok, err)
	}
	_, err = r.Filter().Add(absent)
	check("Add on a Refresher's snapshot", err)
}

// valueSource answers every call with the same whole value.
type valueSource []byte

func (v valueSource) Changes(ctx context.Context, since string) (Change, error) {
	return Change{Value: append([]byte(nil), v...), FullRefresh: true}, nil
}

// checkLayeredEqual: the layers' inserted counters (bytes 32-39 of each
// layer), here each raised by bump, do not count; a clone is equal; f is
// never equal to a plain filter, not even its first layer.
func checkLayeredEqual(t *testing.T, k layeredKind, f *Filter, bump uint64) {
	t.Helper()
	other := f.Bytes()
	off := growHeaderSize
	for _, l := range f.grow.layers {
		binary.LittleEndian.PutUint64(other[off+32:], l.inserted+bump)
		off += l.size()
	}
	g, err := Parse(other)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Equal(g) || !g.Equal(f) || string(g.Bytes()) == string(f.Bytes()) || !f.Clone().Equal(f) {
		t.Errorf("%ss that differ only in inserted counters are not equal", k.name)
	}
	if layer0 := f.grow.layers[0]; f.Equal(layer0) || layer0.Equal(f) {
		t.Errorf("a %s equals a plain filter", k.name)
	}
}

// patchAt is a copy of b with the size low bytes of v (little-endian) at off.
func patchAt(b []byte, off int, v uint64, size int) []byte {
	b = append([]byte(nil), b...)
	var tmp [8]byte
	binary.LittleEndian.PutUint64(tmp[:], v)
	copy(b[off:off+size], tmp[:size])
	return b
}

// checkLayeredRejected: Parse rejects every value of cases as the server
// does (22P03), ParseText every text of texts (22P02), and Scan too those
// that it reads as text.
func checkLayeredRejected(t *testing.T, k layeredKind, cases map[string][]byte, texts map[string]string) {
	t.Helper()
	for name, b := range cases {
		_, err := Parse(b)
		checkRejected(t, name, err, SQLStateInvalidBinary)
	}
	for name, s := range texts {
		_, err := ParseText(s)
		checkRejected(t, name, err, SQLStateInvalidText)
		if strings.HasPrefix(s, k.prefix) { // Scan reads other prefixes as bytes
			var g Filter
			checkRejected(t, name+" (Scan)", g.Scan(s), SQLStateInvalidText)
		}
	}
}

// changedBlocks lists the 64-byte blocks of b that differ from a (of the
// same length), one run each.
func changedBlocks(a, b []byte) []run {
	var runs []run
	for i := 0; i < len(a); i += 64 {
		if string(a[i:i+64]) != string(b[i:i+64]) {
			runs = append(runs, run{uint64(i), b[i : i+64]})
		}
	}
	return runs
}
