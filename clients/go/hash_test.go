package bloomfilter

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"testing"
	"time"
)

func canon(t *testing.T, v any) ([]byte, Family) {
	t.Helper()
	b, f, err := CanonicalBytes(v)
	if err != nil {
		t.Fatalf("%#v: %v", v, err)
	}
	return b, f
}

func TestCanonicalBytes(t *testing.T) {
	type UserID int64
	s := "pointer"
	cases := []struct {
		v    any
		fam  Family
		want string // hex
	}{
		{int16(-2), FamilyInteger, "feffffffffffffff"},
		{int32(42), FamilyInteger, "2a00000000000000"},
		{int64(42), FamilyInteger, "2a00000000000000"},
		{42, FamilyInteger, "2a00000000000000"},
		{uint8(42), FamilyInteger, "2a00000000000000"},
		{UserID(42), FamilyInteger, "2a00000000000000"},
		{big.NewInt(-1), FamilyNumeric, hex.EncodeToString([]byte("-1"))},
		{1.5, FamilyFloat, "000000000000f83f"},
		{float32(1.5), FamilyFloat, "000000000000f83f"},
		{math.Copysign(0, -1), FamilyFloat, "0000000000000000"},
		{math.NaN(), FamilyFloat, "000000000000f87f"},
		{-math.NaN(), FamilyFloat, "000000000000f87f"},
		{true, FamilyBoolean, "01"},
		{false, FamilyBoolean, "00"},
		{"héllo", FamilyText, hex.EncodeToString([]byte("héllo"))},
		{&s, FamilyText, hex.EncodeToString([]byte("pointer"))},
		{Bpchar("ab  "), FamilyText, hex.EncodeToString([]byte("ab"))},
		{Bpchar("   "), FamilyText, ""},
		{[]byte{1, 2}, FamilyBytea, "0102"},
		{Enum("red"), FamilyEnum, hex.EncodeToString([]byte("red"))},
		{Date(0), FamilyDate, "0000000000000000"},
		{DateOf(time.Date(1999, 12, 31, 23, 0, 0, 0, time.UTC)), FamilyDate, "ffffffffffffffff"},
		{DateInfinity, FamilyDate, "ffffff7f00000000"},
		{DateNegInfinity, FamilyDate, "00000080ffffffff"},
		{TimestampOf(time.Date(2000, 1, 1, 0, 0, 1, 500, time.UTC)), FamilyTimestamp, "40420f0000000000"},
		{TimestampOf(time.Date(2000, 1, 1, 0, 0, 1, 1500, time.UTC)), FamilyTimestamp, "42420f0000000000"},
		{TimestampOf(time.Date(2000, 1, 1, 0, 0, 1, 2500, time.UTC)), FamilyTimestamp, "42420f0000000000"},
		{TimestampTZInfinity, FamilyTimestampTZ, "ffffffffffffff7f"},
		{time.Date(2000, 1, 1, 1, 0, 0, 0, time.FixedZone("", 3600)), FamilyTimestampTZ, "0000000000000000"},
		{sql.NullInt64{Int64: 7, Valid: true}, FamilyInteger, "0700000000000000"},
	}
	for _, c := range cases {
		b, f := canon(t, c.v)
		if f != c.fam || hex.EncodeToString(b) != c.want {
			t.Errorf("%#v: %s %x, want %s %s", c.v, f, b, c.fam, c.want)
		}
	}
	u, err := ParseUUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
	if err != nil {
		t.Fatal(err)
	}
	if b, f := canon(t, u); f != FamilyUUID || hex.EncodeToString(b) != "a0eebc999c0b4ef8bb6d6bb9bd380a11" {
		t.Errorf("uuid: %s %x", f, b)
	}
	if u.String() != "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11" {
		t.Errorf("uuid String %s", u)
	}
	for _, ok := range []string{"A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
		"a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11"} {
		if v, err := ParseUUID(ok); err != nil || v != u {
			t.Errorf("ParseUUID(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
		"{a0eebc999c0b4ef8bb6d6bb9bd380a11", "a0e-ebc999c0b4ef8bb6d6bb9bd380a11", "a0eebc99--9c0b4ef8bb6d6bb9bd380a11",
		"g0eebc999c0b4ef8bb6d6bb9bd380a11"} {
		if _, err := ParseUUID(bad); err == nil {
			t.Errorf("ParseUUID(%q) accepted", bad)
		}
	}
}

func TestNumericCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"1.50": "1.5", "1.00": "1", "0.000": "0", "-2.0": "-2", "0.5": "0.5", "-0": "0",
		"100": "100", "+7": "7", "007.0700": "7.07", "1e3": "1000", "1.5E-3": "0.0015",
		"-0.0e5": "0", "12345e-2": "123.45", ".5": "0.5", "5.": "5", " 3.10 ": "3.1",
		"NaN": "NaN", "nan": "NaN", "Infinity": "Infinity", "-inf": "-Infinity", "+Infinity": "Infinity",
		"123456789012345678901234567890.000000000000000000001": "123456789012345678901234567890.000000000000000000001",
	} {
		b, f := canon(t, Numeric(in))
		if f != FamilyNumeric || string(b) != want {
			t.Errorf("Numeric(%q) = %q, want %q", in, b, want)
		}
	}
	for _, bad := range []string{"", ".", "1e", "1.2.3", "abc", "1e+", "--1", "0x10", "1_000", "- 1"} {
		if _, _, err := CanonicalBytes(Numeric(bad)); err == nil {
			t.Errorf("Numeric(%q) accepted", bad)
		}
	}
	for r, want := range map[string]string{"3/2": "1.5", "-1/8": "-0.125", "10/1": "10", "0/5": "0"} {
		rat, _ := new(big.Rat).SetString(r)
		if b, _ := canon(t, rat); string(b) != want {
			t.Errorf("Rat %s = %q, want %q", r, b, want)
		}
	}
	if _, _, err := CanonicalBytes(big.NewRat(1, 3)); err == nil {
		t.Error("1/3 accepted as a numeric")
	}
	if b, _ := canon(t, big.NewFloat(0.25)); string(b) != "0.25" {
		t.Errorf("Float 0.25 = %q", b)
	}
}

func TestRecordEncoding(t *testing.T) {
	b, f := canon(t, Record{int32(7), "ab", Null(FamilyText)})
	want := "01" + "08000000" + "0700000000000000" + "04" + "02000000" + "6162" + "04" + "ffffffff"
	if f != FamilyRecord || hex.EncodeToString(b) != want {
		t.Errorf("record %x, want %s", b, want)
	}
	if _, _, err := CanonicalBytes(Record{1, nil}); err == nil {
		t.Error("NULL of unknown family accepted without a filter")
	}
	if _, _, err := CanonicalBytes(Record{1, Record{2}}); err == nil {
		t.Error("nested record accepted")
	}
	if _, _, err := CanonicalBytes(Record{}); err == nil {
		t.Error("empty record accepted")
	}
	if _, _, err := CanonicalBytes(Record{1, 2, 3, 4, 5, 6, 7, 8, 9}); err == nil {
		t.Error("9 fields accepted")
	}
	// with a filter, a NULL field takes the filter's field family and a
	// string adapts to the field's family
	flt, _ := New(4, 5, 0)
	if _, err := flt.Add(Record{int64(1), Numeric("2.50")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := flt.Contains(Record{1, "2.5"}); !ok || err != nil {
		t.Errorf("record with a numeric string: %v %v", ok, err)
	}
	if _, err := flt.Add(Record{nil, nil}); err != nil {
		t.Fatal(err)
	}
	if ok, err := flt.Contains([]any{nil, nil}); !ok || err != nil {
		t.Errorf("record of NULLs: %v %v", ok, err)
	}
	var fe *FamilyError
	if _, err := flt.Contains(Record{1, 2}); !errors.As(err, &fe) {
		t.Errorf("record of other field families: %v", err)
	}
}

func TestIntegerWidthsHashAlike(t *testing.T) {
	for _, seed := range []int64{0, -1, 99} {
		h64, _, _ := Hash(int64(-3), seed)
		for _, v := range []any{int8(-3), int16(-3), int32(-3), -3, Record{int16(1)}} {
			h, fam, err := Hash(v, seed)
			if _, rec := v.(Record); rec {
				continue
			}
			if err != nil || h != h64 || fam != FamilyInteger {
				t.Errorf("Hash(%T -3, %d) = %x %s %v, want %x", v, seed, h, fam, err, h64)
			}
		}
	}
	b1, _ := canon(t, int64(5))
	b2, _ := canon(t, uint64(5))
	if !bytes.Equal(b1, b2) {
		t.Error("uint64 and int64 differ")
	}
	if _, _, err := CanonicalBytes(uint64(math.MaxUint64)); err == nil {
		t.Error("uint64 beyond bigint accepted")
	}
}
