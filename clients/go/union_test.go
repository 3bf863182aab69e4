package bloomfilter

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// makeUnion builds a union (FORMAT.md §10) of the layers as the server's
// bf_union_layered does: capacity their sum, fpr 1 − Π (1 − p_i).
func makeUnion(t *testing.T, layers ...*Filter) *Filter {
	t.Helper()
	u := &growing{union: true}
	pass := 1.0
	for _, l := range layers {
		u.capacity += l.capacity
		pass *= 1 - l.fpr
		u.layers = append(u.layers, l)
	}
	u.fpr = 1 - pass
	f, err := Parse(u.appendBytes(nil))
	if err != nil {
		t.Fatalf("the union built here does not parse: %v", err)
	}
	return f
}

// shard is a plain filter of integers sized for capacity keys at fpr
// (⌊capacity/8⌋ + 1 blocks, 6 hashes), holding keys lo..hi.
func shard(t *testing.T, capacity int64, fpr float64, seed, lo, hi int64) *Filter {
	t.Helper()
	f, err := New(uint64(capacity+7)/8+1, 6, seed)
	if err != nil {
		t.Fatal(err)
	}
	f.capacity, f.fpr = capacity, fpr
	for k := lo; k <= hi; k++ {
		if _, err := f.Add(k); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func sampleUnion(t *testing.T) *Filter {
	return makeUnion(t, shard(t, 100, 0.01, 5, 1, 100), shard(t, 1000, 0.001, 5, 101, 1100),
		shard(t, 20, 0.05, 5, 1101, 1120))
}

func TestUnionLookups(t *testing.T) {
	f := sampleUnion(t)
	if !f.IsUnion() || f.IsGrowing() || f.NumLayers() != 3 {
		t.Fatalf("IsUnion %v, IsGrowing %v, %d layers", f.IsUnion(), f.IsGrowing(), f.NumLayers())
	}
	if _, ok := f.Growing(); ok {
		t.Error("Growing() of a union is ok")
	}
	checkLayeredLookups(t, unionKind, f, 1, 1120)
	in := f.Info()
	var inserted uint64
	for _, l := range f.Layers() {
		inserted += l.Inserted
	}
	if in.Layout != "union" || in.Capacity != 1120 || f.Capacity() != 1120 ||
		math.Abs(in.TargetFPR-0.0604405) > 1e-12 || in.NHashes != 0 || in.NBits != 512*(14+126+4) ||
		in.Inserted != inserted || inserted < 1100 || in.Family != FamilyInteger ||
		in.Seed != 5 || in.Bytes != int64(len(f.Bytes())) || in.Saturated {
		t.Errorf("Info %+v", in)
	}
	if layers := f.Layers(); len(layers) != 3 || layers[1].Capacity != 1000 || layers[1].TargetFPR != 0.001 {
		t.Errorf("Layers %+v", layers)
	}
	// sized explicitly (header fpr 0): saturated once the rate is above 0,
	// as the server compares (§10.5 sums as §9.5 does)
	s := makeUnion(t, shard(t, 0, 0, 0, 1, 3))
	if in := s.Info(); in.TargetFPR != 0 || in.Capacity != 0 || !in.Saturated || !s.Saturated() {
		t.Errorf("a union of a filter sized explicitly: %+v", in)
	}
	// layers of family none answer false
	e := makeUnion(t, shard(t, 10, 0.01, 0, 1, 0), shard(t, 30, 0.01, 0, 1, 0))
	if ok, err := e.Contains(int64(1)); ok || err != nil || e.Family() != FamilyNone {
		t.Errorf("an empty union: %v %v", ok, err)
	}
}

func TestUnionReadOnly(t *testing.T) {
	f := sampleUnion(t)
	plain := shard(t, 10, 0.01, 5, 1, 1)
	before := f.Bytes()
	// the error says the union is read-only, and never that it is growing
	checkLayeredReadOnly(t, unionKind, f, plain, 1101, 5000)
	// a growing filter and a union: each refused with its own error
	g := makeGrowing(t, 20, 0.01, 2, 5, keysTo(10))
	if _, err := g.Union(f); !errors.Is(err, ErrGrowing) {
		t.Errorf("growing | union: %v", err)
	}
	if string(f.Bytes()) != string(before) {
		t.Error("a refused operation changed the union")
	}
}

func TestUnionRoundTrip(t *testing.T) {
	f := sampleUnion(t)
	raw := f.Bytes()
	if string(raw[:4]) != "BLMU" || !allZero(raw[8:16]) || !allZero(raw[32:64]) {
		t.Fatalf("header % x", raw[:64])
	}
	text := f.String()
	if !strings.HasPrefix(text, "bloomunion:1 capacity=1120 fpr="+formatFPR(f.TargetFPR())+" layer=bloomfilter:1 ") ||
		strings.Count(text, " layer=") != 3 {
		t.Fatalf("text form %.120q", text)
	}
	checkLayeredRoundTrip(t, unionKind, f)
}

func TestUnionEqual(t *testing.T) {
	f := sampleUnion(t)
	// the inserted counters aside; never equal to a plain filter
	checkLayeredEqual(t, unionKind, f, 7)
	// the layers of a growing filter as a union: another form, never equal
	gr := makeGrowing(t, 20, 0.01, 2, 3, keysTo(100))
	u := makeUnion(t, gr.grow.layers...)
	if u.Equal(gr) || gr.Equal(u) || string(u.Bytes()[64:]) != string(gr.Bytes()[64:]) {
		t.Error("a union equals the growing filter of the same layers")
	}
}

func TestUnionMalformed(t *testing.T) {
	f := sampleUnion(t)
	raw := f.Bytes()
	l1 := growHeaderSize + f.grow.layers[0].size()
	patch := patchAt
	// capacities 2^62 and 2^62 - 1 (and 20): past the largest bigint, and
	// the header holds the sum wrapped
	big := patch(patch(raw, growHeaderSize+40, 1<<62, 8), l1+40, 1<<62, 8)
	cases := map[string][]byte{
		"capacity 1119":                      patch(raw, 16, 1119, 8),
		"capacity 1121":                      patch(raw, 16, 1121, 8),
		"capacities past the largest bigint": patch(big, 16, (1<<63)+20, 8),
		"fpr NaN":                            patch(raw, 24, math.Float64bits(math.NaN()), 8),
		"fpr 1.5":                            patch(raw, 24, math.Float64bits(1.5), 8),
		"fpr -1e-300":                        patch(raw, 24, math.Float64bits(-1e-300), 8),
		"growth 2 (reserved)":                patch(raw, 8, 2, 4),
		"reserved byte 12":                   patch(raw, 12, 1, 1),
		"ratio 0.9 (reserved)":               patch(raw, 32, math.Float64bits(0.9), 8),
		"ratio -0 (reserved)":                patch(raw, 32, math.Float64bits(math.Copysign(0, -1)), 8),
		"reserved byte 63":                   patch(raw, 63, 1, 1),
		"0 layers":                           patch(raw, 6, 0, 2),
		"65 layers":                          patch(raw, 6, 65, 2),
		"layer 1 with another seed":          patch(raw, l1+16, 6, 8),
		"layer 1 of family none":             patch(patch(raw, l1+8, 0, 1), l1+32, 0, 8),
		"layer 1 a union":                    patch(raw, l1, uint64(binary.LittleEndian.Uint32([]byte("BLMU"))), 4),
		"one byte too many":                  append(append([]byte(nil), raw...), 0),
		"truncated":                          raw[:len(raw)-1],
	}
	// the capacities add up to exactly the largest bigint: valid
	top := patch(patch(big, l1+40, 1<<62-21, 8), 16, math.MaxInt64, 8)
	if g, err := Parse(top); err != nil || g.Capacity() != math.MaxInt64 {
		t.Errorf("capacities adding up to the largest bigint: %v", err)
	}
	// and so are a header rate of 0 or 1
	for _, p := range []float64{0, 1} {
		if _, err := Parse(patch(raw, 24, math.Float64bits(p), 8)); err != nil {
			t.Errorf("fpr %v: %v", p, err)
		}
	}

	text := f.String()
	layers := strings.Split(text, " layer=")
	head := layers[0]
	fpr := formatFPR(f.TargetFPR())
	texts := map[string]string{
		"capacity=01120":               strings.Replace(text, "capacity=1120", "capacity=01120", 1),
		"capacity=1121":                strings.Replace(text, "capacity=1120", "capacity=1121", 1),
		"capacity=-0":                  strings.Replace(text, "capacity=1120", "capacity=-0", 1),
		"fpr=NaN":                      strings.Replace(text, "fpr="+fpr, "fpr=NaN", 1),
		"fpr=2":                        strings.Replace(text, "fpr="+fpr, "fpr=2", 1),
		"fpr with a trailing zero":     strings.Replace(text, "fpr="+fpr, "fpr="+fpr+"0", 1),
		"ratio and growth":             strings.Replace(text, "fpr="+fpr, "fpr="+fpr+" ratio=0 growth=0", 1),
		"fields out of order":          strings.Replace(text, "capacity=1120 fpr="+fpr, "fpr="+fpr+" capacity=1120", 1),
		"no layers":                    head,
		"a layer left out":             head + " layer=" + strings.Join(layers[2:], " layer="),
		"65 layers":                    head + strings.Repeat(" layer="+layers[1], 65),
		"a layer that is a union":      head + " layer=" + head + " layer=" + layers[1],
		"a layer of another seed":      strings.Replace(text, "seed=5", "seed=6", 1),
		"trailing space":               text + " ",
		"the prefix only":              "bloomunion:1",
		"bloomunion:2":                 strings.Replace(text, "bloomunion:1", "bloomunion:2", 1),
		"a growing filter's text head": strings.Replace(text, "bloomunion:1 capacity=1120 fpr="+fpr, "bloomgrowing:1 capacity=1120 fpr="+fpr+" ratio=0.9 growth=2", 1),
	}
	checkLayeredRejected(t, unionKind, cases, texts)
	// the last layer left out with the capacity adjusted: still a union
	if g, err := ParseText(strings.Replace(strings.Join(layers[:3], " layer="), "capacity=1120", "capacity=1100", 1)); err != nil ||
		g.NumLayers() != 2 {
		t.Errorf("a union of its first two layers: %v", err)
	}
}

// A Refresher against a distributed table gets union values, whole or as
// patches of their bytes; a table that becomes distributed turns its
// plain filter into a union with a full patch.
func TestUnionPatch(t *testing.T) {
	a := makeUnion(t, shard(t, 100, 0.01, 0, 1, 50), shard(t, 200, 0.01, 0, 1001, 1100))
	b := makeUnion(t, shard(t, 100, 0.01, 0, 1, 90), shard(t, 200, 0.01, 0, 1001, 1100))
	x, y := a.Bytes(), b.Bytes()
	runs := changedBlocks(x, y)
	if len(runs) == 0 {
		t.Fatal("the samples do not differ")
	}
	h, err := a.ApplyPatch(makePatch(false, uint64(len(y)), runs...))
	if err != nil || string(h.Bytes()) != string(y) || !h.IsUnion() {
		t.Fatalf("patch of a union: %v", err)
	}
	if ok, _ := h.ContainsInt64(90); !ok {
		t.Error("a key of the patch not found")
	}
	plain := shard(t, 100, 0.01, 0, 1, 50)
	if u, err := plain.ApplyPatch(makePatch(true, uint64(len(y)), run{0, y})); err != nil || !u.IsUnion() {
		t.Errorf("a full patch from a plain filter to a union: %v", err)
	}
	// a patch that breaks the union's capacity sum: rejected, the old copy kept
	bad := append([]byte(nil), y[:64]...)
	binary.LittleEndian.PutUint64(bad[16:], 1)
	if _, err := a.ApplyPatch(makePatch(false, uint64(len(y)), run{0, bad})); !isPatchError(err) {
		t.Errorf("a patch to a malformed union: %v", err)
	}
}
