// Contains and Add on Go values: the value's family must be the filter's
// (as on the server), and the hash is the server's.

package bloomfilter

import "errors"

// hashFor encodes v for this filter and checks its family.  null is true
// for a NULL value, which no filter holds.
func (f *Filter) hashFor(v any, adopt bool) (h uint64, e encoded, null bool, err error) {
	if !f.Portable() {
		return 0, e, false, ErrNonPortable
	}
	e, err = encode(v, f.family, f.detail)
	if err == errNull {
		return 0, e, true, nil
	}
	if err != nil {
		return 0, e, false, err
	}
	if e.family != f.family || e.detail != f.detail {
		if !(adopt && f.family == FamilyNone) {
			return 0, e, false, &FamilyError{Filter: f.family, FilterDetail: f.detail,
				Value: e.family, ValueDetail: e.detail}
		}
	}
	return e.hash(f.seed), e, false, nil
}

// Contains reports whether v may have been added: false means it was
// definitely not.  v is a Go value of the filter's family (see the package
// documentation for the mapping); NULL answers false.  A value of another
// family is an error (*FamilyError), as on the server, and so is any value
// for a non-portable filter (ErrNonPortable).
func (f *Filter) Contains(v any) (bool, error) {
	if x, ok := v.(int64); ok {
		return f.ContainsInt64(x)
	}
	if f.family == FamilyNone && f.Portable() {
		return false, nil
	}
	h, _, null, err := f.hashFor(v, false)
	if err != nil || null {
		return false, err
	}
	return f.ContainsHash(h), nil
}

// ContainsInt64 is Contains for a filter of integers, without boxing v.
func (f *Filter) ContainsInt64(v int64) (bool, error) {
	if f.family != FamilyInteger {
		if f.family == FamilyNone {
			return false, nil
		}
		if !f.Portable() {
			return false, ErrNonPortable
		}
		return false, &FamilyError{Filter: f.family, FilterDetail: f.detail, Value: FamilyInteger}
	}
	return f.ContainsHash(xxh3Int64(uint64(v), uint64(f.seed))), nil
}

// Add adds v; it reports whether a bit changed.  The first value added to
// an empty filter sets its family.  Adding NULL does nothing.  A growing
// filter is added to on the server only, and a union not at all: Add
// returns an error wrapping ErrGrowing or ErrUnion and leaves it unchanged.
func (f *Filter) Add(v any) (bool, error) {
	if f.grow != nil {
		return false, f.grow.refusal(false)
	}
	if f.readOnly {
		return false, ErrReadOnly
	}
	h, e, null, err := f.hashFor(v, true)
	if err != nil || null {
		return false, err
	}
	if f.family == FamilyNone {
		f.family, f.detail = e.family, e.detail
	}
	return f.addHash(h), nil
}

// AddHash adds a 64-bit hash (as computed by Hash with the filter's seed).
// The filter must already have a family, and be neither growing
// (ErrGrowing) nor a union (ErrUnion).
func (f *Filter) AddHash(h uint64) (bool, error) {
	if f.grow != nil {
		return false, f.grow.refusal(false)
	}
	if f.readOnly {
		return false, ErrReadOnly
	}
	if f.family == FamilyNone {
		return false, errors.New("bloomfilter: AddHash on a filter without a family: Add a value first")
	}
	return f.addHash(h), nil
}

// Hash returns v's hash with the filter's seed, checking its family.
func (f *Filter) Hash(v any) (uint64, error) {
	h, _, null, err := f.hashFor(v, f.family == FamilyNone)
	if err == nil && null {
		err = errors.New("bloomfilter: cannot hash NULL")
	}
	return h, err
}
