// Set algebra and equality (docs/FORMAT.md §6.4–6.5), with the server's
// compatibility rules and derived inserted counts, so that a union made
// here has the bytes bf_union makes.

package bloomfilter

import "bytes"

// compatible names the first parameter in which a and b differ, in the
// server's order, or "" if they can be combined (family none combines
// with any family).
func compatible(a, b *Filter) string {
	switch {
	case a.nblocks != b.nblocks:
		return "nbits"
	case a.k != b.k:
		return "nhashes"
	case a.seed != b.seed:
		return "seed"
	case a.family != FamilyNone && b.family != FamilyNone &&
		(a.family != b.family || a.detail != b.detail):
		return "family"
	}
	return ""
}

func combine(a, b *Filter, intersect bool) (*Filter, error) {
	for _, x := range [2]*Filter{a, b} {
		if x.grow != nil {
			return nil, x.grow.refusal(true)
		}
	}
	if p := compatible(a, b); p != "" {
		return nil, &IncompatibleError{Param: p}
	}
	r := a.Clone()
	if intersect {
		for i := range r.bits {
			r.bits[i] &= b.bits[i]
		}
	} else {
		for i := range r.bits {
			r.bits[i] |= b.bits[i]
		}
	}
	if r.family == FamilyNone && b.family != FamilyNone {
		r.family, r.detail, r.flags = b.family, b.detail, b.flags
	}
	est := insertedEstimate(popcount(r.bits), r.nblocks, r.k)
	switch {
	case r.family == FamilyNone:
		r.inserted = 0
	case intersect:
		r.inserted = min64(est, min64(a.inserted, b.inserted))
	default:
		r.inserted = est
	}
	return r, nil
}

func min64(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

// Union returns f | g (bf_union): every value of either.  The result keeps
// f's capacity and target rate.  Growing filters and unions are refused
// (an error wrapping ErrGrowing or ErrUnion), as on the server.
func (f *Filter) Union(g *Filter) (*Filter, error) { return combine(f, g, false) }

// Intersect returns f & g (bf_intersect): at least every common value.
// Growing filters and unions are refused (ErrGrowing, ErrUnion), as on
// the server.
func (f *Filter) Intersect(g *Filter) (*Filter, error) { return combine(f, g, true) }

// Equal reports whether f = g as the server's = does: same bytes except
// the inserted count (§6.5); of growing filters or unions, except the
// layers' inserted counts (§9.5, §10.5).  A filter never equals one of
// another form.
func (f *Filter) Equal(g *Filter) bool {
	if f.grow != nil || g.grow != nil {
		return f.grow != nil && g.grow != nil && f.grow.equal(g.grow)
	}
	var ha, hb [headerSize]byte
	f.putHeader(ha[:])
	g.putHeader(hb[:])
	for i := 32; i < 40; i++ { // the inserted field
		ha[i], hb[i] = 0, 0
	}
	return ha == hb && bytes.Equal(f.bits, g.bits)
}
