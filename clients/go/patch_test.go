package bloomfilter

import (
	"encoding/binary"
	"errors"
	"testing"
)

type run struct {
	off  uint64
	data []byte
}

// makePatch encodes a change set; mutate may corrupt the header.
func makePatch(full bool, total uint64, runs ...run) []byte {
	le := binary.LittleEndian
	p := []byte("BLMP")
	p = le.AppendUint16(p, 1)
	flags := byte(0)
	if full {
		flags = 1
	}
	p = append(p, flags, 0)
	p = le.AppendUint64(p, total)
	p = le.AppendUint32(p, uint32(len(runs)))
	p = le.AppendUint32(p, 0)
	for _, r := range runs {
		p = le.AppendUint64(p, r.off)
		p = le.AppendUint32(p, uint32(len(r.data)))
		p = le.AppendUint32(p, 0)
		p = append(p, r.data...)
	}
	return p
}

func TestApplyPatch(t *testing.T) {
	f := validFilter(t)
	old := f.Bytes()
	n := uint64(len(old))

	// a change of the bits and of the header's inserted count
	g := f.Clone()
	for i := 100; i < 200; i++ {
		g.Add(int64(i))
	}
	nb := g.Bytes()
	p := makePatch(false, n, run{0, nb[:64]}, run{64, nb[64:130]}, run{130, nb[130:]})
	h, err := f.ApplyPatch(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(h.Bytes()) != string(nb) || string(f.Bytes()) != string(old) {
		t.Error("patched filter differs, or the original changed")
	}
	raw, err := ApplyPatch(old, p)
	if err != nil || string(raw) != string(nb) {
		t.Errorf("ApplyPatch on bytes: %v", err)
	}

	// no runs: the same filter
	if h, err := f.ApplyPatch(makePatch(false, n)); err != nil || h != f {
		t.Errorf("empty patch: %v", err)
	}
	// full: starts from zeros, needs no local copy
	if h, err := (*Filter)(nil).ApplyPatch(makePatch(true, n, run{0, nb})); err != nil || string(h.Bytes()) != string(nb) {
		t.Errorf("full patch: %v", err)
	}
	if h, err := f.ApplyPatch(makePatch(true, n, run{0, nb[:64]})); err != nil || h.FPR() != 0 {
		t.Errorf("full patch of the header only: %v", err)
	}
	// a patch for another length needs a full fetch
	for _, q := range [][]byte{makePatch(false, n+64, run{0, nb[:64]}), makePatch(false, n-64)} {
		if _, err := f.ApplyPatch(q); !errors.Is(err, ErrNeedFull) {
			t.Errorf("length mismatch: %v", err)
		}
	}
	if _, err := (*Filter)(nil).ApplyPatch(makePatch(false, n)); !errors.Is(err, ErrNeedFull) {
		t.Errorf("no local copy: %v", err)
	}
	// a patch whose result is not a valid filter
	bad := append([]byte(nil), nb[:64]...)
	bad[6] = 9
	if _, err := f.ApplyPatch(makePatch(false, n, run{0, bad})); !isFormat(err) {
		t.Errorf("invalid result: %v", err)
	}
}

func isFormat(err error) bool {
	var fe *FormatError
	return errors.As(err, &fe)
}

func TestPatchRejects(t *testing.T) {
	d := []byte{1, 2, 3, 4}
	set := func(p []byte, off int, v byte) []byte { p[off] = v; return p }
	cases := map[string][]byte{
		"short":            makePatch(false, 100)[:23],
		"magic":            set(makePatch(false, 100), 3, 'F'),
		"version":          set(makePatch(false, 100), 4, 2),
		"flags":            set(makePatch(false, 100), 6, 2),
		"reserved 7":       set(makePatch(false, 100), 7, 1),
		"reserved 20":      set(makePatch(false, 100), 20, 1),
		"run reserved":     set(makePatch(false, 100, run{0, d}), 24+12, 1),
		"run past total":   makePatch(false, 100, run{98, d}),
		"run offset huge":  makePatch(false, 100, run{1 << 63, d}),
		"overlap":          makePatch(false, 100, run{0, d}, run{2, d}),
		"decreasing":       makePatch(false, 100, run{10, d}, run{0, d}),
		"truncated data":   makePatch(false, 100, run{0, d})[:24+16+3],
		"truncated run":    makePatch(false, 100, run{0, d}, run{10, d})[:24+16+4+8],
		"trailing":         append(makePatch(false, 100, run{0, d}), 0),
		"too many runs":    set(makePatch(false, 100, run{0, d}), 16, 9),
		"total too large":  makePatch(false, 64+64*64+64<<23+1),
		"count no runs":    set(makePatch(false, 100), 16, 1),
		"huge run count":   set(set(makePatch(false, 100), 19, 0xFF), 18, 0xFF),
		"run length > end": makePatch(false, 3, run{0, d}),
	}
	for name, p := range cases {
		var pe *PatchError
		if _, err := DecodePatch(p); !errors.As(err, &pe) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// adjacent runs and a run ending exactly at the total are fine
	if _, err := DecodePatch(makePatch(false, 8, run{0, d}, run{4, d})); err != nil {
		t.Error(err)
	}
	if _, err := DecodePatch(makePatch(false, 8, run{8, nil})); err != nil {
		t.Error(err)
	}
	// the largest value is a union (or growing filter) of 64 layers holding
	// 2^23 blocks together, longer than the largest plain filter
	if _, err := DecodePatch(makePatch(false, 64+64*64+64<<23, run{64 + 64*64 + 64<<23 - 4, d})); err != nil {
		t.Errorf("a patch of the largest union: %v", err)
	}
}
