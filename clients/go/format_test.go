package bloomfilter

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// validBytes is a small filter of integers with a few values added.
func validFilter(t testing.TB) *Filter {
	f, err := New(3, 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := f.Add(int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func wantFormatError(t *testing.T, what string, err error, state string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s: got %v, want a FormatError", what, err)
	} else if fe.SQLState != state {
		t.Errorf("%s: SQLSTATE %s, want %s", what, fe.SQLState, state)
	}
}

func TestParseRoundTrip(t *testing.T) {
	f := validFilter(t)
	b := f.Bytes()
	if len(b) != 64+3*64 {
		t.Fatalf("length %d", len(b))
	}
	g, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Equal(g) || g.Inserted() != f.Inserted() || string(g.Bytes()) != string(b) {
		t.Error("Parse(Bytes()) differs")
	}
	h, err := ParseText(f.String())
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Bytes()) != string(b) {
		t.Error("ParseText(String()) differs")
	}
	b[64] ^= 1 // Parse copied: g must not change
	if g.Bytes()[64] == b[64] {
		t.Error("Parse did not copy its input")
	}
}

func TestParseRejects(t *testing.T) {
	base := validFilter(t).Bytes()
	le := binary.LittleEndian
	type mut func(b []byte) []byte
	set8 := func(off int, v byte) mut { return func(b []byte) []byte { b[off] = v; return b } }
	set16 := func(off int, v uint16) mut { return func(b []byte) []byte { le.PutUint16(b[off:], v); return b } }
	set32 := func(off int, v uint32) mut { return func(b []byte) []byte { le.PutUint32(b[off:], v); return b } }
	set64 := func(off int, v uint64) mut { return func(b []byte) []byte { le.PutUint64(b[off:], v); return b } }
	cases := map[string]mut{
		"empty":             func(b []byte) []byte { return nil },
		"63 bytes":          func(b []byte) []byte { return b[:63] },
		"header only":       func(b []byte) []byte { return b[:64] },
		"magic":             set8(0, 'X'),
		"version 0":         set16(4, 0),
		"version 2":         set16(4, 2),
		"layout 2":          set8(6, 2),
		"hash function 0":   set8(7, 0),
		"family 14":         set8(8, 14),
		"unknown flag":      set8(9, 2),
		"portable flag":     set8(9, 1),
		"nhashes 0":         set16(10, 0),
		"nhashes 65":        set16(10, 65),
		"detail not 0":      set32(12, 1),
		"nblocks 0":         set64(24, 0),
		"nblocks 2":         set64(24, 2),
		"nblocks 2^23+1":    set64(24, 1<<23+1),
		"nblocks huge":      set64(24, 1<<62),
		"capacity < 0":      set64(40, uint64(math.MaxUint64)),
		"fpr 1":             set64(48, math.Float64bits(1)),
		"fpr -0.5":          set64(48, math.Float64bits(-0.5)),
		"fpr NaN":           set64(48, math.Float64bits(math.NaN())),
		"fpr +Inf":          set64(48, math.Float64bits(math.Inf(1))),
		"reserved":          set64(56, 1),
		"trailing byte":     func(b []byte) []byte { return append(b, 0) },
		"missing byte":      func(b []byte) []byte { return b[:len(b)-1] },
		"none but inserted": func(b []byte) []byte { b[8] = 0; return b },
		"inserted 2^63":     set64(32, 1<<63),
		"record detail 0":   func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0); return b },
		"record gap":        func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0x401); return b },
		"record of record":  func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0xC1); return b },
		"record field 14":   func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0xE1); return b },
		"record 9 nibbles?": func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0x0); return b },
		"record other, portable flag": func(b []byte) []byte {
			b[8] = 12
			le.PutUint32(b[12:], 0xD1)
			return b
		},
		"other OID 0": func(b []byte) []byte { b[8] = 13; b[9] = 1; le.PutUint32(b[12:], 0); return b },
		"other, portable flag": func(b []byte) []byte {
			b[8] = 13
			le.PutUint32(b[12:], 25)
			return b
		},
	}
	for name, m := range cases {
		b := m(append([]byte(nil), base...))
		_, err := Parse(b)
		wantFormatError(t, name, err, SQLStateInvalidBinary)
	}
	// and what the server accepts
	ok := map[string]mut{
		"fpr -0":            set64(48, math.Float64bits(math.Copysign(0, -1))),
		"fpr 0.999":         set64(48, math.Float64bits(0.999)),
		"capacity max":      set64(40, math.MaxInt64),
		"seed -1":           set64(16, math.MaxUint64),
		"nhashes 64":        set16(10, 64),
		"inserted max":      set64(32, math.MaxInt64),
		"family 0, empty":   func(b []byte) []byte { b[8] = 0; le.PutUint64(b[32:], 0); return b },
		"record 8 fields":   func(b []byte) []byte { b[8] = 12; le.PutUint32(b[12:], 0xBA987654); return b },
		"record with other": func(b []byte) []byte { b[8] = 12; b[9] = 1; le.PutUint32(b[12:], 0xD1); return b },
		"other":             func(b []byte) []byte { b[8] = 13; b[9] = 1; le.PutUint32(b[12:], 869); return b },
	}
	for name, m := range ok {
		if _, err := Parse(m(append([]byte(nil), base...))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTextForm(t *testing.T) {
	f, _ := New(1, 3, -5)
	f.Add("x")
	s := f.String()
	want := "bloomfilter:1 layout=blocked hash=xxh3_64 family=text nhashes=3 nbits=512 seed=-5 capacity=0 fpr=0 inserted=1 bits="
	if !strings.HasPrefix(s, want) || len(s) != len(want)+88 || !strings.HasSuffix(s, "==") {
		t.Fatalf("text form %q", s)
	}
	bits := s[len(want):]
	head := func(fam, rest string) string {
		return "bloomfilter:1 layout=blocked hash=xxh3_64 family=" + fam + " nhashes=3 nbits=512 seed=-5 capacity=0 " + rest
	}
	okText := head("text", "fpr=0 inserted=1 bits="+bits)
	if g, err := ParseText(okText); err != nil || !g.Equal(f) {
		t.Fatalf("ParseText: %v", err)
	}
	accepted := []string{
		strings.Replace(okText, "fpr=0 ", "fpr=1e-05 ", 1),
		strings.Replace(okText, "fpr=0 ", "fpr=-0 ", 1),
		strings.Replace(okText, "fpr=0 ", "fpr=0.25 ", 1),
		strings.Replace(okText, "fpr=0 ", "fpr=5e-324 ", 1),
		head("record(integer,other)", "fpr=0 inserted=1 bits="+bits),
		head("none", "fpr=0 inserted=0 bits="+bits),
	}
	for _, s := range accepted {
		if _, err := ParseText(s); err != nil {
			t.Errorf("%q: %v", s[:120], err)
		}
	}
	rejected := map[string]string{
		// one text per filter: other spellings of the same numbers
		"nhashes 003":      strings.Replace(okText, "nhashes=3", "nhashes=003", 1),
		"seed -0005":       strings.Replace(okText, "seed=-5", "seed=-0005", 1),
		"capacity -0":      strings.Replace(okText, "capacity=0", "capacity=-0", 1),
		"fpr hex":          strings.Replace(okText, "fpr=0 ", "fpr=0x1p-7 ", 1),
		"fpr tab":          strings.Replace(okText, "fpr=0 ", "fpr=\t.5 ", 1),
		"fpr +0.25":        strings.Replace(okText, "fpr=0 ", "fpr=+0.25 ", 1),
		"fpr 0.":           strings.Replace(okText, "fpr=0 ", "fpr=0. ", 1),
		"fpr 1e-5":         strings.Replace(okText, "fpr=0 ", "fpr=1e-5 ", 1),
		"fpr 0.00001":      strings.Replace(okText, "fpr=0 ", "fpr=0.00001 ", 1),
		"record(text,)":    head("record(text,)", "fpr=0 inserted=1 bits="+bits),
		"inserted 2^63":    strings.Replace(okText, "inserted=1", "inserted=9223372036854775808", 1),
		"prefix":           "bloomfilter:2" + okText[13:],
		"double space":     strings.Replace(okText, " layout", "  layout", 1),
		"layout":           strings.Replace(okText, "blocked", "classic", 1),
		"hash":             strings.Replace(okText, "xxh3_64", "xxh64", 1),
		"family":           head("texts", "fpr=0 inserted=1 bits="+bits),
		"family record":    head("record", "fpr=0 inserted=1 bits="+bits),
		"record()":         head("record()", "fpr=0 inserted=1 bits="+bits),
		"record(,text)":    head("record(,text)", "fpr=0 inserted=1 bits="+bits),
		"record(none)":     head("record(none)", "fpr=0 inserted=1 bits="+bits),
		"record(record)":   head("record(record(text))", "fpr=0 inserted=1 bits="+bits),
		"record 9":         head("record(text,text,text,text,text,text,text,text,text)", "fpr=0 inserted=1 bits="+bits),
		"text()":           head("text()", "fpr=0 inserted=1 bits="+bits),
		"none inserted":    head("none", "fpr=0 inserted=1 bits="+bits),
		"nhashes 0":        strings.Replace(okText, "nhashes=3", "nhashes=0", 1),
		"nhashes 65":       strings.Replace(okText, "nhashes=3", "nhashes=65", 1),
		"nhashes +3":       strings.Replace(okText, "nhashes=3", "nhashes=+3", 1),
		"nbits 511":        strings.Replace(okText, "nbits=512", "nbits=511", 1),
		"nbits 1024":       strings.Replace(okText, "nbits=512", "nbits=1024", 1),
		"nbits 0":          strings.Replace(okText, "nbits=512", "nbits=0", 1),
		"seed overflow":    strings.Replace(okText, "seed=-5", "seed=9223372036854775808", 1),
		"seed empty":       strings.Replace(okText, "seed=-5", "seed=", 1),
		"seed 21 digits":   strings.Replace(okText, "seed=-5", "seed=000000000000000000005", 1),
		"capacity -1":      strings.Replace(okText, "capacity=0", "capacity=-1", 1),
		"fpr 1":            strings.Replace(okText, "fpr=0 ", "fpr=1 ", 1),
		"fpr empty":        strings.Replace(okText, "fpr=0 ", "fpr= ", 1),
		"fpr nan":          strings.Replace(okText, "fpr=0 ", "fpr=nan ", 1),
		"fpr -0.1":         strings.Replace(okText, "fpr=0 ", "fpr=-0.1 ", 1),
		"fpr 1e":           strings.Replace(okText, "fpr=0 ", "fpr=1e ", 1),
		"fpr underflow":    strings.Replace(okText, "fpr=0 ", "fpr=1e-400 ", 1),
		"fpr trailing tab": strings.Replace(okText, "fpr=0 ", "fpr=0\t ", 1),
		"inserted -1":      strings.Replace(okText, "inserted=1", "inserted=-1", 1),
		"order":            strings.Replace(okText, "seed=-5 capacity=0", "capacity=0 seed=-5", 1),
		"missing bits":     strings.Replace(okText, " bits="+bits, "", 1),
		"trailing space":   okText + " ",
		"trailing token":   okText + " x=1",
		"short bits":       okText[:len(okText)-4],
		"bad base64 char":  okText[:len(okText)-8] + "!" + okText[len(okText)-7:],
		"url base64":       strings.Replace(okText, "bits=", "bits=-", 1)[:len(okText)],
		"pad bits":         okText[:len(okText)-3] + "B==",
		"newline in bits":  okText[:len(okText)-6] + "\n" + okText[len(okText)-5:],
		"NUL":              okText[:20] + "\x00" + okText[21:],
	}
	for name, s := range rejected {
		_, err := ParseText(s)
		wantFormatError(t, name, err, SQLStateInvalidText)
	}
	if _, err := ParseText(head("other(pg_catalog.inet)", "fpr=0 inserted=1 bits="+bits)); !errors.Is(err, ErrNonPortable) {
		t.Errorf("family other: %v", err)
	}
}

func TestFormatFPR(t *testing.T) {
	for x, want := range map[float64]string{0: "0", 0.01: "0.01", 1e-5: "1e-05",
		0.30000000000000004: "0.30000000000000004", 0.0001: "0.0001", 0.5: "0.5",
		math.Copysign(0, -1): "-0", 1.5e-7: "1.5e-07", 5e-324: "5e-324"} {
		if got := formatFPR(x); got != want {
			t.Errorf("formatFPR(%v) = %q, want %q", x, got, want)
		}
	}
}
