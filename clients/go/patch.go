// Change sets (/work/API-CONTRACTS.md §1, docs/FORMAT.md "Change sets"):
// the byte ranges of a filter that changed since a WAL position, as
// bf_index_changes / bf_tracked_changes return them, applied to a local
// copy.  Every rule is checked; a patch that breaks one is rejected whole.

package bloomfilter

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const (
	patchHeader    = 24
	patchRunHeader = 16
	patchFlagFull  = 0x01
)

var patchMagic = [4]byte{'B', 'L', 'M', 'P'}

// maxPatchTotal is the length of the largest value: a growing filter or a
// union (§9.1, §10.1) of 64 layers holding 2^23 blocks together, its
// header and the layers' headers around them (a plain filter is smaller).
const maxPatchTotal = growHeaderSize + growMaxLayers*headerSize + blockBytes*maxBlocks

// ErrNeedFull means a patch cannot apply to the local copy (none yet, or
// another length): fetch the whole filter again.
var ErrNeedFull = errors.New("bloomfilter: the patch does not apply to the local copy; a full fetch is needed")

// PatchError reports a malformed patch.
type PatchError struct{ Msg string }

func (e *PatchError) Error() string { return "bloomfilter: invalid patch: " + e.Msg }

func patchError(format string, args ...any) error {
	return &PatchError{fmt.Sprintf(format, args...)}
}

// Patch is a decoded change set.
type Patch struct {
	Full  bool   // the runs replace the whole value (start from zeros)
	Total uint64 // length of the value after applying
	Runs  []PatchRun
}

// PatchRun is one changed byte range of the value.
type PatchRun struct {
	Offset uint64
	Data   []byte // aliases the patch bytes
}

// DecodePatch checks and decodes a patch.
func DecodePatch(p []byte) (*Patch, error) {
	le := binary.LittleEndian
	if len(p) < patchHeader {
		return nil, patchError("%d bytes, shorter than the 24-byte header", len(p))
	}
	if [4]byte{p[0], p[1], p[2], p[3]} != patchMagic {
		return nil, patchError("bad magic")
	}
	if v := le.Uint16(p[4:]); v != 1 {
		return nil, patchError("unknown version %d", v)
	}
	if p[6]&^patchFlagFull != 0 || p[7] != 0 || le.Uint32(p[20:]) != 0 {
		return nil, patchError("unknown flags or non-zero reserved fields")
	}
	d := &Patch{Full: p[6]&patchFlagFull != 0, Total: le.Uint64(p[8:])}
	if d.Total > maxPatchTotal {
		return nil, patchError("total length %d exceeds the largest filter", d.Total)
	}
	nruns := le.Uint32(p[16:])
	if uint64(nruns) > uint64(len(p)-patchHeader)/patchRunHeader {
		return nil, patchError("%d runs cannot fit in %d bytes", nruns, len(p))
	}
	d.Runs = make([]PatchRun, 0, nruns)
	pos := uint64(patchHeader)
	end := uint64(0) // end of the previous run
	for i := uint32(0); i < nruns; i++ {
		if uint64(len(p))-pos < patchRunHeader {
			return nil, patchError("run %d: truncated", i)
		}
		off := le.Uint64(p[pos:])
		n := uint64(le.Uint32(p[pos+8:]))
		if le.Uint32(p[pos+12:]) != 0 {
			return nil, patchError("run %d: non-zero reserved field", i)
		}
		pos += patchRunHeader
		switch {
		case uint64(len(p))-pos < n:
			return nil, patchError("run %d: %d bytes announced, %d left", i, n, uint64(len(p))-pos)
		case off > d.Total || n > d.Total-off:
			return nil, patchError("run %d: [%d, %d) is past the total length %d", i, off, off+n, d.Total)
		case i > 0 && off < end:
			return nil, patchError("run %d: offset %d overlaps or precedes the previous run", i, off)
		}
		d.Runs = append(d.Runs, PatchRun{Offset: off, Data: p[pos : pos+n]})
		pos += n
		end = off + n
	}
	if pos != uint64(len(p)) {
		return nil, patchError("%d bytes after the last run", uint64(len(p))-pos)
	}
	return d, nil
}

// ApplyPatch returns the value after applying patch to old (the bytes of
// the local copy; nil if none).  old is not modified.  ErrNeedFull when
// the patch is not full and old has another length.
func ApplyPatch(old, patch []byte) ([]byte, error) {
	d, err := DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	return d.apply(old)
}

func (d *Patch) apply(old []byte) ([]byte, error) {
	if !d.Full && uint64(len(old)) != d.Total {
		return nil, ErrNeedFull
	}
	out := make([]byte, d.Total)
	if !d.Full {
		copy(out, old)
	}
	for _, r := range d.Runs {
		copy(out[r.Offset:], r.Data)
	}
	return out, nil
}

// ApplyPatch returns a new filter: f with the patch applied (f is not
// modified; f may be nil for a full patch).  The result is parsed as any
// filter; on error f is still the good copy.
func (f *Filter) ApplyPatch(patch []byte) (*Filter, error) {
	d, err := DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	if !d.Full && len(d.Runs) == 0 && f != nil && d.Total == uint64(f.size()) {
		return f, nil // nothing changed
	}
	var out []byte
	switch {
	case d.Full:
		out = make([]byte, d.Total)
	case f == nil || d.Total != uint64(f.size()):
		return nil, ErrNeedFull
	default:
		out = f.Bytes() // a fresh copy to write the runs into
	}
	for _, r := range d.Runs {
		copy(out[r.Offset:], r.Data)
	}
	return parseOwned(out)
}
