// The Window type: a sliding-window filter (bloomwindow, docs/FORMAT.md
// §7), parsed and checked by the same rules as the server, and its lookup
// and add at a time.

package bloomfilter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

const (
	noSlice       = math.MinInt64
	maxSlices     = 1024
	maxSpanMicros = 1 << 61
	// the range of timestamptz, microseconds since 2000-01-01 (end excluded)
	timeMin          = -211813488000000000
	timeEnd          = 9223371331200000000
	windowTextPrefix = "bloomwindow:1"
)

var windowMagic = [4]byte{'B', 'L', 'M', 'W'}

// Window is a sliding-window filter: it remembers each key for a window
// of N slices of S microseconds; slice i covers [i·S, (i+1)·S)
// microseconds since 2000-01-01 UTC and lives in slot i mod (N+1), a
// plain Filter.  What it answers depends only on its bytes and the time
// asked.  Safe for concurrent readers; Add needs exclusive access.
type Window struct {
	n        int64 // slices N
	s        int64 // slice width, microseconds
	newest   int64 // newest slice stored, noSlice while empty
	ignored  uint64
	capacity int64
	fpr      float64
	slots    []*Filter
}

// WindowInfo describes a window's parameters and state.
type WindowInfo struct {
	Slices, SliceMicros, WindowMicros int64
	Capacity                          int64
	TargetFPR                         float64
	Newest                            int64 // slice index; valid if HasNewest
	HasNewest                         bool
	Ignored                           uint64
	Family                            Family
}

// Micros converts a time to microseconds since 2000-01-01 00:00:00 UTC,
// the unit of the format, rounding nanoseconds as the server rounds a
// timestamptz (see TimestampTZOf).
func Micros(t time.Time) int64 {
	return int64(TimestampTZOf(t))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// ParseWindow reads a window from its bytes (window::bytea or a binary
// result), rejecting exactly what the server rejects (*FormatError,
// SQLSTATE 22P03).  The data is copied.
func ParseWindow(data []byte) (*Window, error) {
	if len(data) < 2*headerSize {
		return nil, binaryError("the window is %d bytes, shorter than its header and a slot's", len(data))
	}
	if [4]byte{data[0], data[1], data[2], data[3]} != windowMagic {
		return nil, binaryError("the value does not start with the magic bytes \"BLMW\"")
	}
	le := binary.LittleEndian
	w := &Window{
		n:        int64(le.Uint16(data[6:])),
		s:        int64(le.Uint64(data[8:])),
		newest:   int64(le.Uint64(data[16:])),
		ignored:  le.Uint64(data[24:]),
		capacity: int64(le.Uint64(data[32:])),
		fpr:      math.Float64frombits(le.Uint64(data[40:])),
	}
	nblocks := le.Uint64(data[headerSize+24:])
	switch {
	case le.Uint16(data[4:]) != version:
		return nil, binaryError("window format version %d is not 1", le.Uint16(data[4:]))
	case w.n < 1 || w.n > maxSlices:
		return nil, binaryError("%d slices is not between 1 and 1024", w.n)
	case w.s < 1 || w.s > maxSpanMicros/w.n:
		return nil, binaryError("slice width %d microseconds is out of range", w.s)
	case w.newest != noSlice && (w.newest < floorDiv(timeMin, w.s) || w.newest > floorDiv(timeEnd-1, w.s)):
		return nil, binaryError("newest slice %d lies outside the range of timestamptz", w.newest)
	case w.ignored > maxInserted:
		return nil, binaryError("ignored %d is 2^63 or more", w.ignored)
	case !bytes.Equal(data[48:64], make([]byte, 16)):
		return nil, binaryError("the reserved header bytes are not zero")
	case w.capacity < 1:
		return nil, binaryError("capacity %d is not positive", w.capacity)
	case !(w.fpr > 0 && w.fpr < 1):
		return nil, binaryError("target fpr %v is not in (0, 1)", w.fpr)
	case nblocks < 1 || nblocks > maxBlocks || uint64(w.n+1)*nblocks > maxBlocks:
		return nil, binaryError("slots of %d blocks are too large for %d slices", nblocks, w.n)
	}
	size := headerSize + blockBytes*nblocks
	if uint64(len(data)) != headerSize+uint64(w.n+1)*size {
		return nil, binaryError("the window is %d bytes; %d slots of %d blocks need %d",
			len(data), w.n+1, nblocks, headerSize+uint64(w.n+1)*size)
	}
	first := data[headerSize : 2*headerSize]
	for j := int64(0); j <= w.n; j++ {
		raw := data[headerSize+uint64(j)*size : headerSize+uint64(j+1)*size]
		f, err := parsePlain(raw, true)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(raw[:32], first[:32]) || !bytes.Equal(raw[40:64], first[40:64]) {
			return nil, binaryError("slot %d differs from slot 0 in more than inserted", j)
		}
		w.slots = append(w.slots, f)
	}
	s0 := w.slots[0]
	switch {
	case s0.capacity != w.capacity || s0.fpr != w.fpr/float64(w.n+1):
		return nil, binaryError("slot 0 is not sized for the window's capacity and fpr")
	case (s0.family == FamilyNone) != (w.newest == noSlice):
		return nil, binaryError("the slots' element family disagrees with the newest slice")
	case w.newest == noSlice && w.ignored != 0:
		return nil, binaryError("an empty window counts %d ignored adds", w.ignored)
	}
	return w, nil
}

// ParseWindowText reads the text form (§7.4), rejecting what the server's
// input function rejects (*FormatError, SQLSTATE 22P02).
func ParseWindowText(s string) (*Window, error) {
	parts := strings.Split(s, " slot=")
	toks := strings.Split(parts[0], " ")
	keys := []string{"slices", "slice_us", "capacity", "fpr", "newest", "ignored"}
	if len(toks) != len(keys)+1 || toks[0] != windowTextPrefix {
		return nil, textError("the value is not the text form of a bloomwindow (%q ...)", windowTextPrefix)
	}
	vals := make([]string, len(keys))
	for i, k := range keys {
		if !strings.HasPrefix(toks[i+1], k+"=") {
			return nil, textError("expected %q in the text form", k+"=")
		}
		vals[i] = toks[i+1][len(k)+1:]
	}
	n, err1 := strconv.ParseUint(vals[0], 10, 16)
	sw, err2 := strconv.ParseInt(vals[1], 10, 64)
	capacity, err3 := strconv.ParseInt(vals[2], 10, 64)
	fpr, err4 := strconv.ParseFloat(vals[3], 64)
	newest, err5 := int64(noSlice), error(nil)
	if vals[4] != "none" {
		newest, err5 = strconv.ParseInt(vals[4], 10, 64)
	}
	ignored, err6 := strconv.ParseUint(vals[5], 10, 64)
	for _, err := range []error{err1, err2, err3, err4, err5, err6} {
		if err != nil {
			return nil, textError("bad number in the text form of a bloomwindow: %v", err)
		}
	}
	raw := make([]byte, headerSize)
	putWindowHeader(raw, int64(n), sw, newest, ignored, capacity, fpr)
	for _, st := range parts[1:] {
		f, err := parsePlainText(st)
		if err != nil {
			return nil, err
		}
		raw = append(raw, f.Bytes()...)
	}
	w, err := ParseWindow(raw)
	if err != nil {
		return nil, asTextError(err)
	}
	// one text per window: other spellings of the same numbers are refused
	if w.String() != s {
		return nil, textError("not the text that bloomwindow output prints for this window")
	}
	return w, nil
}

func putWindowHeader(b []byte, n, s, newest int64, ignored uint64, capacity int64, fpr float64) {
	le := binary.LittleEndian
	copy(b, windowMagic[:])
	le.PutUint16(b[4:], version)
	le.PutUint16(b[6:], uint16(n))
	le.PutUint64(b[8:], uint64(s))
	le.PutUint64(b[16:], uint64(newest))
	le.PutUint64(b[24:], ignored)
	le.PutUint64(b[32:], uint64(capacity))
	le.PutUint64(b[40:], math.Float64bits(fpr))
}

// Bytes returns the window's bytes, as window::bytea gives them.
func (w *Window) Bytes() []byte {
	out := make([]byte, headerSize)
	putWindowHeader(out, w.n, w.s, w.newest, w.ignored, w.capacity, w.fpr)
	for _, f := range w.slots {
		out = append(out, f.Bytes()...)
	}
	return out
}

// String returns the text form (§7.4).
func (w *Window) String() string {
	var b strings.Builder
	newest := "none"
	if w.newest != noSlice {
		newest = strconv.FormatInt(w.newest, 10)
	}
	fmt.Fprintf(&b, "%s slices=%d slice_us=%d capacity=%d fpr=%s newest=%s ignored=%d",
		windowTextPrefix, w.n, w.s, w.capacity, formatFPR(w.fpr), newest, w.ignored)
	for _, f := range w.slots {
		b.WriteString(" slot=")
		b.WriteString(f.String())
	}
	return b.String()
}

func (w *Window) slot(i int64) *Filter {
	m := i % (w.n + 1)
	if m < 0 {
		m += w.n + 1
	}
	return w.slots[m]
}

// Contains reports whether v may have been added in the window that ends
// at time at (§7.2-7.3): false means it definitely was not.
func (w *Window) Contains(v any, at time.Time) (bool, error) {
	return w.ContainsAt(v, Micros(at))
}

// ContainsAt is Contains with the time in microseconds since 2000-01-01 UTC.
func (w *Window) ContainsAt(v any, at int64) (bool, error) {
	if w.newest == noSlice {
		return false, nil
	}
	h, _, null, err := w.slots[0].hashFor(v, false)
	if err != nil || null {
		return false, err
	}
	i := floorDiv(at, w.s)
	lo, hi := i, w.newest
	if w.newest > i {
		lo, hi = w.newest, i
	}
	for s := lo - w.n; s <= hi; s++ {
		if w.slot(s).ContainsHash(h) {
			return true, nil
		}
	}
	return false, nil
}

// Add adds v at time at (as bf_window_add): true if a bit changed.  A time
// older than the oldest slice kept is ignored and counted, never stored
// in another slice.
func (w *Window) Add(v any, at time.Time) (bool, error) {
	return w.AddAt(v, Micros(at))
}

// AddAt is Add with the time in microseconds since 2000-01-01 UTC.
func (w *Window) AddAt(v any, at int64) (bool, error) {
	s0 := w.slots[0]
	h, e, null, err := s0.hashFor(v, true)
	if err != nil || null {
		return false, err
	}
	if at < timeMin || at >= timeEnd {
		return false, fmt.Errorf("bloomfilter: time %d is outside the range of timestamptz", at)
	}
	i := floorDiv(at, w.s)
	switch {
	case w.newest == noSlice || i > w.newest:
		lo := i - w.n
		if w.newest != noSlice && w.newest+1 > lo {
			lo = w.newest + 1
		}
		for s := lo; s <= i; s++ {
			f := w.slot(s)
			zeroBytes(f.bits)
			f.inserted = 0
		}
		w.newest = i
	case i < w.newest-w.n:
		if w.ignored < maxInserted {
			w.ignored++
		}
		return false, nil
	}
	if s0.family == FamilyNone {
		for _, f := range w.slots {
			f.family, f.detail = e.family, e.detail
		}
	}
	return w.slot(i).addHash(h), nil
}

func zeroBytes(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

// Info returns the window's parameters and state.
func (w *Window) Info() WindowInfo {
	return WindowInfo{Slices: w.n, SliceMicros: w.s, WindowMicros: w.n * w.s,
		Capacity: w.capacity, TargetFPR: w.fpr, Newest: w.newest,
		HasNewest: w.newest != noSlice, Ignored: w.ignored, Family: w.slots[0].family}
}

// Scan implements sql.Scanner for a bloomwindow column (its text form, as
// drivers give an unknown type) or its ::bytea (bytes or hex text).
func (w *Window) Scan(src any) error {
	var b []byte
	switch x := src.(type) {
	case []byte:
		b = x
	case string:
		b = []byte(x)
	default:
		return fmt.Errorf("bloomfilter: cannot scan %T into a Window", src)
	}
	var g *Window
	var err error
	switch {
	case bytes.HasPrefix(b, []byte(windowTextPrefix)):
		g, err = ParseWindowText(string(b))
	case bytes.HasPrefix(b, []byte(`\x`)):
		var raw []byte
		if raw, err = decodeHexText(b); err == nil {
			g, err = ParseWindow(raw)
		}
	default:
		g, err = ParseWindow(b)
	}
	if err != nil {
		return err
	}
	*w = *g
	return nil
}
