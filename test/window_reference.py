#!/usr/bin/python3
"""Independent reference reader/writer of the `bloomwindow` format, version 1.

Written from docs/FORMAT.md section 7 alone, on top of test/reference.py
(sections 1-5), to show that a client can read a sliding-window filter
exported from PostgreSQL and answer lookups exactly as the extension does.

Library:
    parse(data: bytes) -> Window        validates every rule of §7.1
    Window.empty(nslices, slice_us, capacity, fpr, nblocks, k, seed)
    Window.add(h, t) / Window.contains(h, t)    on a u64 hash, t in
                                         microseconds since 2000-01-01 UTC
    Window.add_value(v, family, t) / Window.contains_value(v, family, t)
    Window.to_bytes(), Window.to_text()  §7.1, §7.4
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

MAGIC = b"BLMW"
HEADER = struct.Struct("<4sHHqqQqd16s")
assert HEADER.size == 64
NO_SLICE = -(1 << 63)
MAX_SLICES = 1024
MAX_US = 1 << 61
TIME_MIN = -211813488000000000
TIME_END = 9223371331200000000
SLOT_HEADER = 64


def slice_of(t, s):
    return t // s          # Python's // is floor division, as §7.2 asks


class Window:
    def __init__(self, nslices, slice_us, newest, ignored, capacity, fpr, slots):
        self.nslices, self.slice_us = nslices, slice_us
        self.newest, self.ignored = newest, ignored
        self.capacity, self.fpr = capacity, fpr
        self.slots = slots

    @classmethod
    def empty(cls, nslices, slice_us, capacity, fpr, nblocks, k, seed=0):
        share = fpr / (nslices + 1)
        slots = [ref.Filter.empty(nblocks, k, seed, capacity, share)
                 for _ in range(nslices + 1)]
        return cls(nslices, slice_us, NO_SLICE, 0, capacity, fpr, slots)

    def slot(self, i):
        return i % (self.nslices + 1)   # non-negative in Python

    # §7.2
    def add(self, h, t):
        i = slice_of(t, self.slice_us)
        if self.newest == NO_SLICE or i > self.newest:
            first = i - self.nslices
            if self.newest != NO_SLICE:
                first = max(first, self.newest + 1)
            for s in range(first, i + 1):
                f = self.slots[self.slot(s)]
                f.bits = bytearray(len(f.bits))
                f.inserted = 0
            self.newest = i
        elif i < self.newest - self.nslices:
            self.ignored += 1
            return False
        self.slots[self.slot(i)].add(h)
        return True

    def live(self, t):
        if self.newest == NO_SLICE:
            return []
        i = slice_of(t, self.slice_us)
        lo = max(i - self.nslices, self.newest - self.nslices)
        hi = min(i, self.newest)
        return list(range(lo, hi + 1))

    def contains(self, h, t):
        live = self.live(t)
        if not live or self.slots[0].family == 0:
            return False
        # every slot has the same size and seed: one block, one set of positions
        first = self.slots[0]
        b = first.block(h & ref.U64)
        pos = ref.positions(h & ref.U64, first.k)
        return any(all(self.slots[self.slot(s)]._bit(b, p) for p in pos) for s in live)

    def _adopt(self, value, family):
        """§7.1: every slot takes the family of the first value added."""
        probe = ref.Filter.empty(1, 1)
        probe.add_value(value, family)
        first = self.slots[0]
        if first.family == 0:
            for f in self.slots:
                f.family, f.detail, f.flags = probe.family, probe.detail, probe.flags
        elif (first.family, first.detail) != (probe.family, probe.detail):
            raise ValueError("value of another family")

    def add_value(self, value, family, t):
        self._adopt(value, family)
        return self.add(ref.hash_value(value, family, self.slots[0].seed), t)

    def contains_value(self, value, family, t):
        if self.slots[0].family == 0:
            return False
        return self.contains(ref.hash_value(value, family, self.slots[0].seed), t)

    # §7.1
    def to_bytes(self):
        head = HEADER.pack(MAGIC, 1, self.nslices, self.slice_us, self.newest,
                           self.ignored, self.capacity, self.fpr, bytes(16))
        return head + b"".join(f.to_bytes() for f in self.slots)

    # §7.4
    def to_text(self, type_name=None):
        newest = "none" if self.newest == NO_SLICE else "%d" % self.newest
        parts = ["bloomwindow:1", "slices=%d" % self.nslices,
                 "slice_us=%d" % self.slice_us, "capacity=%d" % self.capacity,
                 "fpr=" + ref.format_fpr(self.fpr), "newest=" + newest,
                 "ignored=%d" % self.ignored]
        parts += ["slot=" + f.to_text(type_name) for f in self.slots]
        return " ".join(parts)


def parse(data):
    """Read and validate a bloomwindow (§7.1); raises ValueError."""
    data = bytes(data)
    if len(data) < 64 + SLOT_HEADER:
        raise ValueError("shorter than the header and one slot header")
    magic, version, n, s, newest, ignored, capacity, fpr, reserved = \
        HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("bad magic")
    if version != 1:
        raise ValueError("unknown version %d" % version)
    if not 1 <= n <= MAX_SLICES:
        raise ValueError("nslices %d out of range" % n)
    if s < 1 or n * s > MAX_US:
        raise ValueError("slice width %d out of range" % s)
    if newest != NO_SLICE and not (slice_of(TIME_MIN, s) <= newest
                                   <= slice_of(TIME_END - 1, s)):
        raise ValueError("newest slice outside timestamptz")
    if ignored >= 1 << 63:
        raise ValueError("ignored count too large")
    if reserved != bytes(16):
        raise ValueError("reserved bytes not zero")
    if capacity < 1:
        raise ValueError("capacity not positive")
    if not 0.0 < fpr < 1.0:
        raise ValueError("fpr out of range")
    nblocks = struct.unpack_from("<Q", data, 64 + 24)[0]
    if not 1 <= nblocks <= ref.MAX_NBLOCKS or (n + 1) * nblocks > ref.MAX_NBLOCKS:
        raise ValueError("slots too large")
    size = SLOT_HEADER + 64 * nblocks
    if len(data) != 64 + (n + 1) * size:
        raise ValueError("length disagrees with the slots")
    slots = []
    for j in range(n + 1):
        raw = data[64 + j * size: 64 + (j + 1) * size]
        slots.append(ref.parse(raw))
        if j and (raw[:32] != data[64:96] or raw[40:64] != data[104:128]):
            raise ValueError("slot %d differs from slot 0" % j)
    if slots[0].capacity != capacity or slots[0].fpr != fpr / (n + 1):
        raise ValueError("slot sizing disagrees with the window")
    if (slots[0].family == 0) != (newest == NO_SLICE):
        raise ValueError("family and newest disagree")
    if newest == NO_SLICE and ignored:
        raise ValueError("ignored adds in an empty window")
    return Window(n, s, newest, ignored, capacity, fpr, slots)
