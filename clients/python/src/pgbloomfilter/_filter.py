"""BloomFilter: a filter read from PostgreSQL, answering as the server does
(FORMAT.md §2 for the bits, §6 for the estimates and set algebra, §9 for
the growing form, GrowingBloomFilter, §10 for unions, UnionBloomFilter)."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, Optional, Union

import xxhash

from . import _format as F
from ._keys import TypeSpec, key_bytes
from .errors import (FamilyMismatchError, GrowingFilterError, IncompatibleFiltersError,
                     NonPortableError, UnionFilterError)

_M = (1 << 64) - 1
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB
# (g + 1) * golden ratio, for the groups of 7 positions of up to 64 hashes
_GOLDEN = tuple(((g + 1) * 0x9E3779B97F4A7C15) & _M for g in range(10))
_Q = struct.Struct("<q")
_xxh3 = xxhash.xxh3_64_intdigest

Bytes = Union[bytes, bytearray, memoryview]


@dataclass(frozen=True)
class FilterInfo:
    """What bf_info reports, computed from the bytes (FORMAT.md §6; for a
    growing filter or a union, the sums over its layers of §9.5)."""
    family: str
    portable: bool
    nbits: int
    nhashes: Optional[int]        # None for a growing filter or a union (each layer has its own)
    seed: int
    bytes: int
    capacity: int
    target_fpr: float
    inserted: int
    bits_set: int
    fill_ratio: float
    estimated_cardinality: float
    estimated_fpr: float
    saturated: bool


@dataclass(frozen=True)
class LayerInfo:
    """One layer of a filter, as a row of bf_layers (without the fill): a
    plain filter is its only layer."""
    layer: int
    nbits: int
    nhashes: int
    capacity: int                 # 0 (and target_fpr 0) when sized explicitly
    target_fpr: float
    inserted: int


def _bit_hit_probability(nblocks: int, k: int) -> float:
    return -math.expm1(k * math.log1p(-1.0 / F.BLOCK_BITS)) / nblocks


def _round_half_away(x: float) -> int:
    i = math.floor(x)
    return i + 1 if x - i >= 0.5 else i


class BloomFilter:
    """A `bloomfilter` value.  Build one with BloomFilter.from_bytes (the
    value's `::bytea`, binary COPY, a driver's binary result),
    BloomFilter.from_text (its text form) or BloomFilter.create_sized.
    Given a growing filter (bf_create_growing), these return a
    GrowingBloomFilter, a subclass that answers lookups the same way; given
    a union (bf_union_layered, a distributed table's filter), a
    UnionBloomFilter, read-only."""

    __slots__ = ("_buf", "_family", "_detail", "_k", "_nblocks", "_seed", "_useed",
                 "_nonportable", "__weakref__")

    def __new__(cls, data: Bytes = b"") -> "BloomFilter":
        # the form is told by the magic (FORMAT.md §9.1, §10)
        if cls is BloomFilter and F.is_growing(data):
            cls = GrowingBloomFilter
        elif cls is BloomFilter and F.is_union(data):
            cls = UnionBloomFilter
        return object.__new__(cls)

    def __init__(self, data: Bytes):
        """Parse and validate the bytes (FORMAT.md §1, or §9 for a growing
        filter, §10 for a union); the filter keeps its own copy."""
        self._init(bytearray(data))

    def _init(self, buf: Any) -> None:
        """Validate buf (a plain filter) and take it."""
        self._buf = buf
        self._load(F.parse_header(buf))

    @staticmethod
    def _plain(buf: Any, h: Optional[F.Header] = None) -> "BloomFilter":
        """A plain filter (never the growing form) on buf without copying it:
        a window's slot, a growing filter's layer (h: its validated header)."""
        f = object.__new__(BloomFilter)
        f._buf = buf
        f._load(F.parse_header(buf) if h is None else h)
        return f

    def _load(self, h: F.Header) -> None:
        self._family = h.family
        self._detail = h.detail
        self._k = h.nhashes
        self._nblocks = h.nblocks
        self._seed = h.seed
        self._useed = h.seed & _M
        self._nonportable = h.nonportable

    @classmethod
    def from_bytes(cls, data: Bytes) -> "BloomFilter":
        return cls(data)

    @classmethod
    def _own(cls, buf: bytearray) -> "BloomFilter":
        """Validate and take buf without copying it (the caller gives it up)."""
        f = cls.__new__(cls, buf)
        f._init(buf)
        return f

    @classmethod
    def from_text(cls, text: str) -> "BloomFilter":
        """Parse the text form (FORMAT.md §5, or §9.4 for a growing filter,
        §10.4 for a union).
        A non-portable filter's text names a PostgreSQL type and cannot be
        read here (NonPortableError)."""
        if F.is_growing_text(text):
            return cls(F.parse_growing_text(text))
        return cls(F.parse_text(text))

    @classmethod
    def create_sized(cls, nbits: int, nhashes: int, seed: int = 0) -> "BloomFilter":
        """An empty filter as bf_create_sized(nbits, nhashes, seed) makes it
        (nbits rounded up to a multiple of 512)."""
        nblocks = max(1, -(-nbits // F.BLOCK_BITS))
        h = F.Header(F.NONE, 0, nhashes, 0, seed, nblocks, 0, 0, 0.0)
        h.validate()
        return cls(h.pack() + bytes(F.BLOCK_BYTES * nblocks))

    # ------------------------------------------------------------------
    @property
    def is_growing(self) -> bool:
        """True for a growing filter (bf_create_growing, FORMAT.md §9)."""
        return False

    @property
    def is_union(self) -> bool:
        """True for a union (bf_union_layered, a distributed table's filter,
        FORMAT.md §10)."""
        return False

    @property
    def header(self) -> F.Header:
        return F.parse_header(self._buf)

    def _parts(self) -> tuple["BloomFilter", ...]:
        """The plain filters a lookup consults: this one, or the layers."""
        return (self,)

    @property
    def layers(self) -> list[LayerInfo]:
        """The layers, oldest first, as bf_layers lists them (one for a
        plain filter)."""
        out = []
        for i, part in enumerate(self._parts()):
            h = part.header
            out.append(LayerInfo(i, h.nblocks * F.BLOCK_BITS, h.nhashes, h.capacity, h.fpr,
                                 h.inserted))
        return out

    @property
    def family(self) -> str:
        """The element family: 'integer', 'text', ..., 'record(integer,text)',
        'none' while empty."""
        if self._family == F.RECORD:
            return "record(%s)" % ",".join(F.FAMILY_NAMES[f] for f in F.record_fields(self._detail))
        return F.FAMILY_NAMES[self._family]

    @property
    def nhashes(self) -> int:
        return self._k

    @property
    def nbits(self) -> int:
        return self._nblocks * F.BLOCK_BITS

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def inserted(self) -> int:
        return int.from_bytes(self._buf[32:40], "little")

    def to_bytes(self) -> bytes:
        """The value's bytes (what `::bytea` gives and `::bloomfilter` reads)."""
        return bytes(self._buf)

    def to_text(self) -> str:
        return F.to_text(F.parse_header(self._buf), memoryview(self._buf)[F.HEADER_SIZE:])

    def __bytes__(self) -> bytes:
        return bytes(self._buf)

    def __eq__(self, other: object) -> bool:
        """As the server's `=`: the same bytes except `inserted`."""
        if not isinstance(other, BloomFilter):
            return NotImplemented
        a, b = self._buf, other._buf
        return len(a) == len(b) and a[:32] == b[:32] and a[40:] == b[40:]

    __hash__ = None  # type: ignore[assignment]   (mutable)

    def __repr__(self) -> str:
        return "<BloomFilter family=%s nbits=%d nhashes=%d seed=%d inserted=%d>" % (
            self.family, self.nbits, self._k, self._seed, self.inserted)

    def copy(self) -> "BloomFilter":
        return BloomFilter(self._buf)

    # ------------------------------------------------------------------
    def hash(self, value: Any, type: TypeSpec = None) -> int:
        """bf_hash(value, seed) of this filter's seed, as a signed bigint."""
        h = self._hash(value, type, check=False)
        return h - (1 << 64) if h >= (1 << 63) else h

    def _hash(self, value: Any, typ: TypeSpec, check: bool = True) -> int:
        if self._nonportable:
            raise NonPortableError("the filter holds values of a type only PostgreSQL can "
                                   "hash (family %s)" % self.family)
        fam, det, b = key_bytes(value, typ, self._family, self._detail)
        if check and self._family != F.NONE and (fam != self._family or det != self._detail):
            raise FamilyMismatchError(
                "a key of family %s for a filter of family %s"
                % (F.FAMILY_NAMES[fam] if fam != F.RECORD else "record(%s)" % ",".join(
                    F.FAMILY_NAMES[f] for f in F.record_fields(det)), self.family))
        return _xxh3(b, self._useed)

    def contains(self, value: Any, type: TypeSpec = None) -> bool:
        """False if the value was never added; True if it probably was.

        The value's family comes from its Python type (see the package's
        documentation) or from `type`, a SQL type name ('int4', 'float4',
        'bpchar', 'numeric', 'timestamptz', ...; for a composite key a
        sequence of them), in which case a str value is read as PostgreSQL
        prints that type."""
        if type is None and value.__class__ is int and self._family == F.INTEGER:
            try:                                        # the fast path
                h = _xxh3(_Q.pack(value), self._useed)
            except struct.error:
                raise ValueError("%d is out of the range of bigint" % value) from None
        else:
            h = self._hash(value, type)
            if self._family == F.NONE:
                return False
        return self._test_hash(h)

    __contains__ = contains

    def _test_hash(self, h: int) -> bool:
        """FORMAT.md §2: are the k bits of hash h set?"""
        buf = self._buf
        o = 64 + ((((h >> 32) * self._nblocks) >> 32) << 6)
        left = self._k
        for c in _GOLDEN:
            z = (h + c) & _M
            z = ((z ^ (z >> 30)) * _C1) & _M
            z = ((z ^ (z >> 27)) * _C2) & _M
            z ^= z >> 31
            for _ in range(7 if left > 7 else left):
                if not (buf[o + ((z >> 3) & 63)] >> (z & 7)) & 1:
                    return False
                z >>= 9
            left -= 7
            if left <= 0:
                return True
        return True  # pragma: no cover  (k <= 64 = 10 groups)

    def add(self, value: Any, type: TypeSpec = None) -> bool:
        """Add a value (as bf_add); True if it turned on a bit.  An empty
        filter takes the family of its first value."""
        if self._family == F.NONE:
            fam, det = self._family_of(value, type)
            h = self._hash(value, type, check=False)
            self._adopt(fam, det)
        else:
            h = self._hash(value, type)
        return self._add_hash(h)

    def _family_of(self, value: Any, type: TypeSpec) -> tuple[int, int]:
        """(family, detail) of a value about to be the first one added."""
        fam, det, _b = key_bytes(value, type, F.NONE, 0)
        if fam == F.RECORD and F.OTHER in F.record_fields(det):
            raise NonPortableError("a field of no portable family")
        return fam, det

    def _adopt(self, fam: int, det: int) -> None:
        """An empty filter takes the family of its first value."""
        self._buf[8] = fam
        struct.pack_into("<I", self._buf, 12, det)
        self._family, self._detail = fam, det

    def _add_hash(self, h: int) -> bool:
        buf = self._buf
        o = 64 + ((((h >> 32) * self._nblocks) >> 32) << 6)
        changed = False
        left = self._k
        for c in _GOLDEN:
            z = (h + c) & _M
            z = ((z ^ (z >> 30)) * _C1) & _M
            z = ((z ^ (z >> 27)) * _C2) & _M
            z ^= z >> 31
            for _ in range(7 if left > 7 else left):
                i = o + ((z >> 3) & 63)
                m = 1 << (z & 7)
                if not buf[i] & m:
                    buf[i] |= m
                    changed = True
                z >>= 9
            left -= 7
            if left <= 0:
                break
        if changed:
            struct.pack_into("<Q", buf, 32, min(self.inserted + 1, F.MAX_INSERTED))
        return changed

    # ------------------------------------------------------------------
    def _combine(self, other: "BloomFilter", intersect: bool) -> "BloomFilter":
        if self.is_union or other.is_union:
            raise UnionFilterError("unions of bloomfilters cannot be combined (union, "
                                   "intersection): the server refuses it too")
        if self.is_growing or other.is_growing:
            raise GrowingFilterError("growing bloomfilters cannot be combined (union, "
                                     "intersection): the server refuses it too")
        a, b = F.parse_header(self._buf), F.parse_header(other._buf)
        for what, x, y in (("nbits", a.nblocks * F.BLOCK_BITS, b.nblocks * F.BLOCK_BITS),
                           ("nhashes", a.nhashes, b.nhashes), ("seed", a.seed, b.seed)):
            if x != y:
                raise IncompatibleFiltersError("cannot combine bloomfilters with different "
                                               "parameters: %s %d and %d" % (what, x, y))
        if a.family != F.NONE and b.family != F.NONE and (a.family, a.detail) != (b.family, b.detail):
            raise IncompatibleFiltersError("cannot combine bloomfilters of families %s and %s"
                                           % (self.family, other.family))
        n = len(self._buf) - F.HEADER_SIZE
        x = int.from_bytes(self._buf[F.HEADER_SIZE:], "little")
        y = int.from_bytes(other._buf[F.HEADER_SIZE:], "little")
        z = (x & y) if intersect else (x | y)
        fam, det, flags = (a.family, a.detail, a.flags) if a.family != F.NONE \
            else (b.family, b.detail, b.flags)
        est = _estimate_inserted(z.bit_count(), a.nblocks, a.nhashes)
        if fam == F.NONE:
            ins = 0
        elif intersect:
            ins = min(est, a.inserted, b.inserted)
        else:
            ins = est
        h = F.Header(fam, flags, a.nhashes, det, a.seed, a.nblocks, ins, a.capacity, a.fpr)
        return BloomFilter(h.pack() + z.to_bytes(n, "little"))

    def union(self, other: "BloomFilter") -> "BloomFilter":
        """bf_union: the filter of both filters' values (same nbits, nhashes
        and seed; the result keeps this filter's capacity and target)."""
        return self._combine(other, False)

    def intersection(self, other: "BloomFilter") -> "BloomFilter":
        """bf_intersect: bits set in both (its answers include every value
        added to both, and more)."""
        return self._combine(other, True)

    __or__ = union
    __and__ = intersection

    # ------------------------------------------------------------------
    def fpr(self) -> float:
        """The false-positive rate of the bits as they are (FORMAT.md §6.2;
        of a growing filter or a union, that of any of its layers answering)."""
        return self._summary()[1]

    def _summary(self) -> tuple[int, float, float]:
        """Bits set, estimated fpr and cardinality of the layers together,
        as the server sums them (§9.5); of a plain filter, its own."""
        bits_set, fpr, card = 0, 0.0, 0.0
        for part in self._parts():
            b, f = part._fill()
            bits_set += b
            fpr = fpr + f - fpr * f             # a key passes if any layer passes it
            card += _estimate_cardinality(b, part._nblocks, part._k)
        return bits_set, fpr, card

    def _fill(self) -> tuple[int, float]:
        k = self._k
        pw = [(c / F.BLOCK_BITS) ** k for c in range(F.BLOCK_BITS + 1)]
        buf = memoryview(self._buf)
        total = 0
        s = 0.0
        frm = int.from_bytes
        for o in range(F.HEADER_SIZE, len(buf), F.BLOCK_BYTES):
            c = frm(buf[o:o + F.BLOCK_BYTES], "little").bit_count()
            total += c
            s += pw[c]
        return total, s / self._nblocks

    def cardinality(self) -> float:
        """bf_cardinality: the estimated number of distinct values added."""
        return self._summary()[2]

    def info(self) -> FilterInfo:
        """bf_info (of a growing filter or a union: sums over the layers,
        nhashes None)."""
        target = self.header.fpr
        bits_set, fpr, card = self._summary()
        nbits = self.nbits
        # a layered value is saturated past its header's rate, even a union's
        # 0; a plain filter sized explicitly past half its bits (§6.3)
        layered = isinstance(self, GrowingBloomFilter)
        return FilterInfo(
            family=self.family, portable=not self._nonportable, nbits=nbits,
            nhashes=self.nhashes, seed=self._seed, bytes=len(self._buf),
            capacity=min(sum(x.capacity for x in self.layers), F.I64_MAX), target_fpr=target,
            inserted=self.inserted, bits_set=bits_set, fill_ratio=bits_set / nbits,
            estimated_cardinality=card, estimated_fpr=fpr,
            saturated=(fpr > target) if target > 0.0 or layered else bits_set > nbits / 2.0)


class GrowingBloomFilter(BloomFilter):
    """A growing filter (bf_create_growing, FORMAT.md §9): plain filters,
    the layers, that the server appends as keys arrive.  A lookup hashes
    the value once and answers True if any layer holds it; printing and
    the estimates work as for a plain filter.  Adding and set algebra are
    refused (GrowingFilterError): the server adds to it."""

    __slots__ = ("_gh", "_layers")

    def _init(self, buf: Any) -> None:
        gh, spans = F.parse_growing(buf)
        view = memoryview(buf)
        self._buf, self._gh = buf, gh
        self._layers = tuple(BloomFilter._plain(view[a:b], h) for a, b, h in spans)
        self._load(spans[0][2])             # the seed and family all layers share

    @property
    def is_growing(self) -> bool:
        return True

    @property
    def header(self) -> F.GrowHeader:       # type: ignore[override]
        """The growing header: nlayers, growth, capacity, fpr, ratio."""
        return self._gh

    def _parts(self) -> tuple[BloomFilter, ...]:
        return self._layers

    @property
    def nhashes(self) -> None:              # type: ignore[override]
        """None, as bf_info: each layer has its own (see layers)."""
        return None

    @property
    def nbits(self) -> int:
        return sum(x.nbits for x in self._layers)

    @property
    def inserted(self) -> int:
        return min(sum(x.inserted for x in self._layers), F.MAX_INSERTED)

    def to_text(self) -> str:
        return F.growing_to_text(self._gh, [x.to_text() for x in self._layers])

    def __eq__(self, other: object) -> bool:
        """As the server's `=` (§9.5): the same bytes except the layers'
        `inserted`; never equal to a plain filter."""
        if not isinstance(other, BloomFilter):
            return NotImplemented
        if not isinstance(other, GrowingBloomFilter):
            return False
        return len(self._buf) == len(other._buf) and self._buf[:F.HEADER_SIZE] == \
            other._buf[:F.HEADER_SIZE] and self._layers == other._layers

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple:
        return BloomFilter, (bytes(self._buf),)     # (the layers are views of _buf)

    def __repr__(self) -> str:
        gh = self._gh
        return ("<GrowingBloomFilter family=%s layers=%d capacity=%d fpr=%s growth=%d "
                "nbits=%d seed=%d inserted=%d>" % (
                    self.family, gh.nlayers, gh.capacity, F.format_fpr(gh.fpr), gh.growth,
                    self.nbits, self._seed, self.inserted))

    def _test_hash(self, h: int) -> bool:
        """FORMAT.md §9.2: does any layer hold hash h?"""
        for layer in self._layers:
            if layer._test_hash(h):
                return True
        return False

    def add(self, value: Any, type: TypeSpec = None) -> bool:
        raise GrowingFilterError("a growing bloomfilter cannot be added to here: growing "
                                 "filters are added to on the server (bf_add, bf_add_all), "
                                 "which appends their layers")


class UnionBloomFilter(GrowingBloomFilter):
    """A union (bf_union_layered, FORMAT.md §10): plain filters of any
    sizes side by side, such as the filter of a table distributed by
    Citus, one layer per shard.  It has the bytes of a growing filter under
    another magic, without the sizing chain, and is read alike; it is
    read-only: adding and set algebra are refused (UnionFilterError)."""

    __slots__ = ()

    @property
    def is_growing(self) -> bool:
        return False

    @property
    def is_union(self) -> bool:
        return True

    @property
    def header(self) -> F.GrowHeader:       # type: ignore[override]
        """The union's header: nlayers, capacity (the layers' sum), fpr (the
        bound 1 - prod(1 - p_i) of the layers' targets); growth and ratio 0."""
        return self._gh

    def __repr__(self) -> str:
        gh = self._gh
        return ("<UnionBloomFilter family=%s layers=%d capacity=%d fpr=%s nbits=%d seed=%d "
                "inserted=%d>" % (self.family, gh.nlayers, gh.capacity, F.format_fpr(gh.fpr),
                                  self.nbits, self._seed, self.inserted))

    def add(self, value: Any, type: TypeSpec = None) -> bool:
        raise UnionFilterError("a union of bloomfilters is read-only: its layers were sized "
                               "for other sets of keys; add to the filters it was made from "
                               "(the shards' filters) and read it again")


def _estimate_cardinality(bits_set: int, nblocks: int, k: int) -> float:
    m = float(nblocks * F.BLOCK_BITS)
    if bits_set == 0:
        return 0.0
    if bits_set >= m:
        return math.inf
    return math.log1p(-bits_set / m) / math.log1p(-_bit_hit_probability(nblocks, k))


def _estimate_inserted(bits_set: int, nblocks: int, k: int) -> int:
    m = float(nblocks * F.BLOCK_BITS)
    if bits_set == 0:
        return 0
    x = min(float(bits_set), m - 0.5)
    return _round_half_away(math.log1p(-x / m) / math.log1p(-_bit_hit_probability(nblocks, k)))
