#!/usr/bin/python3
"""Independent reference reader of growing bloomfilters and unions,
format version 1.

Written from docs/FORMAT.md sections 9 and 10 alone, on top of
test/reference.py (sections 1-5), to show that a client can read a growing
filter or a union exported from PostgreSQL and answer lookups exactly as
the extension does.  A union has the bytes of a growing filter under
another magic, without the sizing chain, so Union is a Growing that checks
its layers' capacities add up instead, and refuses adds.

Library:
    parse(data: bytes) -> Growing | Union   validates every rule of §9.1 / §10.1
    parse_text(s) -> Growing | Union        §9.4 / §10.4, one text per value
    Growing.contains(h) / Growing.contains_value(v, family)
    Growing.add(h, size_for)            §9.2, with a sizing function
    Growing.to_bytes(), Growing.to_text()
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

MAGIC = b"BLMG"
UNION_MAGIC = b"BLMU"
HEADER = struct.Struct("<4sHHIIqdd24s")
assert HEADER.size == 64
MAX_LAYERS = 64
PREFIX = "bloomgrowing:1"
UNION_PREFIX = "bloomunion:1"


def layer_target(capacity, fpr, ratio, growth, i):
    """§9.1: layer i's capacity and rate (the binary64 chain), or None."""
    c, p = capacity, fpr * (1.0 - ratio)
    for _ in range(i):
        c *= growth
        p *= ratio
    if c > ref.I64_MAX or not p > 0.0:
        return None
    return c, p


class Growing:
    magic, prefix = MAGIC, PREFIX

    def __init__(self, capacity, fpr, ratio, growth, layers):
        self.capacity, self.fpr, self.ratio, self.growth = capacity, fpr, ratio, growth
        self.layers = layers

    @property
    def family(self):
        return self.layers[0].family

    def validate(self):
        if not 1 <= len(self.layers) <= MAX_LAYERS:
            raise ValueError("%d layers" % len(self.layers))
        first = self.layers[0]
        for i, f in enumerate(self.layers):
            # version, layout and hash are checked by ref.parse (there is one of each)
            if (f.family, f.flags, f.detail, f.seed) != (first.family, first.flags, first.detail, first.seed):
                raise ValueError("layer %d differs from layer 0" % i)
        self.check_sizing()
        if sum(f.nblocks for f in self.layers) > ref.MAX_NBLOCKS:
            raise ValueError("more than 2^23 blocks in all")

    def check_sizing(self):
        """§9.1: the header's parameters, and every layer sized by the chain."""
        if not 2 <= self.growth <= 16:
            raise ValueError("growth %d" % self.growth)
        if self.capacity < 1:
            raise ValueError("capacity %d" % self.capacity)
        if not 0.0 < self.fpr < 1.0:
            raise ValueError("fpr %r" % self.fpr)
        if not 0.0 < self.ratio < 1.0:
            raise ValueError("ratio %r" % self.ratio)
        for i, f in enumerate(self.layers):
            t = layer_target(self.capacity, self.fpr, self.ratio, self.growth, i)
            if t is None or f.capacity != t[0] or struct.pack("<d", f.fpr) != struct.pack("<d", t[1]):
                raise ValueError("layer %d: capacity %d fpr %r, not %r" % (i, f.capacity, f.fpr, t))

    # §9.2
    def contains(self, h):
        return any(f.contains(h) for f in self.layers)

    def contains_value(self, value, family):
        if self.family == 0:
            return False
        return self.contains(ref.hash_value(value, family, self.layers[0].seed))

    def add(self, h, size_for):
        """size_for(capacity, fpr) -> (nblocks, k): the server's §4 rule."""
        if self.contains(h):
            return
        newest = self.layers[-1]
        if newest.inserted >= newest.capacity:
            c, p = layer_target(self.capacity, self.fpr, self.ratio, self.growth, len(self.layers))
            nblocks, k = size_for(c, p)
            f = ref.Filter.empty(nblocks, k, newest.seed, c, p)
            f.family, f.flags, f.detail = newest.family, newest.flags, newest.detail
            self.layers.append(f)
        self.layers[-1].add(h)

    def to_bytes(self):
        head = HEADER.pack(self.magic, 1, len(self.layers), self.growth, 0, self.capacity,
                           self.fpr, self.ratio, b"\0" * 24)
        return head + b"".join(f.to_bytes() for f in self.layers)

    def head_text(self):
        return ["capacity=%d" % self.capacity, "fpr=" + ref.format_fpr(self.fpr),
                "ratio=" + ref.format_fpr(self.ratio), "growth=%d" % self.growth]

    def to_text(self, type_name=None):
        parts = [self.prefix] + self.head_text()
        parts += ["layer=" + f.to_text(type_name) for f in self.layers]
        return " ".join(parts)


class Union(Growing):
    """§10: independent layers of any sizes; growth and ratio are 0 (the
    reserved bytes of §10.1)."""
    magic, prefix = UNION_MAGIC, UNION_PREFIX

    def __init__(self, capacity, fpr, layers):
        super().__init__(capacity, fpr, 0.0, 0, layers)

    def check_sizing(self):
        """§10.1: the rate only in [0, 1]; the capacity the layers' sum (each
        >= 0 by §1), which must fit in an i64."""
        if not 0.0 <= self.fpr <= 1.0:
            raise ValueError("fpr %r" % self.fpr)
        total = sum(f.capacity for f in self.layers)
        if total > ref.I64_MAX or self.capacity != total:
            raise ValueError("capacity %d, the layers' sum %d" % (self.capacity, total))

    def head_text(self):
        return ["capacity=%d" % self.capacity, "fpr=" + ref.format_fpr(self.fpr)]

    def add(self, h, size_for):
        raise ValueError("a union is read-only (§10.2)")


def parse(data):
    """Parse and validate the binary form (FORMAT.md §9.1, §10.1)."""
    data = bytes(data)
    if len(data) < 64:
        raise ValueError("shorter than the header")
    magic, version, n, growth, res1, cap, fpr, ratio, res2 = HEADER.unpack_from(data)
    if magic not in (MAGIC, UNION_MAGIC):
        raise ValueError("bad magic %r" % magic)
    if version != 1:
        raise ValueError("unknown version %d" % version)
    if res1 != 0 or res2 != b"\0" * 24:
        raise ValueError("reserved bytes are not zero")
    # a union's growth and ratio fields are reserved too (the bytes, not the
    # values: a ratio of -0.0 is not 0 bytes)
    if magic == UNION_MAGIC and (data[8:16] != b"\0" * 8 or data[32:40] != b"\0" * 8):
        raise ValueError("reserved bytes are not zero")
    if not 1 <= n <= MAX_LAYERS:
        raise ValueError("%d layers" % n)
    layers, off = [], 64
    for i in range(n):
        if len(data) - off < 64:
            raise ValueError("layer %d: past the end" % i)
        nblocks, = struct.unpack_from("<Q", data, off + 24)
        end = off + 64 + 64 * nblocks if 1 <= nblocks <= ref.MAX_NBLOCKS else len(data)
        layers.append(ref.parse(data[off:min(end, len(data))]))
        off = end
    if off != len(data):
        raise ValueError("length: %d bytes after the last layer" % (len(data) - off))
    g = Union(cap, fpr, layers) if magic == UNION_MAGIC else Growing(cap, fpr, ratio, growth, layers)
    g.validate()
    return g


def parse_text(s, type_oid_resolver=None):
    """Parse the text form (FORMAT.md §9.4, §10.4)."""
    parts = s.split(" layer=")
    head = parts[0].split(" ")
    union = head[0] == UNION_PREFIX
    keys = ["capacity", "fpr"] if union else ["capacity", "fpr", "ratio", "growth"]
    if len(head) != len(keys) + 1 or head[0] not in (PREFIX, UNION_PREFIX) or \
            any(not t.startswith(k + "=") for k, t in zip(keys, head[1:])):
        raise ValueError("not a %s or %s text form" % (PREFIX, UNION_PREFIX))
    v = [t.split("=", 1)[1] for t in head[1:]]
    layers = [ref.parse_text(t, type_oid_resolver) for t in parts[1:]]
    if union:
        g = Union(ref._int_token(v[0], 0, ref.I64_MAX, "capacity"), float(v[1]), layers)
    else:
        g = Growing(ref._int_token(v[0], 1, ref.I64_MAX, "capacity"), float(v[1]), float(v[2]),
                    ref._int_token(v[3], 2, 16, "growth"), layers)
    g.validate()
    if g.to_text() != s:
        raise ValueError("not the text the output prints for this filter")
    return g
