package bloomfilter

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// makeGrowing builds a growing filter of integers as the server does
// (FORMAT.md §9.2), without it: capacity c, rate p, ratio 0.9, growth g;
// a layer of capacity n has ⌈n/8⌉ blocks and 6 hashes (the server sizes
// them by §4, which a reader does not need).
func makeGrowing(t *testing.T, c int64, p float64, g uint32, seed int64, keys []int64) *Filter {
	t.Helper()
	const r = 0.9
	gr := &growing{capacity: c, fpr: p, ratio: r, growth: g}
	newLayer := func() {
		i := len(gr.layers)
		n, q, ok := growLayerTarget(c, p, r, g, i)
		if !ok {
			t.Fatalf("layer %d cannot be sized", i)
		}
		l, err := New(uint64(n+7)/8, 6, seed)
		if err != nil {
			t.Fatal(err)
		}
		l.capacity, l.fpr = n, q
		if i > 0 {
			l.family = gr.layers[0].family
		}
		gr.layers = append(gr.layers, l)
	}
	newLayer()
	held := func(h uint64) bool {
		for _, l := range gr.layers {
			if l.ContainsHash(h) {
				return true
			}
		}
		return false
	}
	for _, k := range keys {
		h := xxh3Int64(uint64(k), uint64(seed))
		if held(h) {
			continue
		}
		if newest := gr.layers[len(gr.layers)-1]; newest.inserted >= uint64(newest.capacity) {
			newLayer()
		}
		for _, l := range gr.layers {
			l.family = FamilyInteger
		}
		gr.layers[len(gr.layers)-1].addHash(h)
	}
	f, err := Parse(gr.appendBytes(nil))
	if err != nil {
		t.Fatalf("the growing filter built here does not parse: %v", err)
	}
	return f
}

func keysTo(n int) []int64 {
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i + 1)
	}
	return keys
}

func TestGrowingLookups(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 7, keysTo(500))
	if !f.IsGrowing() || f.NumLayers() < 4 {
		t.Fatalf("IsGrowing %v, %d layers: the sample did not grow", f.IsGrowing(), f.NumLayers())
	}
	checkLayeredLookups(t, growingKind, f, 1, 500)
	if ok, err := f.Contains(nil); ok || err != nil {
		t.Errorf("NULL: %v %v", ok, err)
	}
	if f.Family() != FamilyInteger || f.Seed() != 7 || !f.Portable() || f.NHashes() != 0 {
		t.Errorf("family %s seed %d portable %v nhashes %d", f.Family(), f.Seed(), f.Portable(), f.NHashes())
	}
	// an empty growing filter answers false, as an empty plain one
	e := makeGrowing(t, 100, 0.01, 2, 0, nil)
	if ok, err := e.Contains("x"); ok || err != nil || e.NumLayers() != 1 || e.Family() != FamilyNone {
		t.Errorf("empty growing filter: %v %v", ok, err)
	}
}

func TestGrowingIntrospection(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 3, 1, keysTo(300))
	p, ok := f.Growing()
	if !ok || p != (GrowingParams{Capacity: 20, TargetFPR: 0.01, Ratio: 0.9, Growth: 3}) {
		t.Errorf("Growing() = %+v, %v", p, ok)
	}
	layers := f.Layers()
	if len(layers) != f.NumLayers() {
		t.Fatalf("%d layers, NumLayers %d", len(layers), f.NumLayers())
	}
	var nbits, inserted, set uint64
	var capacity int64
	p0, r := 0.01, 0.9 // variables: a constant expression would be exact
	rate := p0 * (1 - r)
	for i, l := range layers {
		want := 20 * int64(math.Pow(3, float64(i)))
		if l.NBits != 512*(uint64(want+7)/8) || l.NHashes != 6 || l.Capacity != want ||
			l.TargetFPR != rate || l.BitsSet == 0 || l.EstimatedFPR <= 0 {
			t.Errorf("layer %d: %+v", i, l)
		}
		rate *= r
		nbits += l.NBits
		inserted += l.Inserted
		set += l.BitsSet
		capacity += l.Capacity
	}
	in := f.Info()
	if in.Layout != "growing" || in.NBits != nbits || in.Inserted != inserted || in.BitsSet != set ||
		in.Capacity != capacity || in.TargetFPR != 0.01 || in.NHashes != 0 ||
		in.Bytes != int64(len(f.Bytes())) || in.Family != FamilyInteger || !in.Portable ||
		f.NBits() != nbits || f.Inserted() != inserted || f.Capacity() != capacity {
		t.Errorf("Info %+v; layers %+v", in, layers)
	}
	if c := f.Cardinality(); math.Abs(c-300)/300 > 0.2 {
		t.Errorf("cardinality %v of 300 keys", c)
	}
	if in.Saturated || f.Saturated() || in.EstimatedFPR != f.FPR() || in.EstimatedFPR >= 0.01 {
		t.Errorf("saturated %v, fpr %v", in.Saturated, in.EstimatedFPR)
	}
	// a plain filter is one layer
	g, _ := New(4, 3, 0)
	g.Add("a")
	if _, ok := g.Growing(); ok || g.IsGrowing() || g.NumLayers() != 1 || len(g.Layers()) != 1 ||
		g.Layers()[0].NBits != 2048 || g.Layers()[0].Inserted != 1 || g.Info().Layout != "blocked" {
		t.Errorf("plain filter: %+v", g.Layers())
	}
}

func TestGrowingRoundTrip(t *testing.T) {
	f := makeGrowing(t, 10, 0.05, 4, -5, keysTo(200))
	raw := f.Bytes()
	text := f.String()
	if !strings.HasPrefix(text, "bloomgrowing:1 capacity=10 fpr=0.05 ratio=0.9 growth=4 layer=bloomfilter:1 ") ||
		strings.Count(text, " layer=") != f.NumLayers() {
		t.Fatalf("text form %.120q", text)
	}
	checkLayeredRoundTrip(t, growingKind, f)
	// Parse copies; parseOwned keeps the buffer
	raw2 := f.Bytes()
	g, _ := Parse(raw2)
	raw2[len(raw2)-1] ^= 0xff
	if string(g.Bytes()) != string(raw) {
		t.Error("Parse did not copy the data")
	}
}

func TestGrowingRefusesAddAndSetOps(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 0, keysTo(100))
	plain, _ := New(1, 4, 0)
	plain.Add(int64(1))
	// the error says where growing filters are added to; nor through a
	// Refresher's snapshot
	checkLayeredReadOnly(t, growingKind, f, plain, 5, 100000)
}

func TestGrowingEqual(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 3, keysTo(200))
	raw := f.Bytes()
	// the layers' inserted counters do not count
	checkLayeredEqual(t, growingKind, f, 1)
	c := f.Clone()
	if !c.Equal(f) {
		t.Error("a clone is not equal")
	}
	c.grow.layers[1].bits[0] ^= 1 // the clone's bits are its own
	if c.Equal(f) || string(f.Bytes()) != string(raw) {
		t.Error("a changed bit is equal, or the clone shares the bits")
	}
	// never equal to a plain filter, not even its only layer
	one := makeGrowing(t, 1000, 0.01, 2, 3, keysTo(10))
	layer0 := one.grow.layers[0]
	if one.Equal(layer0) || layer0.Equal(one) {
		t.Error("a growing filter equals a plain one")
	}
	// another growth (and so other layer capacities)
	if g2 := makeGrowing(t, 20, 0.01, 3, 3, keysTo(200)); g2.Equal(f) {
		t.Error("other growth, equal")
	}
}

func TestGrowingMalformed(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 9, keysTo(150))
	raw := f.Bytes()
	l1 := growHeaderSize + f.grow.layers[0].size()
	patch := func(off int, v uint64, size int) []byte { return patchAt(raw, off, v, size) }
	// layer 0's capacity c = 2^62; layer 1 would need c·4, which does not
	// fit in an int64 (and wraps to the 0 it has)
	huge := func() []byte {
		gr := &growing{capacity: 1 << 62, fpr: 0.01, ratio: 0.9, growth: 4}
		for i := 0; i < 2; i++ {
			l, _ := New(1, 4, 0)
			_, l.fpr, _ = growLayerTarget(1, 0.01, 0.9, 4, i)
			gr.layers = append(gr.layers, l)
		}
		gr.layers[0].capacity = 1 << 62
		return gr.appendBytes(nil)
	}
	// a rate that rounds to 0 in layer 0
	tiny := patch(24, math.Float64bits(5e-324), 8)
	cases := map[string][]byte{
		"capacity overflows in layer 1": huge(),
		"rate 0 in layer 0":             tiny,
		"layer 1 with another flag":     patch(l1+9, 1, 1),
		"layer 1 with a family detail":  patch(l1+12, 4, 4),
		"layer 1 with another version":  patch(l1+4, 2, 2),
		"layer 1 a window slot":         patch(l1, uint64(binary.LittleEndian.Uint32([]byte("BLMW"))), 4),
		"magic BLMX":                    patch(0, uint64(binary.LittleEndian.Uint32([]byte("BLMX"))), 4),
		"3 bytes of magic":              raw[:3],
		"nlayers 2 of more":             patch(6, 2, 2),
		"layer 0's fpr a bit off":       patch(growHeaderSize+48, math.Float64bits(f.grow.layers[0].fpr)+1, 8),
		"layer 0 of family none":        patch(growHeaderSize+8, 0, 1),
	}
	// the text form: every other spelling and every invalid value is 22P02
	text := f.String()
	layers := strings.Split(text, " layer=")
	head := layers[0]
	texts := map[string]string{
		"ratio=0.90":                 strings.Replace(text, "ratio=0.9", "ratio=0.90", 1),
		"fpr=1e-2":                   strings.Replace(text, "fpr=0.01", "fpr=1e-2", 1),
		"capacity=020":               strings.Replace(text, "capacity=20", "capacity=020", 1),
		"capacity=+20":               strings.Replace(text, "capacity=20", "capacity=+20", 1),
		"capacity=0":                 strings.Replace(text, "capacity=20", "capacity=0", 1),
		"growth=1":                   strings.Replace(text, "growth=2", "growth=1", 1),
		"growth=17":                  strings.Replace(text, "growth=2", "growth=17", 1),
		"growth=4294967298":          strings.Replace(text, "growth=2", "growth=4294967298", 1),
		"ratio=0.8 (chain)":          strings.Replace(text, "ratio=0.9", "ratio=0.8", 1),
		"fields out of order":        strings.Replace(text, "fpr=0.01 ratio=0.9", "ratio=0.9 fpr=0.01", 1),
		"no layers":                  head,
		"first layer left out":       head + " layer=" + strings.Join(layers[2:], " layer="),
		"trailing space":             text + " ",
		"two spaces":                 strings.Replace(text, " fpr=", "  fpr=", 1),
		"a layer that is growing":    head + " layer=" + head + " layer=" + layers[1],
		"a layer of another seed":    strings.Replace(text, "seed=9", "seed=8", 1),
		"65 layers":                  head + strings.Repeat(" layer="+layers[1], 65),
		"the prefix only":            "bloomgrowing:1",
		"the prefix and a space":     "bloomgrowing:1 ",
		"bloomgrowing:2":             strings.Replace(text, "bloomgrowing:1", "bloomgrowing:2", 1),
		"NUL byte":                   text[:20] + "\x00" + text[21:],
		"a layer with bad base64":    text[:len(text)-2] + "!=",
		"a layer cut short":          text[:len(text)-4],
		"layer=layer=":               strings.Replace(text, " layer=", " layer=layer=", 1),
		"a field after the layers":   text + " growth=2",
		"a plain filter's text head": strings.Replace(text, "bloomgrowing:1", "bloomfilter:1", 1),
	}
	checkLayeredRejected(t, growingKind, cases, texts)
	// the last layers left out: still a valid growing filter, as on the server
	if g, err := ParseText(head + " layer=" + layers[1]); err != nil || g.NumLayers() != 1 {
		t.Errorf("a growing filter of its first layer only: %v", err)
	}
}

// A window's slot and a growing filter's layer are plain filters: the
// other form is refused there.
func TestGrowingNotASlot(t *testing.T) {
	w, _ := ParseWindowText(windowSample(t))
	g := makeGrowing(t, 20, 0.01, 2, 0, nil)
	text := strings.Replace(w.String(), " slot="+w.slots[0].String(), " slot="+g.String(), 1)
	_, err := ParseWindowText(text)
	checkRejected(t, "a growing filter as a window's slot", err, SQLStateInvalidText)
}

// windowSample is the text of a small window.
func windowSample(t *testing.T) string {
	t.Helper()
	l, _ := New(1, 4, 0)
	l.capacity, l.fpr = 10, 0.01/3
	s := "bloomwindow:1 slices=2 slice_us=1000 capacity=10 fpr=0.01 newest=none ignored=0"
	for i := 0; i < 3; i++ {
		s += " slot=" + l.String()
	}
	if _, err := ParseWindowText(s); err != nil {
		t.Fatalf("sample window: %v", err)
	}
	return s
}

func TestGrowingPatch(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 0, keysTo(100))
	g := makeGrowing(t, 20, 0.01, 2, 0, keysTo(120)) // as many layers, more bits
	a, b := f.Bytes(), g.Bytes()
	if len(a) != len(b) {
		t.Skip("the samples have different sizes")
	}
	h, err := f.ApplyPatch(makePatch(false, uint64(len(b)), changedBlocks(a, b)...))
	if err != nil || string(h.Bytes()) != string(b) || !h.IsGrowing() {
		t.Fatalf("patch of a growing filter: %v", err)
	}
	if same, err := f.ApplyPatch(makePatch(false, uint64(len(a)))); err != nil || same != f {
		t.Errorf("empty patch: %v", err)
	}
	if _, err := f.ApplyPatch(makePatch(false, uint64(len(a)+64))); !errors.Is(err, ErrNeedFull) {
		t.Errorf("patch of another length: %v", err)
	}
}
