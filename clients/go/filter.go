// The Filter type: a filter's header and bits (docs/FORMAT.md §1), parsed
// and checked by the same rules as the server, and the lookup of §2.

package bloomfilter

import (
	"encoding/binary"
	"math"
)

const (
	headerSize  = 64
	blockBytes  = 64
	blockBits   = 512
	maxHashes   = 64
	maxBlocks   = 1 << 23
	maxInserted = 1<<63 - 1 // adds saturate here; more is invalid
	flagNonPort = 0x01
	version     = 1
	layoutBlock = 1
	hashXXH3    = 1
)

var magic = [4]byte{'B', 'L', 'M', 'F'}

// Filter is a Bloom filter in the bloomfilter format, version 1: a plain
// filter (FORMAT.md §1), a growing one (§9, bf_create_growing), a list of
// plain filters called layers, or a union (§10, bf_union_layered, a
// distributed table's filter), layers of any sizes.  Lookups, the text and
// byte forms, equality and the estimates take every form; Add, AddHash,
// Union and Intersect refuse a growing filter (ErrGrowing: it grows on the
// server) and a union (ErrUnion: it is read-only).
//
// A Filter is safe for concurrent readers (Contains, Info, Bytes, ...); Add
// needs exclusive access.  Filters handed out by a Refresher are read-only
// snapshots: Add on them returns ErrReadOnly (Clone first).
type Filter struct {
	// of a plain filter; of a growing one or a union, family, flags,
	// detail and seed are those every layer shares, and the others are zero
	family   Family
	flags    uint8
	k        int
	detail   uint32
	seed     int64
	nblocks  uint64
	inserted uint64
	capacity int64
	fpr      float64
	bits     []byte // 64 * nblocks bytes
	readOnly bool
	grow     *growing // the growing or union form: its header and layers; nil if plain
}

// Parse reads a filter from its bytes: filter::bytea, binary COPY, or the
// driver's binary result, of any form (the magic "BLMF", "BLMG" or "BLMU"
// tells them apart).  It rejects exactly what the server rejects (a
// *FormatError with SQLSTATE 22P03); the data is copied.
func Parse(data []byte) (*Filter, error) { return parse(data, true) }

// parseOwned is Parse without the copy, for buffers the caller gives up.
func parseOwned(data []byte) (*Filter, error) { return parse(data, false) }

func parse(data []byte, copyBits bool) (*Filter, error) {
	if isLayered(data) {
		return parseGrowing(data, copyBits)
	}
	return parsePlain(data, copyBits)
}

// parsePlain reads the plain form only (a window's slot, a layer).
func parsePlain(data []byte, copyBits bool) (*Filter, error) {
	f, err := parseHeader(data)
	if err != nil {
		return nil, err
	}
	if copyBits {
		f.bits = make([]byte, len(data)-headerSize)
		copy(f.bits, data[headerSize:])
	} else {
		f.bits = data[headerSize:len(data):len(data)]
	}
	return f, nil
}

func parseHeader(b []byte) (*Filter, error) {
	if len(b) < headerSize {
		return nil, binaryError("the value is %d bytes, shorter than the 64-byte header", len(b))
	}
	if [4]byte{b[0], b[1], b[2], b[3]} != magic {
		return nil, binaryError("the value does not start with the magic bytes \"BLMF\"")
	}
	le := binary.LittleEndian
	f := &Filter{
		family:   Family(b[8]),
		flags:    b[9],
		k:        int(le.Uint16(b[10:])),
		detail:   le.Uint32(b[12:]),
		seed:     int64(le.Uint64(b[16:])),
		nblocks:  le.Uint64(b[24:]),
		inserted: le.Uint64(b[32:]),
		capacity: int64(le.Uint64(b[40:])),
		fpr:      math.Float64frombits(le.Uint64(b[48:])),
	}
	// the checks in the order the server makes them
	switch {
	case le.Uint16(b[4:]) != version:
		return nil, binaryError("format version %d is not 1", le.Uint16(b[4:]))
	case b[6] != layoutBlock:
		return nil, binaryError("unknown layout %d", b[6])
	case b[7] != hashXXH3:
		return nil, binaryError("unknown hash function %d", b[7])
	case f.family > familyMax:
		return nil, binaryError("unknown element family %d", f.family)
	case f.k < 1 || f.k > maxHashes:
		return nil, binaryError("nhashes %d is not between 1 and 64", f.k)
	case f.nblocks < 1 || f.nblocks > maxBlocks:
		return nil, binaryError("nblocks %d is not between 1 and 8388608", f.nblocks)
	case uint64(len(b)) != headerSize+blockBytes*f.nblocks:
		return nil, binaryError("the value is %d bytes; %d blocks need %d",
			len(b), f.nblocks, headerSize+blockBytes*f.nblocks)
	case le.Uint64(b[56:]) != 0:
		return nil, binaryError("the reserved header field is not zero")
	}
	if err := f.check(binaryError); err != nil {
		return nil, err
	}
	return f, nil
}

// check applies the rules on the decoded fields shared by both forms.
func (f *Filter) check(fail func(string, ...any) error) error {
	if f.capacity < 0 {
		return fail("capacity %d is negative", f.capacity)
	}
	if !(f.fpr >= 0 && f.fpr < 1) {
		return fail("target fpr %v is not in [0, 1)", f.fpr)
	}
	if f.inserted > maxInserted {
		return fail("inserted %d is more than 2^63 - 1", f.inserted)
	}
	if f.family == FamilyNone && f.inserted != 0 {
		return fail("the filter has no element family but counts %d inserted", f.inserted)
	}
	var nonportable bool
	switch f.family {
	case FamilyRecord:
		if !recordDetailValid(f.detail) {
			return fail("family detail %#x is not 1 to 8 field families", f.detail)
		}
		nonportable = recordHasOther(f.detail)
	case FamilyOther:
		if f.detail == 0 {
			return fail("family other with type OID 0")
		}
		if name, ok := portableTypeOIDs[f.detail]; ok {
			return fail("family other names type OID %d (%s), which has a portable family", f.detail, name)
		}
		nonportable = true
	default:
		if f.detail != 0 {
			return fail("family detail %#x must be 0 for family %s", f.detail, f.family)
		}
	}
	if f.flags&^flagNonPort != 0 || (f.flags&flagNonPort != 0) != nonportable {
		return fail("the flags %#x disagree with the element family or have unknown bits", f.flags)
	}
	return nil
}

// Bytes returns the filter's bytes, as filter::bytea gives them.
func (f *Filter) Bytes() []byte {
	return f.appendBytes(make([]byte, 0, f.size()))
}

func (f *Filter) appendBytes(out []byte) []byte {
	if f.grow != nil {
		return f.grow.appendBytes(out)
	}
	var h [headerSize]byte
	f.putHeader(h[:])
	return append(append(out, h[:]...), f.bits...)
}

// size is the length of the filter's bytes.
func (f *Filter) size() int {
	if f.grow != nil {
		n := growHeaderSize
		for _, l := range f.grow.layers {
			n += l.size()
		}
		return n
	}
	return headerSize + len(f.bits)
}

func (f *Filter) putHeader(b []byte) {
	le := binary.LittleEndian
	copy(b, magic[:])
	le.PutUint16(b[4:], version)
	b[6], b[7], b[8], b[9] = layoutBlock, hashXXH3, byte(f.family), f.flags
	le.PutUint16(b[10:], uint16(f.k))
	le.PutUint32(b[12:], f.detail)
	le.PutUint64(b[16:], uint64(f.seed))
	le.PutUint64(b[24:], f.nblocks)
	le.PutUint64(b[32:], f.inserted)
	le.PutUint64(b[40:], uint64(f.capacity))
	le.PutUint64(b[48:], math.Float64bits(f.fpr))
	le.PutUint64(b[56:], 0)
}

// Clone returns a modifiable copy.
func (f *Filter) Clone() *Filter {
	g := *f
	g.bits = append([]byte(nil), f.bits...)
	g.readOnly = false
	if f.grow != nil {
		gr := *f.grow
		gr.layers = make([]*Filter, len(f.grow.layers))
		for i, l := range f.grow.layers {
			gr.layers[i] = l.Clone()
		}
		g.grow = &gr
	}
	return &g
}

// New returns an empty filter of nblocks 512-bit blocks and k bits per
// element (as bf_create_sized; capacity and fpr 0).
func New(nblocks uint64, k int, seed int64) (*Filter, error) {
	f := &Filter{k: k, seed: seed, nblocks: nblocks}
	if k < 1 || k > maxHashes {
		return nil, binaryError("nhashes %d is not between 1 and 64", k)
	}
	if nblocks < 1 || nblocks > maxBlocks {
		return nil, binaryError("nblocks %d is not between 1 and 8388608", nblocks)
	}
	f.bits = make([]byte, nblocks*blockBytes)
	return f, nil
}

// Family returns the filter's element family.
func (f *Filter) Family() Family { return f.family }

// RecordFields returns the field families of a record filter.
func (f *Filter) RecordFields() []Family {
	if f.family != FamilyRecord {
		return nil
	}
	return recordFields(f.detail)
}

// Portable reports whether a program outside PostgreSQL can compute the
// filter's hashes (false for family other and records with such a field).
func (f *Filter) Portable() bool { return f.flags&flagNonPort == 0 }

// Seed returns the XXH3 seed.
func (f *Filter) Seed() int64 { return f.seed }

// NHashes returns k, the bits set per element; 0 for a growing filter or
// a union, whose layers each have their own (see Layers).
func (f *Filter) NHashes() int { return f.k }

// NBits returns the size of the bit array in bits (of a growing filter or
// a union: of all its layers).
func (f *Filter) NBits() uint64 {
	if f.grow != nil {
		var n uint64
		for _, l := range f.grow.layers {
			n += l.NBits()
		}
		return n
	}
	return f.nblocks * blockBits
}

// Inserted returns the header's count of adds that turned on a bit (of a
// growing filter or a union: the sum over its layers, as bf_info reports it).
func (f *Filter) Inserted() uint64 {
	if f.grow != nil {
		var n uint64
		for _, l := range f.grow.layers {
			n = addSat(n, l.inserted, maxInserted)
		}
		return n
	}
	return f.inserted
}

// Capacity returns the capacity the filter was sized for (0: sized
// explicitly).  Of a growing filter or a union: the sum of its layers'
// capacities (so far), as bf_info reports it (Growing gives the first
// layer's).
func (f *Filter) Capacity() int64 {
	if f.grow != nil {
		var n uint64
		for _, l := range f.grow.layers {
			n = addSat(n, uint64(l.capacity), math.MaxInt64)
		}
		return int64(n)
	}
	return f.capacity
}

// TargetFPR returns the false-positive rate it was sized for (0: sized
// explicitly); of a growing filter, the rate of the whole filter; of a
// union, the bound of its layers' targets (§10.3).
func (f *Filter) TargetFPR() float64 {
	if f.grow != nil {
		return f.grow.fpr
	}
	return f.fpr
}

// addSat returns a + b, or limit if that is more (a, b ≤ limit).
func addSat(a, b, limit uint64) uint64 {
	if b > limit-a {
		return limit
	}
	return a + b
}

// ---- §2: from a hash to a block and k bit positions ----

const golden = 0x9E3779B97F4A7C15

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

func (f *Filter) block(h uint64) *[blockBytes]byte {
	b := ((h >> 32) * f.nblocks) >> 32
	return (*[blockBytes]byte)(f.bits[b*blockBytes : b*blockBytes+blockBytes])
}

// ContainsHash tests a 64-bit hash (FORMAT.md §2; of a growing filter or
// a union, against every layer, §9.2, §10.2): false means the value was
// never added.
func (f *Filter) ContainsHash(h uint64) bool {
	if f.family == FamilyNone {
		return false
	}
	if f.grow != nil {
		for _, l := range f.grow.layers {
			if l.ContainsHash(h) {
				return true
			}
		}
		return false
	}
	blk := f.block(h)
	var x uint64
	for i := 0; i < f.k; i++ {
		if i%7 == 0 {
			x = mix64(h + uint64(i/7+1)*golden)
		}
		p := x & 511
		if blk[p>>3]&(1<<(p&7)) == 0 {
			return false
		}
		x >>= 9
	}
	return true
}

// addHash sets the bits of h; true if one was 0.
func (f *Filter) addHash(h uint64) bool {
	blk := f.block(h)
	changed := false
	var x uint64
	for i := 0; i < f.k; i++ {
		if i%7 == 0 {
			x = mix64(h + uint64(i/7+1)*golden)
		}
		p := x & 511
		if m := byte(1) << (p & 7); blk[p>>3]&m == 0 {
			blk[p>>3] |= m
			changed = true
		}
		x >>= 9
	}
	if changed && f.inserted < maxInserted {
		f.inserted++
	}
	return changed
}
