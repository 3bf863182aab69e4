package bloomfilter

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"
	"time"
)

// The windows of the conformance file: bytes and text parse to the same
// window, every probe answers as the server did (at the microsecond, and
// as a time.Time), every malformed window is refused.
func TestConformanceWindows(t *testing.T) {
	c := loadConformance(t)
	if c == nil {
		return
	}
	probes := 0
	for _, cw := range c.Windows {
		raw, _ := base64.StdEncoding.DecodeString(cw.Bytes)
		w, err := ParseWindow(raw)
		if err != nil {
			t.Errorf("%s: ParseWindow: %v", cw.Name, err)
			continue
		}
		if string(w.Bytes()) != string(raw) || w.String() != cw.Text {
			t.Errorf("%s: Bytes() or String() differ from the server's", cw.Name)
		}
		if wt, err := ParseWindowText(cw.Text); err != nil || string(wt.Bytes()) != string(raw) {
			t.Errorf("%s: ParseWindowText: %v", cw.Name, err)
		}
		for i, p := range cw.Probes {
			v, err := keyValue(p.Key, c.Types)
			if err != nil {
				t.Fatalf("%s probe %d: %v", cw.Name, i, err)
			}
			at, _ := strconv.ParseInt(p.At, 10, 64)
			got, err := w.ContainsAt(v, at)
			if err != nil || got != p.Expect {
				t.Errorf("%s probe %d (%+v at %d): got %v, %v; server %v", cw.Name, i, p.Key, at, got, err, p.Expect)
			}
			tm := time.Unix(pgEpochUnix, 0).Add(time.Duration(at) * time.Microsecond)
			if got2, _ := w.Contains(v, tm); got2 != got {
				t.Errorf("%s probe %d: Contains(time.Time) %v, ContainsAt %v", cw.Name, i, got2, got)
			}
			probes++
		}
	}
	for _, m := range c.MalformedWindows {
		raw, _ := base64.StdEncoding.DecodeString(m.Bytes)
		var fe *FormatError
		if _, err := ParseWindow(raw); !errors.As(err, &fe) {
			t.Errorf("malformed window %q: got %v", m.Name, err)
		}
	}
	t.Logf("%d windows, %d probes agree; %d malformed windows refused", len(c.Windows), probes, len(c.MalformedWindows))
}

func confWindow(t *testing.T, name string) []byte {
	c := loadConformance(t)
	if c == nil {
		t.Skip("no conformance file")
	}
	for _, cw := range c.Windows {
		if cw.Name == name {
			raw, _ := base64.StdEncoding.DecodeString(cw.Bytes)
			return raw
		}
	}
	t.Fatalf("no window %q in the conformance file", name)
	return nil
}

// emptied returns the window of the same parameters before any add.
func emptied(t *testing.T, raw []byte) *Window {
	b := append([]byte(nil), raw...)
	le := binary.LittleEndian
	n := int(le.Uint16(b[6:]))
	le.PutUint64(b[16:], 1<<63) // newest: none
	le.PutUint64(b[24:], 0)
	size := (len(b) - headerSize) / (n + 1)
	for j := 0; j <= n; j++ {
		o := headerSize + j*size
		b[o+8], b[o+9] = 0, 0
		le.PutUint32(b[o+12:], 0)
		le.PutUint64(b[o+32:], 0)
		zeroBytes(b[o+headerSize : o+size])
	}
	w, err := ParseWindow(b)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

var t0 = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // the generator's T0

func TestWindowAddsGiveTheServersBytes(t *testing.T) {
	raw := confWindow(t, "4 hours in 4 slices, int8 keys, spread over the window")
	w := emptied(t, raw)
	for k := int64(1); k <= 40; k++ {
		if _, err := w.Add(k, t0.Add(time.Duration(7*k)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if string(w.Bytes()) != string(raw) {
		t.Error("adds at the server's times give other bytes than the server's")
	}
	raw = confWindow(t, "7 days in 7 slices, text keys, an idle gap and an ignored add")
	w = emptied(t, raw)
	for k := 1; k <= 20; k++ {
		w.Add("seen-"+strconv.Itoa(k), t0.Add(time.Duration(5*k)*time.Hour))
	}
	w.Add("late", t0.Add(100*24*time.Hour))
	if changed, _ := w.Add("too-old", t0.Add(24*time.Hour)); changed || w.Info().Ignored != 1 {
		t.Error("an add older than the oldest slice was not ignored")
	}
	if string(w.Bytes()) != string(raw) {
		t.Error("adds with an idle gap give other bytes than the server's")
	}
}

// §7.3: a key added at t is found until t + W (excluded), gone from
// t + W + S on; slices before 2000 use floor division.
func TestWindowBoundaries(t *testing.T) {
	w := emptied(t, confWindow(t, "4 hours in 4 slices, int8 keys, spread over the window"))
	const hour = int64(3600 * 1000000)
	at := Micros(t0) + 25*60*1000000
	w.AddAt(int64(123456789), at)
	for _, dt := range []int64{0, 1, hour, 4*hour - 1} {
		if ok, _ := w.ContainsAt(int64(123456789), at+dt); !ok {
			t.Errorf("not found at t + %d", dt)
		}
	}
	for _, dt := range []int64{5 * hour, 720 * hour, -hour} {
		if ok, _ := w.ContainsAt(int64(123456789), at+dt); ok {
			t.Errorf("found at t + %d", dt)
		}
	}
	w = emptied(t, confWindow(t, "1 minute in 1 slice, times before 2000"))
	const min = int64(60 * 1000000)
	w.AddAt(int64(7), -1)
	if info := w.Info(); info.Newest != -1 {
		t.Errorf("time -1 went to slice %d, not -1", info.Newest)
	}
	for _, x := range []struct {
		at   int64
		want bool
	}{{-min, true}, {-1, true}, {min - 1, true}, {min, false}} {
		if ok, _ := w.ContainsAt(int64(7), x.at); ok != x.want {
			t.Errorf("at %d: %v", x.at, ok)
		}
	}
	if Micros(time.Date(1999, 12, 31, 23, 59, 59, 999999000, time.UTC)) != -1 {
		t.Error("Micros is wrong before 2000")
	}
}

func TestWindowText(t *testing.T) {
	c := loadConformance(t)
	if c == nil {
		return
	}
	for _, cw := range c.Windows {
		var w Window
		if err := w.Scan(cw.Text); err != nil || w.String() != cw.Text {
			t.Errorf("%s: Scan of the text form: %v", cw.Name, err)
		}
	}
	text := c.Windows[len(c.Windows)-1].Text
	for _, bad := range []string{
		text[:len(text)-1], "bloomwindow:2" + text[len("bloomwindow:1"):],
		text + " slot=x",
	} {
		var fe *FormatError
		if _, err := ParseWindowText(bad); !errors.As(err, &fe) {
			t.Errorf("%.40q...: got %v", bad, err)
		}
	}
}
