"""BloomWindow: a sliding-window filter (`bloomwindow`) read from
PostgreSQL, answering as bf_window_contains does (FORMAT.md §7).

A window of W microseconds in N slices of S = W / N keeps N + 1 slots,
each a plain filter (§1); slice i (microseconds [i·S, (i+1)·S) since
2000-01-01 UTC) lives in slot i mod (N + 1).  What a window answers
depends only on its bytes and the time asked.
"""

from __future__ import annotations

import datetime
import struct
from dataclasses import dataclass
from typing import Any, Union

from . import _format as F
from ._filter import BloomFilter
from ._keys import TypeSpec
from .errors import FormatError, TextFormatError

MAGIC = b"BLMW"
HEADER = struct.Struct("<4sHHqqQqd16s")
NO_SLICE = -(1 << 63)
MAX_SLICES = 1024
MAX_SPAN_US = 1 << 61
# the range of timestamptz in microseconds since 2000-01-01 (end excluded)
TIME_MIN = -211813488000000000
TIME_END = 9223371331200000000
EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
_US = datetime.timedelta(microseconds=1)

Bytes = Union[bytes, bytearray, memoryview]
Time = Union[int, datetime.datetime]


def micros(at: Time) -> int:
    """A time as microseconds since 2000-01-01 00:00:00 UTC: an int is
    taken as such; a datetime must be aware (a naive one has no instant)."""
    if isinstance(at, datetime.datetime):
        if at.tzinfo is None or at.utcoffset() is None:
            raise ValueError("a naive datetime names no instant; give it a tzinfo "
                             "(e.g. datetime.timezone.utc)")
        return (at - EPOCH) // _US
    if isinstance(at, bool) or not isinstance(at, int):
        raise TypeError("a time is a datetime or an int of microseconds since 2000-01-01 UTC")
    return at


@dataclass(frozen=True)
class WindowInfo:
    """What bf_window_info reports about the parameters (FORMAT.md §7)."""
    slices: int
    slice_us: int
    window_us: int
    capacity: int
    target_fpr: float
    newest_slice: int | None      # slice index, None while nothing was added
    ignored: int
    nbits_per_slice: int
    nhashes: int
    seed: int
    bytes: int


@dataclass(frozen=True)
class WindowSlice:
    """A slice a lookup may still consult: its time range (microseconds
    since 2000-01-01 UTC), and its slot as a filter."""
    start_us: int
    end_us: int
    expires_us: int
    inserted: int
    filter: BloomFilter


class BloomWindow:
    """A sliding-window filter; parse it from its bytes (`w::bytea`) or
    its text (`w::text`)."""

    __slots__ = ("_n", "_s", "_newest", "_ignored", "_capacity", "_fpr", "_slots")

    def __init__(self, data: Bytes):
        """Parse and validate the bytes (FORMAT.md §7.1)."""
        data = bytes(data)
        if len(data) < HEADER.size + F.HEADER_SIZE:
            raise FormatError("%d bytes is shorter than a window's header and one slot"
                              % len(data))
        magic, version, n, s, newest, ignored, capacity, fpr, reserved = \
            HEADER.unpack_from(data)
        if magic != MAGIC:
            raise FormatError("not a bloomwindow value (magic %r)" % magic)
        if version != 1:
            raise FormatError("unknown window format version %d" % version)
        if not 1 <= n <= MAX_SLICES:
            raise FormatError("%d slices is not between 1 and 1024" % n)
        if s < 1 or n * s > MAX_SPAN_US:
            raise FormatError("slice width %d microseconds is out of range" % s)
        if newest != NO_SLICE and not TIME_MIN // s <= newest <= (TIME_END - 1) // s:
            raise FormatError("newest slice %d lies outside the range of timestamptz" % newest)
        if ignored > F.MAX_INSERTED:
            raise FormatError("ignored %d is 2^63 or more" % ignored)
        if reserved != bytes(16):
            raise FormatError("the reserved header bytes are not 0")
        if capacity < 1:
            raise FormatError("capacity %d is not positive" % capacity)
        if not 0.0 < fpr < 1.0:
            raise FormatError("target fpr %r is not in (0, 1)" % fpr)
        nblocks = struct.unpack_from("<Q", data, HEADER.size + 24)[0]
        if not 1 <= nblocks <= F.MAX_BLOCKS or (n + 1) * nblocks > F.MAX_BLOCKS:
            raise FormatError("slots of %d blocks are too large for %d slices" % (nblocks, n))
        size = F.HEADER_SIZE + F.BLOCK_BYTES * nblocks
        if len(data) != HEADER.size + (n + 1) * size:
            raise FormatError("%d bytes, but %d slots of %d blocks need %d"
                              % (len(data), n + 1, nblocks, HEADER.size + (n + 1) * size))
        first = data[HEADER.size:HEADER.size + F.HEADER_SIZE]
        slots = []
        for j in range(n + 1):
            raw = data[HEADER.size + j * size:HEADER.size + (j + 1) * size]
            slots.append(BloomFilter._plain(bytearray(raw)))     # never the growing form
            if raw[:32] != first[:32] or raw[40:64] != first[40:64]:
                raise FormatError("slot %d differs from slot 0 in more than inserted" % j)
        h0 = slots[0].header
        if h0.capacity != capacity or h0.fpr != fpr / (n + 1):
            raise FormatError("slot 0 is not sized for the window's capacity and fpr")
        if (h0.family == F.NONE) != (newest == NO_SLICE):
            raise FormatError("the slots' element family disagrees with the newest slice")
        if newest == NO_SLICE and ignored:
            raise FormatError("an empty window with ignored adds")
        self._n, self._s, self._newest, self._ignored = n, s, newest, ignored
        self._capacity, self._fpr, self._slots = capacity, fpr, slots

    @classmethod
    def from_bytes(cls, data: Bytes) -> "BloomWindow":
        return cls(data)

    @classmethod
    def from_text(cls, text: str) -> "BloomWindow":
        """Parse the text form (FORMAT.md §7.4), as the server reads it."""
        head, *slots = text.split(" slot=")
        toks = head.split(" ")
        keys = ("slices", "slice_us", "capacity", "fpr", "newest", "ignored")
        if len(toks) != 7 or toks[0] != "bloomwindow:1" or not all(
                t.startswith(k + "=") for k, t in zip(keys, toks[1:])):
            raise TextFormatError("not the text form of a bloomwindow "
                                  "(\"bloomwindow:1 slices=... slot=...\")")
        vals = [t.split("=", 1)[1] for t in toks[1:]]
        try:
            n, s, cap = (int(v) for v in vals[:3])
            fpr = float(vals[3])
            newest = NO_SLICE if vals[4] == "none" else int(vals[4])
            ignored = int(vals[5])
            raw = HEADER.pack(MAGIC, 1, n, s, newest, ignored, cap, fpr, bytes(16)) + \
                b"".join(F.parse_text(t) for t in slots)
            w = cls(raw)
        except (ValueError, OverflowError, struct.error) as e:
            raise TextFormatError("bad text form of a bloomwindow: %s" % e) from None
        # one text per window: other spellings of the same numbers are refused
        if w.to_text() != text:
            raise TextFormatError("not the text bloomwindow output prints for this window")
        return w

    # ------------------------------------------------------------------
    def _slot(self, i: int) -> BloomFilter:
        return self._slots[i % (self._n + 1)]      # Python's % is non-negative

    def contains(self, value: Any, at: Time, type: TypeSpec = None) -> bool:
        """False if the value was not added in the window that ends at `at`
        (FORMAT.md §7.2-7.3); True if it probably was."""
        t = micros(at)
        if self._newest == NO_SLICE:
            return False
        h = self._slots[0]._hash(value, type)
        i = t // self._s
        for s in range(max(i, self._newest) - self._n, min(i, self._newest) + 1):
            if self._slot(s)._test_hash(h):
                return True
        return False

    def add(self, value: Any, at: Time, type: TypeSpec = None) -> bool:
        """Add a value at time `at` (as bf_window_add); True if it turned on
        a bit.  A time older than the oldest slice kept is ignored (and
        counted), never stored in another slice."""
        t = micros(at)
        first = self._slots[0]
        if first._family == F.NONE:
            fam, det = first._family_of(value, type)
            h = first._hash(value, type, check=False)
        else:
            h = first._hash(value, type)
        i = t // self._s
        if not TIME_MIN // self._s <= i <= (TIME_END - 1) // self._s:
            raise ValueError("time %d is outside the range of timestamptz" % t)
        if self._newest == NO_SLICE or i > self._newest:
            lo = i - self._n if self._newest == NO_SLICE else max(self._newest + 1, i - self._n)
            for s in range(lo, i + 1):
                slot = self._slot(s)
                slot._buf[F.HEADER_SIZE:] = bytes(len(slot._buf) - F.HEADER_SIZE)
                struct.pack_into("<Q", slot._buf, 32, 0)
            self._newest = i
        elif i < self._newest - self._n:
            self._ignored = min(self._ignored + 1, F.MAX_INSERTED)
            return False
        if first._family == F.NONE:
            for slot in self._slots:
                slot._adopt(fam, det)
        return self._slot(i)._add_hash(h)

    # ------------------------------------------------------------------
    def info(self) -> WindowInfo:
        h = self._slots[0].header
        return WindowInfo(self._n, self._s, self._n * self._s, self._capacity, self._fpr,
                          None if self._newest == NO_SLICE else self._newest, self._ignored,
                          h.nblocks * F.BLOCK_BITS, h.nhashes, h.seed, len(self.to_bytes()))

    def slices(self) -> list[WindowSlice]:
        """The slices stored, oldest first (none while empty)."""
        if self._newest == NO_SLICE:
            return []
        return [WindowSlice(i * self._s, (i + 1) * self._s, (i + 1 + self._n) * self._s,
                            self._slot(i).inserted, self._slot(i).copy())
                for i in range(self._newest - self._n, self._newest + 1)]

    def to_bytes(self) -> bytes:
        return HEADER.pack(MAGIC, 1, self._n, self._s, self._newest, self._ignored,
                           self._capacity, self._fpr, bytes(16)) + \
            b"".join(f.to_bytes() for f in self._slots)

    __bytes__ = to_bytes

    def to_text(self) -> str:
        newest = "none" if self._newest == NO_SLICE else "%d" % self._newest
        return " ".join(["bloomwindow:1", "slices=%d" % self._n, "slice_us=%d" % self._s,
                         "capacity=%d" % self._capacity, "fpr=" + F.format_fpr(self._fpr),
                         "newest=" + newest, "ignored=%d" % self._ignored]
                        + ["slot=" + f.to_text() for f in self._slots])

    def __repr__(self) -> str:
        return "<BloomWindow slices=%d slice_us=%d newest=%s ignored=%d family=%s>" % (
            self._n, self._s, "none" if self._newest == NO_SLICE else self._newest,
            self._ignored, self._slots[0].family)
