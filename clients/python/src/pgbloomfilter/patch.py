"""Change sets of a filter (API-CONTRACTS §1, FORMAT.md "Change sets"):
the byte ranges of a value that changed since a WAL position, as
bf_index_changes / bf_tracked_changes return them.

    magic "BLMP", u16 version 1, u8 flags (bit 0: full), u8 0,
    u64 total length, u32 number of runs, u32 0,
    runs: u64 offset, u32 length, u32 0, then `length` bytes

all little-endian.  Runs are in increasing offset order, do not overlap and
lie inside the value.
"""

from __future__ import annotations

import struct
from typing import Optional, Union

from .errors import PatchError

MAGIC = b"BLMP"
_HEAD = struct.Struct("<4sHBBQII")
_RUN = struct.Struct("<QII")
FLAG_FULL = 1
# a value is at most 64 + 64 * 2^23 bytes (FORMAT.md §1); a growing one or
# a union has a 64-byte header and up to 64 layer headers more (§9.1, §10.1)
_MAX_TOTAL = 64 + 64 * 64 + 64 + 64 * (1 << 23)

Bytes = Union[bytes, bytearray, memoryview]


def apply_patch(old: Optional[Bytes], patch: Bytes) -> bytearray:
    """The value after applying `patch` to `old` (None when there is no
    local copy), as a new bytearray; `old` is never modified.  Raises
    PatchError when the patch is malformed or does not fit `old`: the
    caller then keeps its copy and asks for a full value next time."""
    p = memoryview(patch)
    if len(p) < _HEAD.size:
        raise PatchError("a change set of %d bytes is shorter than its header" % len(p))
    magic, version, flags, res1, total, nruns, res2 = _HEAD.unpack_from(p)
    if magic != MAGIC:
        raise PatchError("not a change set (magic %r)" % bytes(magic))
    if version != 1:
        raise PatchError("unknown change-set version %d" % version)
    if flags & ~FLAG_FULL or res1 or res2:
        raise PatchError("unknown flags or non-zero reserved fields in the change set")
    if total > _MAX_TOTAL:
        raise PatchError("a change set for a value of %d bytes" % total)
    full = bool(flags & FLAG_FULL)
    if full:
        out = bytearray(total)
    else:
        if old is None:
            raise PatchError("an incremental change set but no local copy")
        if len(old) != total:
            raise PatchError("the change set is for a value of %d bytes, the local copy "
                             "has %d" % (total, len(old)))
        out = bytearray(old)
    pos = _HEAD.size
    end = 0
    for _ in range(nruns):
        if pos + _RUN.size > len(p):
            raise PatchError("the change set ends inside a run header")
        off, length, res = _RUN.unpack_from(p, pos)
        pos += _RUN.size
        if res:
            raise PatchError("non-zero reserved field in a run")
        if off < end:
            raise PatchError("runs out of order or overlapping at offset %d" % off)
        if off + length > total:
            raise PatchError("a run [%d, %d) beyond the value's %d bytes"
                             % (off, off + length, total))
        if pos + length > len(p):
            raise PatchError("the change set ends inside a run")
        out[off:off + length] = p[pos:pos + length]
        pos += length
        end = off + length
    if pos != len(p):
        raise PatchError("%d bytes after the last run" % (len(p) - pos))
    return out


def make_patch(runs: list[tuple[int, bytes]], total: int, full: bool = False) -> bytes:
    """A change set of the given (offset, bytes) runs (for tests and fake
    sources)."""
    out = bytearray(_HEAD.pack(MAGIC, 1, FLAG_FULL if full else 0, 0, total, len(runs), 0))
    for off, data in runs:
        out += _RUN.pack(off, len(data), 0) + data
    return bytes(out)


def full_patch(value: Bytes) -> bytes:
    """A change set holding a whole value."""
    return make_patch([(0, bytes(value))], len(value), full=True)
