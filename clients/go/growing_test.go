package bloomfilter

import (
	"context"
	"encoding/binary"
	"encoding/hex"
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
	for k := int64(1); k <= 500; k++ {
		a, err1 := f.Contains(k)
		b, err2 := f.ContainsInt64(k)
		c, err3 := f.Contains(int32(k))
		if !a || !b || !c || err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("key %d lost: %v %v %v %v %v %v", k, a, b, c, err1, err2, err3)
		}
	}
	fp := 0
	for k := int64(1000000); k < 1010000; k++ {
		if ok, _ := f.ContainsInt64(k); ok {
			fp++
		}
	}
	if rate := float64(fp) / 10000; rate > 3*f.FPR()+0.005 {
		t.Errorf("measured rate %v, FPR() %v", rate, f.FPR())
	}
	var fe *FamilyError
	if _, err := f.Contains("text"); !errors.As(err, &fe) {
		t.Errorf("a text value against a growing filter of integers: %v", err)
	}
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
	ft, err := ParseText(text)
	if err != nil || string(ft.Bytes()) != string(raw) {
		t.Fatalf("ParseText: %v", err)
	}
	for _, src := range []any{raw, text, []byte(text), `\x` + hex.EncodeToString(raw)} {
		var fs Filter
		if err := fs.Scan(src); err != nil || string(fs.Bytes()) != string(raw) || !fs.IsGrowing() {
			t.Errorf("Scan(%T): %v", src, err)
		}
	}
	if v, err := f.Value(); err != nil || v != text {
		t.Errorf("Value: %v", err)
	}
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
	before := f.Bytes()
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrGrowing) {
			t.Errorf("%s on a growing filter: %v, want ErrGrowing", what, err)
		}
	}
	_, err := f.Add(int64(100000))
	check("Add", err)
	if !strings.Contains(err.Error(), "server") {
		t.Errorf("the error does not say where growing filters are added to: %v", err)
	}
	_, err = f.Add(int64(5)) // a member: refused all the same
	check("Add of a member", err)
	_, err = f.AddHash(12345)
	check("AddHash", err)
	_, err = f.Clone().Add(int64(100000))
	check("Add on a clone", err)
	for _, pair := range [][2]*Filter{{f, plain}, {plain, f}, {f, f}} {
		_, err = pair[0].Union(pair[1])
		check("Union", err)
		_, err = pair[0].Intersect(pair[1])
		check("Intersect", err)
	}
	if string(f.Bytes()) != string(before) {
		t.Error("a refused operation changed the filter")
	}
	// nor through a Refresher's snapshot
	r := NewRefresher(valueSource(before), RefresherOptions{})
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Contains(int64(5)); !ok || err != nil || !r.Filter().IsGrowing() {
		t.Errorf("Refresher of a growing filter: %v %v", ok, err)
	}
	_, err = r.Filter().Add(int64(100000))
	check("Add on a Refresher's snapshot", err)
}

// valueSource answers every call with the same whole value.
type valueSource []byte

func (v valueSource) Changes(ctx context.Context, since string) (Change, error) {
	return Change{Value: append([]byte(nil), v...), FullRefresh: true}, nil
}

func TestGrowingEqual(t *testing.T) {
	f := makeGrowing(t, 20, 0.01, 2, 3, keysTo(200))
	raw := f.Bytes()
	// the layers' inserted counters (bytes 32-39 of each layer) do not count
	other := append([]byte(nil), raw...)
	off := growHeaderSize
	for _, l := range f.grow.layers {
		binary.LittleEndian.PutUint64(other[off+32:], l.inserted+1)
		off += l.size()
	}
	g, err := Parse(other)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Equal(g) || !g.Equal(f) || string(g.Bytes()) == string(raw) {
		t.Error("growing filters that differ only in inserted counters are not equal")
	}
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
	patch := func(off int, v uint64, size int) []byte {
		b := append([]byte(nil), raw...)
		var tmp [8]byte
		binary.LittleEndian.PutUint64(tmp[:], v)
		copy(b[off:off+size], tmp[:size])
		return b
	}
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
	for name, b := range cases {
		_, err := Parse(b)
		checkRejected(t, name, err, SQLStateInvalidBinary)
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
	for name, s := range texts {
		_, err := ParseText(s)
		checkRejected(t, name, err, SQLStateInvalidText)
		if strings.HasPrefix(s, growTextPrefix) { // Scan reads other prefixes as bytes
			var g Filter
			checkRejected(t, name+" (Scan)", g.Scan(s), SQLStateInvalidText)
		}
	}
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
	var runs []run
	for i := 0; i < len(a); i += 64 {
		if string(a[i:i+64]) != string(b[i:i+64]) {
			runs = append(runs, run{uint64(i), b[i : i+64]})
		}
	}
	h, err := f.ApplyPatch(makePatch(false, uint64(len(b)), runs...))
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
