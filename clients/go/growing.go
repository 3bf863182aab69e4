// Growing filters (docs/FORMAT.md §9): the layered form of a bloomfilter
// value, made by the server's bf_create_growing.  A Filter of this form
// holds its header and its layers, each a plain Filter; lookups test the
// one hash of a value against every layer.  The layers grow on the server
// only: Add and set algebra refuse a growing filter (ErrGrowing).
//
// Unions (§10) have the same bytes under another magic, without the
// sizing chain: independent layers of any sizes, such as one per shard of
// a distributed table (bf_union_layered, bf_index_filter).  They are read
// by the same code and are read-only: Add and set algebra refuse them
// (ErrUnion).

package bloomfilter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

const (
	growHeaderSize  = 64
	growMaxLayers   = 64
	growMinGrowth   = 2
	growMaxGrowth   = 16
	growTextPrefix  = "bloomgrowing:1"
	unionTextPrefix = "bloomunion:1"
)

var (
	growMagic  = [4]byte{'B', 'L', 'M', 'G'}
	unionMagic = [4]byte{'B', 'L', 'M', 'U'}
)

// ErrGrowing is returned (wrapped) by Add, AddHash, Union and Intersect on
// a growing filter: the client reads growing filters, the server adds to
// them (bf_add, bf_add_all), and set algebra refuses them there too.
var ErrGrowing = errors.New("bloomfilter: the filter is a growing filter (bf_create_growing)")

// ErrUnion is returned (wrapped) by Add, AddHash, Union and Intersect on a
// union (§10): its layers were sized for other sets of keys, so no layer
// is the one a new key belongs in; the server refuses the same.
var ErrUnion = errors.New("bloomfilter: the filter is a union of filters " +
	"(bf_union_layered, or the filter of a distributed table), which is read-only")

// growing is the header of a growing filter (§9.1) or of a union (§10.1)
// and its layers.
type growing struct {
	union    bool    // the union form: growth and ratio are 0
	capacity int64   // c: layer 0's capacity; of a union, the layers' sum
	fpr      float64 // p: the rate of the whole filter; of a union, the bound of §10.3
	ratio    float64 // r: each layer's rate is r times the previous one's
	growth   uint32  // g: each layer's capacity is g times the previous one's
	layers   []*Filter
}

// GrowingParams are the parameters of a growing filter (FORMAT.md §9.1),
// those of bf_create_growing: layer i is sized for Capacity·Growth^i keys.
type GrowingParams struct {
	Capacity  int64   // the first layer's capacity
	TargetFPR float64 // the rate of the whole filter
	Ratio     float64 // the tightening ratio: each layer's rate is Ratio times the previous one's
	Growth    int     // each layer's capacity is Growth times the previous one's
}

// LayerInfo describes one layer of a filter, as a row of the server's
// bf_layers.
type LayerInfo struct {
	NBits        uint64
	NHashes      int
	Capacity     int64   // 0: sized explicitly
	TargetFPR    float64 // 0: sized explicitly
	Inserted     uint64
	BitsSet      uint64
	EstimatedFPR float64 // of the layer's bits now (§6.2)
}

// IsGrowing reports whether f is a growing filter (FORMAT.md §9).
func (f *Filter) IsGrowing() bool { return f.grow != nil && !f.grow.union }

// IsUnion reports whether f is a union (FORMAT.md §10): filters of any
// sizes side by side, such as a distributed table's, one per shard.
func (f *Filter) IsUnion() bool { return f.grow != nil && f.grow.union }

// Growing returns the parameters of a growing filter; ok is false for a
// plain one or a union.
func (f *Filter) Growing() (p GrowingParams, ok bool) {
	if !f.IsGrowing() {
		return p, false
	}
	g := f.grow
	return GrowingParams{g.capacity, g.fpr, g.ratio, int(g.growth)}, true
}

// NumLayers returns the number of layers: 1 for a plain filter.  (A
// union's are its filters, a growing filter's as many as have grown.)
func (f *Filter) NumLayers() int {
	if f.grow == nil {
		return 1
	}
	return len(f.grow.layers)
}

// Layers describes the layers, oldest first, as bf_layers does: one for a
// plain filter.
func (f *Filter) Layers() []LayerInfo {
	layers := []*Filter{f}
	if f.grow != nil {
		layers = f.grow.layers
	}
	out := make([]LayerInfo, len(layers))
	for i, l := range layers {
		rate, set := l.fillFPR()
		out[i] = LayerInfo{NBits: l.NBits(), NHashes: l.k, Capacity: l.capacity,
			TargetFPR: l.fpr, Inserted: l.inserted, BitsSet: set, EstimatedFPR: rate}
	}
	return out
}

// growingError wraps ErrGrowing with what was refused.
func growingError(what string) error {
	return fmt.Errorf("%w: %s", ErrGrowing, what)
}

var (
	errGrowingAdd = growingError("growing filters are added to on the server " +
		"(bf_add, bf_add_all); the client only reads them")
	errGrowingSetOp = growingError("set algebra refuses growing filters, " +
		"as bf_union and bf_intersect do on the server")
	errUnionAdd = fmt.Errorf("%w: add to the filters it was made from "+
		"(the shards' filters) and read it again", ErrUnion)
	errUnionSetOp = fmt.Errorf("%w: set algebra refuses unions, as on the server", ErrUnion)
)

// refusal is the error of an add (or, setOp, of set algebra) on a value of
// this layered form.
func (g *growing) refusal(setOp bool) error {
	switch {
	case g.union && setOp:
		return errUnionSetOp
	case g.union:
		return errUnionAdd
	case setOp:
		return errGrowingSetOp
	}
	return errGrowingAdd
}

// growLayerTarget returns the capacity and rate layer i is sized for
// (§9.1): c·g^i and the chain p·(1 − r), then ·r per layer, each step
// rounded to binary64; false if the capacity does not fit in an int64 or
// the rate is no longer positive.
func growLayerTarget(c int64, p, r float64, g uint32, i int) (int64, float64, bool) {
	q := p * float64(1-r) // the conversion forbids fusing the two steps
	for j := 1; j <= i; j++ {
		if c > math.MaxInt64/int64(g) {
			return 0, 0, false
		}
		c *= int64(g)
		q = float64(q * r)
	}
	return c, q, q > 0
}

// isLayered reports whether b starts with the magic of a growing filter
// or of a union.
func isLayered(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	m := [4]byte{b[0], b[1], b[2], b[3]}
	return m == growMagic || m == unionMagic
}

// parseGrowing reads the bytes of a growing filter (§9.1) or a union
// (§10.1) with the server's checks, in its order; the layers keep the data
// unless copyBits.
func parseGrowing(b []byte, copyBits bool) (*Filter, error) {
	if len(b) < growHeaderSize {
		return nil, binaryError("the value is %d bytes, shorter than the 64-byte header", len(b))
	}
	if !isLayered(b) {
		return nil, binaryError("the value does not start with the magic bytes \"BLMG\" or \"BLMU\"")
	}
	le := binary.LittleEndian
	nlayers := int(le.Uint16(b[6:]))
	g := &growing{
		union:    [4]byte{b[0], b[1], b[2], b[3]} == unionMagic,
		growth:   le.Uint32(b[8:]),
		capacity: int64(le.Uint64(b[16:])),
		fpr:      math.Float64frombits(le.Uint64(b[24:])),
		ratio:    math.Float64frombits(le.Uint64(b[32:])),
	}
	switch {
	case le.Uint16(b[4:]) != version:
		return nil, binaryError("growing format version %d is not 1", le.Uint16(b[4:]))
	case nlayers < 1 || nlayers > growMaxLayers:
		return nil, binaryError("%d layers is not between 1 and 64", nlayers)
	case g.union:
		// independent layers: no chain, the rate a bound only range-checked
		if !(g.fpr >= 0 && g.fpr <= 1) {
			return nil, binaryError("the union's fpr %v is not in [0, 1]", g.fpr)
		}
		if !allZero(b[8:16]) || !allZero(b[32:growHeaderSize]) {
			return nil, binaryError("a reserved header field is not zero")
		}
	case g.growth < growMinGrowth || g.growth > growMaxGrowth:
		return nil, binaryError("growth %d is not between 2 and 16", g.growth)
	case g.capacity < 1:
		return nil, binaryError("capacity %d is not positive", g.capacity)
	case !(g.fpr > 0 && g.fpr < 1):
		return nil, binaryError("target fpr %v is not in (0, 1)", g.fpr)
	case !(g.ratio > 0 && g.ratio < 1):
		return nil, binaryError("tightening ratio %v is not in (0, 1)", g.ratio)
	case !allZero(b[12:16]) || !allZero(b[40:growHeaderSize]):
		return nil, binaryError("a reserved header field is not zero")
	}
	var blocks, capacities uint64
	off := growHeaderSize
	for i := 0; i < nlayers; i++ {
		rest := b[off:]
		if len(rest) < headerSize {
			return nil, binaryError("the value ends before layer %d", i)
		}
		// the layer's own nblocks says where it ends; a bad one is its error
		n := rest
		if nb := le.Uint64(rest[24:]); nb >= 1 && nb <= maxBlocks && headerSize+blockBytes*nb <= uint64(len(rest)) {
			n = rest[:headerSize+blockBytes*nb]
		}
		l, err := parsePlain(n, copyBits)
		if err != nil {
			var fe *FormatError
			if errors.As(err, &fe) {
				return nil, binaryError("layer %d: %s", i, fe.Msg)
			}
			return nil, err
		}
		// (version, layout and hash are those of every valid plain filter)
		if l0 := g.layers; i > 0 && (l.family != l0[0].family || l.flags != l0[0].flags ||
			l.detail != l0[0].detail || l.seed != l0[0].seed) {
			return nil, binaryError("layer %d differs from layer 0 in its seed or element family", i)
		}
		if g.union {
			// each capacity is at least 0 (§1); their sum must fit an int64
			if capacities += uint64(l.capacity); capacities > math.MaxInt64 {
				return nil, binaryError("the layers' capacities add up to more than the largest bigint")
			}
		} else if c, p, ok := growLayerTarget(g.capacity, g.fpr, g.ratio, g.growth, i); !ok ||
			l.capacity != c || math.Float64bits(l.fpr) != math.Float64bits(p) {
			return nil, binaryError("layer %d's capacity or fpr disagrees with the growth and ratio of the filter", i)
		}
		if blocks += l.nblocks; blocks > maxBlocks {
			return nil, binaryError("the layers together hold more than 8388608 blocks")
		}
		g.layers = append(g.layers, l)
		off += len(n)
	}
	if off != len(b) {
		return nil, binaryError("the value is %d bytes; its %d layers need %d", len(b), nlayers, off)
	}
	if g.union && uint64(g.capacity) != capacities {
		return nil, binaryError("the union's capacity %d is not its layers' sum %d", g.capacity, capacities)
	}
	l0 := g.layers[0]
	return &Filter{family: l0.family, flags: l0.flags, detail: l0.detail, seed: l0.seed, grow: g}, nil
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func (g *growing) appendBytes(out []byte) []byte {
	var h [growHeaderSize]byte
	le := binary.LittleEndian
	if g.union {
		copy(h[:], unionMagic[:])
	} else {
		copy(h[:], growMagic[:])
	}
	le.PutUint16(h[4:], version)
	le.PutUint16(h[6:], uint16(len(g.layers)))
	le.PutUint32(h[8:], g.growth)
	le.PutUint64(h[16:], uint64(g.capacity))
	le.PutUint64(h[24:], math.Float64bits(g.fpr))
	le.PutUint64(h[32:], math.Float64bits(g.ratio))
	out = append(out, h[:]...)
	for _, l := range g.layers {
		out = l.appendBytes(out)
	}
	return out
}

// String returns the text form (§9.4, §10.4).
func (g *growing) String() string {
	var b strings.Builder
	if g.union {
		fmt.Fprintf(&b, "%s capacity=%d fpr=%s", unionTextPrefix, g.capacity, formatFPR(g.fpr))
	} else {
		fmt.Fprintf(&b, "%s capacity=%d fpr=%s ratio=%s growth=%d",
			growTextPrefix, g.capacity, formatFPR(g.fpr), formatFPR(g.ratio), g.growth)
	}
	for _, l := range g.layers {
		b.WriteString(" layer=")
		b.WriteString(l.String())
	}
	return b.String()
}

// parseGrowingText reads the text form (§9.4, or §10.4 of a union) as the
// server's input function does: the header fields, each layer as a plain
// filter's text, the bytes checked as §9.1 (§10.1), and only the text
// output prints accepted.
func parseGrowingText(s string) (*Filter, error) {
	parts := strings.Split(s, " layer=")
	toks := strings.Split(parts[0], " ")
	prefix, keys := growTextPrefix, []string{"capacity", "fpr", "ratio", "growth"}
	union := toks[0] == unionTextPrefix
	if union {
		prefix, keys = unionTextPrefix, keys[:2]
	}
	if len(toks) != len(keys)+1 || toks[0] != prefix {
		return nil, textError("expected %q and the fields %s", prefix, strings.Join(keys, ", "))
	}
	vals := make([]string, len(keys))
	for i, k := range keys {
		if !strings.HasPrefix(toks[i+1], k+"=") {
			return nil, textError("expected %q in the text form", k+"=")
		}
		vals[i] = toks[i+1][len(k)+1:]
	}
	g := &growing{union: union}
	var ok bool
	least := int64(1)
	if union {
		least = 0 // a union's capacity is its layers' sum, 0 if they were sized explicitly
	}
	if g.capacity, ok = parseI64(vals[0]); !ok || g.capacity < least {
		return nil, textError("expected \"capacity=\" and a bigint of at least %d", least)
	}
	var err error
	if g.fpr, err = strconv.ParseFloat(vals[1], 64); err != nil {
		return nil, textError("expected \"fpr=\" and a number")
	}
	if !union {
		if g.ratio, err = strconv.ParseFloat(vals[2], 64); err != nil {
			return nil, textError("expected \"ratio=\" and a number")
		}
		growth, ok := parseU64(vals[3])
		if !ok || growth < growMinGrowth || growth > growMaxGrowth {
			return nil, textError("expected \"growth=\" and a number from 2 to 16")
		}
		g.growth = uint32(growth)
	}
	if len(parts) < 2 || len(parts) > growMaxLayers+1 {
		return nil, textError("expected 1 to 64 \"layer=\" fields, each a bloomfilter in its text form")
	}
	for _, lt := range parts[1:] {
		l, err := parsePlainText(lt)
		if err != nil {
			return nil, err
		}
		g.layers = append(g.layers, l)
	}
	f, err := parseGrowing(g.appendBytes(nil), false)
	if err != nil {
		return nil, asTextError(err)
	}
	// one text per value: other spellings of the same numbers are refused
	if f.String() != s {
		return nil, textError("the text is not what bloomfilter output prints for this value")
	}
	return f, nil
}

// equal is §9.5's (§10.5's) equality of two growing filters or unions:
// the same bytes except the layers' inserted counters.
func (g *growing) equal(o *growing) bool {
	if g.union != o.union || g.capacity != o.capacity || g.growth != o.growth || len(g.layers) != len(o.layers) ||
		math.Float64bits(g.fpr) != math.Float64bits(o.fpr) ||
		math.Float64bits(g.ratio) != math.Float64bits(o.ratio) {
		return false
	}
	for i, l := range g.layers {
		if !l.Equal(o.layers[i]) {
			return false
		}
	}
	return true
}
