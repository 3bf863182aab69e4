// Estimates from the bits (docs/FORMAT.md §6): the false-positive rate of
// the filter as it is, the cardinality, saturation, and Info, the
// counterpart of the server's bf_info.

package bloomfilter

import (
	"math"
	"math/bits"
)

func popcount(b []byte) uint64 {
	var n int
	for i := 0; i+8 <= len(b); i += 8 {
		n += bits.OnesCount64(le64(b[i:]))
	}
	return uint64(n)
}

// fillFPR returns (1/nblocks)·Σ_b (c_b/512)^k and the number of bits set.
func (f *Filter) fillFPR() (float64, uint64) {
	var pw [blockBits + 1]float64
	for c := range pw {
		pw[c] = math.Pow(float64(c)/blockBits, float64(f.k))
	}
	sum := 0.0
	var total uint64
	for b := uint64(0); b < f.nblocks; b++ {
		c := popcount(f.bits[b*blockBytes : (b+1)*blockBytes])
		total += c
		sum += pw[c]
	}
	return sum / float64(f.nblocks), total
}

// fill is what the bits say (§6.1-6.3); of a growing filter or a union,
// summed over its layers as the server's bf_info does: bits set and
// cardinalities add up, a value is a false positive if any layer answers
// "maybe", and the filter is saturated past the header's rate (even a
// union's 0).
type fill struct {
	set         uint64
	rate        float64
	cardinality float64
	saturated   bool
}

func (f *Filter) fill() fill {
	if f.grow == nil {
		rate, set := f.fillFPR()
		return fill{set, rate, cardinality(set, f.nblocks, f.k), saturated(f.fpr, rate, set, f.NBits())}
	}
	var s fill
	for _, l := range f.grow.layers {
		rate, set := l.fillFPR()
		s.set += set
		s.cardinality += cardinality(set, l.nblocks, l.k)
		s.rate = s.rate + rate - s.rate*rate
	}
	s.saturated = s.rate > f.grow.fpr
	return s
}

// FPR returns the false-positive rate of the filter's bits now (§6.2), as
// bf_fpr: the probability that a value never added is answered "maybe".
func (f *Filter) FPR() float64 {
	return f.fill().rate
}

// bitHitProbability: one element sets a given bit with probability
// (1 − (1 − 1/512)^k) / nblocks.
func bitHitProbability(nblocks uint64, k int) float64 {
	return -math.Expm1(float64(k)*math.Log1p(-1.0/blockBits)) / float64(nblocks)
}

// cardinality inverts E[bits set] (§6.1); +Inf when every bit is set.
func cardinality(set, nblocks uint64, k int) float64 {
	m := float64(nblocks * blockBits)
	if set == 0 {
		return 0
	}
	if float64(set) >= m {
		return math.Inf(1)
	}
	return math.Log1p(-float64(set)/m) / math.Log1p(-bitHitProbability(nblocks, k))
}

// insertedEstimate is the inserted count of a computed filter (§6.4):
// round(n̂) with the fill capped at m − 1/2.
func insertedEstimate(set, nblocks uint64, k int) uint64 {
	if set == 0 {
		return 0
	}
	m := float64(nblocks * blockBits)
	x := float64(set)
	if x > m-0.5 {
		x = m - 0.5
	}
	return uint64(math.Round(math.Log1p(-x/m) / math.Log1p(-bitHitProbability(nblocks, k))))
}

// Cardinality estimates the number of distinct values added (§6.1), as
// bf_cardinality.
func (f *Filter) Cardinality() float64 {
	if f.grow != nil {
		return f.fill().cardinality
	}
	return cardinality(popcount(f.bits), f.nblocks, f.k)
}

// Info describes a filter, as the server's bf_info does.  Of a growing
// filter (Layout "growing") or a union ("union"), NBits, Capacity,
// Inserted, BitsSet and EstimatedCardinality are sums over the layers,
// TargetFPR is the header's rate, and NHashes is 0 (the layers' are in
// Layers()).
type Info struct {
	Layout               string
	NBits                uint64
	NHashes              int
	Seed                 int64
	Bytes                int64 // size of the value
	Capacity             int64
	TargetFPR            float64
	Inserted             uint64
	BitsSet              uint64
	FillRatio            float64
	EstimatedCardinality float64
	EstimatedFPR         float64
	Saturated            bool
	Family               Family
	RecordFields         []Family // for FamilyRecord
	Portable             bool
}

// Info returns the filter's parameters, fill and estimates.
func (f *Filter) Info() Info {
	s := f.fill()
	m := f.NBits()
	layout := "blocked"
	switch {
	case f.IsUnion():
		layout = "union"
	case f.IsGrowing():
		layout = "growing"
	}
	return Info{
		Layout:               layout,
		NBits:                m,
		NHashes:              f.k,
		Seed:                 f.seed,
		Bytes:                int64(f.size()),
		Capacity:             f.Capacity(),
		TargetFPR:            f.TargetFPR(),
		Inserted:             f.Inserted(),
		BitsSet:              s.set,
		FillRatio:            float64(s.set) / float64(m),
		EstimatedCardinality: s.cardinality,
		EstimatedFPR:         s.rate,
		Saturated:            s.saturated,
		Family:               f.family,
		RecordFields:         f.RecordFields(),
		Portable:             f.Portable(),
	}
}

// saturated (§6.3): the rate exceeds the target; without a target, more
// than half of the bits are set.
func saturated(target, rate float64, set, m uint64) bool {
	if target > 0 {
		return rate > target
	}
	return 2*set > m
}

// Saturated reports whether the filter is past its target rate (§6.3).
func (f *Filter) Saturated() bool {
	return f.fill().saturated
}
