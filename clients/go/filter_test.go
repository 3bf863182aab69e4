package bloomfilter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"
)

func TestAddContains(t *testing.T) {
	f, _ := New(200, 7, 3) // 102 400 bits for 10 000 values: about 1 %
	for i := 0; i < 10000; i++ {
		if _, err := f.Add(fmt.Sprint("key-", i)); err != nil {
			t.Fatal(err)
		}
	}
	if f.Family() != FamilyText || f.Inserted() == 0 || f.Inserted() > 10000 {
		t.Fatalf("family %s inserted %d", f.Family(), f.Inserted())
	}
	for i := 0; i < 10000; i++ {
		if ok, err := f.Contains(fmt.Sprint("key-", i)); !ok || err != nil {
			t.Fatalf("false negative %d: %v", i, err)
		}
	}
	fp := 0
	for i := 0; i < 100000; i++ {
		if ok, _ := f.Contains(fmt.Sprint("other-", i)); ok {
			fp++
		}
	}
	rate, measured := f.FPR(), float64(fp)/100000
	if measured > 1.3*rate+0.001 || measured < rate/1.3-0.001 {
		t.Errorf("measured rate %.4f, FPR() %.4f", measured, rate)
	}
	info := f.Info()
	if math.Abs(info.EstimatedCardinality-10000)/10000 > 0.05 {
		t.Errorf("cardinality %.0f", info.EstimatedCardinality)
	}
	if info.Bytes != 64+200*64 || info.NBits != 200*512 || info.Saturated != (info.FillRatio > 0.5) {
		t.Errorf("info %+v", info)
	}
	var fe *FamilyError
	if _, err := f.Contains(42); !errors.As(err, &fe) {
		t.Errorf("integer against text filter: %v", err)
	}
	if ok, err := f.Contains(nil); ok || err != nil {
		t.Errorf("NULL: %v %v", ok, err)
	}
}

func TestEmptyFilter(t *testing.T) {
	f, _ := New(1, 1, 0)
	if ok, err := f.Contains("x"); ok || err != nil {
		t.Error("empty filter answers", ok, err)
	}
	if ok, err := f.ContainsInt64(1); ok || err != nil {
		t.Error("empty filter answers", ok, err)
	}
	if f.FPR() != 0 || f.Cardinality() != 0 {
		t.Error("empty filter estimates")
	}
}

func TestContainsInt64MatchesContains(t *testing.T) {
	f, _ := New(50, 9, -7)
	for i := int64(0); i < 3000; i += 3 {
		f.Add(int32(i))
	}
	for i := int64(0); i < 3000; i++ {
		a, _ := f.ContainsInt64(i)
		b, _ := f.Contains(int16(i))
		c, _ := f.Contains(i)
		if a != b || b != c || i%3 == 0 && !a {
			t.Fatalf("%d: %v %v %v", i, a, b, c)
		}
	}
	g, _ := New(1, 1, 0)
	g.Add("x")
	var fe *FamilyError
	if _, err := g.ContainsInt64(1); !errors.As(err, &fe) {
		t.Errorf("ContainsInt64 on text: %v", err)
	}
}

func TestSetOps(t *testing.T) {
	a, _ := New(20, 5, 1)
	b, _ := New(20, 5, 1)
	for i := 0; i < 500; i++ {
		a.Add(int64(i))
		b.Add(int64(i + 250))
	}
	u, err := a.Union(b)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := a.Intersect(b)
	for i := int64(0); i < 750; i++ {
		if ok, _ := u.Contains(i); !ok {
			t.Fatalf("union misses %d", i)
		}
		if ok, _ := x.Contains(i); !ok && i >= 250 && i < 500 {
			t.Fatalf("intersection misses %d", i)
		}
	}
	if u.Inserted() != insertedEstimate(popcount(u.bits), 20, 5) || x.Inserted() > a.Inserted() {
		t.Errorf("inserted: union %d intersection %d", u.Inserted(), x.Inserted())
	}
	if u2, _ := b.Union(a); !u2.Equal(u) {
		t.Error("union is not commutative")
	}
	e, _ := New(20, 5, 1)
	if r, _ := e.Union(a); r.Family() != FamilyInteger || !r.Equal(a) {
		t.Error("empty ∪ a != a")
	}
	if r, _ := e.Union(e); r.Inserted() != 0 || r.Family() != FamilyNone {
		t.Error("empty ∪ empty")
	}
	for name, g := range map[string]func() *Filter{
		"nbits":   func() *Filter { f, _ := New(21, 5, 1); return f },
		"nhashes": func() *Filter { f, _ := New(20, 6, 1); return f },
		"seed":    func() *Filter { f, _ := New(20, 5, 2); return f },
		"family":  func() *Filter { f, _ := New(20, 5, 1); f.Add("s"); return f },
	} {
		var ie *IncompatibleError
		if _, err := a.Union(g()); !errors.As(err, &ie) || ie.Param != name {
			t.Errorf("%s: %v", name, err)
		}
	}
	c := a.Clone()
	c.inserted++
	if !c.Equal(a) {
		t.Error("Equal looks at inserted")
	}
	c.bits[0] ^= 1
	if c.Equal(a) {
		t.Error("Equal ignores the bits")
	}
}

func TestReadOnly(t *testing.T) {
	f := validFilter(t)
	f.readOnly = true
	if _, err := f.Add(int64(1)); !errors.Is(err, ErrReadOnly) {
		t.Errorf("Add on read-only: %v", err)
	}
	if _, err := f.Clone().Add(int64(1)); err != nil {
		t.Errorf("Add on a clone: %v", err)
	}
}

// The family detail of family other never names a type of a portable
// family (docs/FORMAT.md §3.1): the server refuses such a value, and so
// does Parse, for every built-in OID of one; a type it cannot know is
// accepted.
func TestOtherPortableOID(t *testing.T) {
	b := validFilter(t).Bytes()
	b[8], b[9] = 13, 1
	for oid := range portableTypeOIDs {
		binary.LittleEndian.PutUint32(b[12:], oid)
		var fe *FormatError
		if _, err := Parse(b); !errors.As(err, &fe) || fe.SQLState != SQLStateInvalidBinary {
			t.Errorf("family other with OID %d: %v", oid, err)
		}
	}
	for _, oid := range []uint32{869, 1007, 16384, 4000000000} {
		binary.LittleEndian.PutUint32(b[12:], oid)
		if _, err := Parse(b); err != nil {
			t.Errorf("family other with OID %d: %v", oid, err)
		}
	}
}

func TestNonPortable(t *testing.T) {
	b := validFilter(t).Bytes()
	b[8], b[9], b[12], b[13] = 13, 1, 0x65, 0x03 // inet, OID 869
	f, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Portable() {
		t.Error("family other is portable")
	}
	for _, v := range []any{int64(1), "x", 1} {
		if _, err := f.Contains(v); !errors.Is(err, ErrNonPortable) {
			t.Errorf("Contains(%#v): %v", v, err)
		}
	}
	b[12], b[13] = 0xD1, 0 // a record (integer, other)
	b[8] = 12
	if f, err = Parse(b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Contains(Record{1, 2}); !errors.Is(err, ErrNonPortable) {
		t.Errorf("record with an other field: %v", err)
	}
}

func TestScan(t *testing.T) {
	f := validFilter(t)
	for name, src := range map[string]any{
		"bytes":     f.Bytes(),
		"text":      f.String(),
		"textbytes": []byte(f.String()),
		"hex":       []byte(fmt.Sprintf(`\x%x`, f.Bytes())),
	} {
		var g Filter
		if err := g.Scan(src); err != nil || !g.Equal(f) {
			t.Errorf("%s: %v", name, err)
		}
	}
	var g Filter
	if err := g.Scan(nil); err == nil {
		t.Error("Scan(nil) accepted")
	}
	if err := g.Scan([]byte("BLMF")); err == nil {
		t.Error("Scan of 4 bytes accepted")
	}
	if v, err := f.Value(); err != nil || v != f.String() {
		t.Error("Value is not the text form")
	}
}
