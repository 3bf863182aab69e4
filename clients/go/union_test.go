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
	for k := int64(1); k <= 1120; k++ {
		a, err1 := f.Contains(k)
		b, err2 := f.ContainsInt64(k)
		if !a || !b || err1 != nil || err2 != nil {
			t.Fatalf("key %d of a layer not found: %v %v %v %v", k, a, b, err1, err2)
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
		t.Errorf("a text value against a union of integers: %v", err)
	}
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
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrUnion) || errors.Is(err, ErrGrowing) {
			t.Errorf("%s on a union: %v, want ErrUnion", what, err)
		}
	}
	_, err := f.Add(int64(5000))
	check("Add", err)
	if !strings.Contains(err.Error(), "read-only") {
		t.Errorf("the error does not say the union is read-only: %v", err)
	}
	_, err = f.AddHash(12345)
	check("AddHash", err)
	_, err = f.Clone().Add(int64(5000))
	check("Add on a clone", err)
	for _, pair := range [][2]*Filter{{f, plain}, {plain, f}, {f, f}} {
		_, err = pair[0].Union(pair[1])
		check("Union", err)
		_, err = pair[0].Intersect(pair[1])
		check("Intersect", err)
	}
	// a growing filter and a union: each refused with its own error
	g := makeGrowing(t, 20, 0.01, 2, 5, keysTo(10))
	if _, err := g.Union(f); !errors.Is(err, ErrGrowing) {
		t.Errorf("growing | union: %v", err)
	}
	if string(f.Bytes()) != string(before) {
		t.Error("a refused operation changed the union")
	}
	r := NewRefresher(valueSource(before), RefresherOptions{})
	if err := r.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.Contains(int64(1101)); !ok || err != nil || !r.Filter().IsUnion() {
		t.Errorf("Refresher of a union: %v %v", ok, err)
	}
	_, err = r.Filter().Add(int64(5000))
	check("Add on a Refresher's snapshot", err)
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
	ft, err := ParseText(text)
	if err != nil || string(ft.Bytes()) != string(raw) || !ft.IsUnion() {
		t.Fatalf("ParseText: %v", err)
	}
	for _, src := range []any{raw, text, []byte(text), `\x` + hex.EncodeToString(raw)} {
		var fs Filter
		if err := fs.Scan(src); err != nil || string(fs.Bytes()) != string(raw) || !fs.IsUnion() {
			t.Errorf("Scan(%T): %v", src, err)
		}
	}
	if v, err := f.Value(); err != nil || v != text {
		t.Errorf("Value: %v", err)
	}
}

func TestUnionEqual(t *testing.T) {
	f := sampleUnion(t)
	other := f.Bytes()
	off := growHeaderSize
	for _, l := range f.grow.layers {
		binary.LittleEndian.PutUint64(other[off+32:], l.inserted+7)
		off += l.size()
	}
	g, err := Parse(other)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Equal(g) || !g.Equal(f) || !f.Clone().Equal(f) {
		t.Error("unions that differ only in inserted counters are not equal")
	}
	if f.Equal(f.grow.layers[0]) || f.grow.layers[0].Equal(f) {
		t.Error("a union equals a plain filter")
	}
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
	patch := func(b []byte, off int, v uint64, size int) []byte {
		b = append([]byte(nil), b...)
		var tmp [8]byte
		binary.LittleEndian.PutUint64(tmp[:], v)
		copy(b[off:off+size], tmp[:size])
		return b
	}
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
	for name, b := range cases {
		_, err := Parse(b)
		checkRejected(t, name, err, SQLStateInvalidBinary)
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
	for name, s := range texts {
		_, err := ParseText(s)
		checkRejected(t, name, err, SQLStateInvalidText)
		if strings.HasPrefix(s, unionTextPrefix+" ") { // Scan reads other prefixes as bytes
			var g Filter
			checkRejected(t, name+" (Scan)", g.Scan(s), SQLStateInvalidText)
		}
	}
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
	var runs []run
	for i := 0; i < len(x); i += 64 {
		if string(x[i:i+64]) != string(y[i:i+64]) {
			runs = append(runs, run{uint64(i), y[i : i+64]})
		}
	}
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
