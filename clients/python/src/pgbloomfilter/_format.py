"""The bytes and the text form of a filter (docs/FORMAT.md §1 and §5) and
of a growing filter (§9) or a union (§10).

Parsing checks every rule the server checks, so that a value this module
accepts is exactly a value PostgreSQL accepts.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import struct
from dataclasses import dataclass

from .errors import FormatError, NonPortableError, TextFormatError

MAGIC = b"BLMF"
HEADER = struct.Struct("<4sHBBBBHIqQQqdQ")
HEADER_SIZE = 64
BLOCK_BYTES = 64
BLOCK_BITS = 512
MAX_BLOCKS = 1 << 23
MAX_INSERTED = (1 << 63) - 1     # adds saturate here; more is invalid
MAX_HASHES = 64
MAX_FIELDS = 8

I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1
U64_MAX = (1 << 64) - 1

# element families (FORMAT.md §3)
NONE, INTEGER, FLOAT, NUMERIC, TEXT, BYTEA, UUID, BOOLEAN, DATE, TIMESTAMP, \
    TIMESTAMPTZ, ENUM, RECORD, OTHER = range(14)
FAMILY_NAMES = ("none", "integer", "float", "numeric", "text", "bytea", "uuid",
                "boolean", "date", "timestamp", "timestamptz", "enum", "record",
                "other")
FAMILY_IDS = {n: i for i, n in enumerate(FAMILY_NAMES)}

# the OIDs PostgreSQL fixes for the types of a portable family (and unknown,
# hashed as text): a filter of family other never names one of them in its
# family detail, and the server refuses a value that does (FORMAT.md §3.1)
PORTABLE_TYPE_OIDS = {
    16: "bool", 17: "bytea", 19: "name", 20: "int8", 21: "int2", 23: "int4",
    25: "text", 700: "float4", 701: "float8", 705: "unknown", 1042: "bpchar",
    1043: "varchar", 1082: "date", 1114: "timestamp", 1184: "timestamptz",
    1700: "numeric", 2950: "uuid",
}


def record_fields(detail: int) -> list[int]:
    """The field families of a record's family detail (nibbles, field 1
    lowest), or raise FormatError if they are not 1 to 8 valid families."""
    nibbles = [(detail >> (4 * i)) & 15 for i in range(MAX_FIELDS)]
    n = MAX_FIELDS
    while n > 0 and nibbles[n - 1] == 0:
        n -= 1
    if n == 0:
        raise FormatError("record family detail names no field")
    fields = nibbles[:n]
    for f in fields:
        if f == NONE or f == RECORD or f > OTHER:
            raise FormatError("record family detail %#x names an invalid field family" % detail)
    return fields


@dataclass(frozen=True)
class Header:
    """The header fields of a filter (FORMAT.md §1)."""
    family: int
    flags: int
    nhashes: int
    detail: int
    seed: int
    nblocks: int
    inserted: int
    capacity: int
    fpr: float

    @property
    def nonportable(self) -> bool:
        return bool(self.flags & 1)

    def validate(self) -> None:
        """The rules of §1 that do not concern the raw bytes."""
        if self.family > OTHER:
            raise FormatError("unknown element family %d" % self.family)
        if self.flags & ~1:
            raise FormatError("unknown flag bits %#x" % self.flags)
        if not 1 <= self.nhashes <= MAX_HASHES:
            raise FormatError("nhashes %d is not between 1 and 64" % self.nhashes)
        if not 1 <= self.nblocks <= MAX_BLOCKS:
            raise FormatError("nblocks %d is not between 1 and 2^23" % self.nblocks)
        if math.isnan(self.fpr) or not 0.0 <= self.fpr < 1.0:
            raise FormatError("target fpr %r is not in [0, 1)" % self.fpr)
        if self.capacity < 0:
            raise FormatError("capacity %d is negative" % self.capacity)
        if self.inserted > MAX_INSERTED:
            raise FormatError("inserted %d is more than 2^63 - 1" % self.inserted)
        if self.family == NONE and self.inserted != 0:
            raise FormatError("an empty filter (family none) with inserted = %d" % self.inserted)
        nonportable = self.family == OTHER
        if self.family == RECORD:
            nonportable = OTHER in record_fields(self.detail)
        elif self.family == OTHER:
            if self.detail == 0:
                raise FormatError("family other with type OID 0")
            if self.detail in PORTABLE_TYPE_OIDS:
                raise FormatError("family other names type OID %d (%s), which has a portable family"
                                  % (self.detail, PORTABLE_TYPE_OIDS[self.detail]))
        elif self.detail != 0:
            raise FormatError("family detail %#x must be 0 for family %s"
                              % (self.detail, FAMILY_NAMES[self.family]))
        if bool(self.flags & 1) != nonportable:
            raise FormatError("the non-portable flag disagrees with family %s"
                              % FAMILY_NAMES[self.family])

    def pack(self) -> bytes:
        return HEADER.pack(MAGIC, 1, 1, 1, self.family, self.flags, self.nhashes,
                           self.detail, self.seed, self.nblocks, self.inserted,
                           self.capacity, self.fpr, 0)

    def family_text(self) -> str:
        if self.family == RECORD:
            return "record(%s)" % ",".join(FAMILY_NAMES[f] for f in record_fields(self.detail))
        if self.family == OTHER:
            raise NonPortableError("the text form of a filter of family other names a "
                                   "PostgreSQL type (OID %d) that only the server can "
                                   "resolve" % self.detail)
        return FAMILY_NAMES[self.family]


def parse_header(data: bytes | bytearray | memoryview) -> Header:
    """Parse and validate a whole value's bytes; returns its header."""
    n = len(data)
    if n < HEADER_SIZE:
        raise FormatError("%d bytes is shorter than the 64-byte header" % n)
    (magic, version, layout, hashfn, family, flags, nhashes, detail, seed, nblocks,
     inserted, capacity, fpr, reserved) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise FormatError("not a bloomfilter value (magic %r)" % bytes(magic))
    if version != 1:
        raise FormatError("unknown format version %d" % version)
    if layout != 1:
        raise FormatError("unknown layout %d" % layout)
    if hashfn != 1:
        raise FormatError("unknown hash function %d" % hashfn)
    if reserved != 0:
        raise FormatError("the reserved header field is not 0")
    if not 1 <= nblocks <= MAX_BLOCKS:
        raise FormatError("nblocks %d is not between 1 and 2^23" % nblocks)
    if n != HEADER_SIZE + BLOCK_BYTES * nblocks:
        raise FormatError("%d bytes, but %d blocks need %d"
                          % (n, nblocks, HEADER_SIZE + BLOCK_BYTES * nblocks))
    h = Header(family, flags, nhashes, detail, seed, nblocks, inserted, capacity, fpr)
    h.validate()
    return h


# ---------------------------------------------------------------------------
# §5 text form

_TEXT_KEYS = ("layout", "hash", "family", "nhashes", "nbits", "seed", "capacity",
              "fpr", "inserted", "bits")
_DIGITS = re.compile(r"[0-9]{1,20}\Z")
# fpr= as bloomfilter output prints it; the canonical check at the end of
# _parse_text refuses every other spelling of the same number
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]+)?(e[+-][0-9]+)?\Z")
_B64 = re.compile(r"[A-Za-z0-9+/]*={0,2}\Z")


def _uint(s: str, what: str, hi: int = U64_MAX) -> int:
    if not _DIGITS.match(s):
        raise FormatError("%s=%r is not a number" % (what, s))
    v = int(s)
    if v > hi:
        raise FormatError("%s=%s is out of range" % (what, s))
    return v


def _float(s: str, what: str) -> float:
    if not _FLOAT.match(s):
        raise FormatError("%s=%r is not a number" % (what, s))
    return float(s)


def _int(s: str, what: str) -> int:
    neg = s.startswith("-")
    u = _uint(s[1:] if neg else s, what)
    v = -u if neg else u
    if not I64_MIN <= v <= I64_MAX:
        raise FormatError("%s=%s is out of range" % (what, s))
    return v


def _family(s: str) -> tuple[int, int]:
    if s.startswith("record(") and s.endswith(")"):
        names = s[7:-1].split(",")
        if len(names) > MAX_FIELDS:
            raise FormatError("a record of more than 8 fields")
        detail = 0
        for i, n in enumerate(names):
            f = FAMILY_IDS.get(n)
            if f is None or f == NONE or f == RECORD:
                raise FormatError("bad record field family %r" % n)
            detail |= f << (4 * i)
        return RECORD, detail
    if s.startswith("other(") and s.endswith(")"):
        raise NonPortableError("the filter holds values of the PostgreSQL type %s, which "
                               "only the server can hash; read its bytes instead" % s[6:-1])
    f = FAMILY_IDS.get(s)
    if f is None or f == RECORD or f == OTHER:
        raise FormatError("unknown element family %r" % s)
    return f, 0


def parse_text(s: str) -> bytes:
    """The bytes of a filter given in the text form (validated)."""
    try:
        return _parse_text(s)
    except TextFormatError:
        raise
    except FormatError as e:
        raise TextFormatError(str(e)) from None


def _parse_text(s: str) -> bytes:
    toks = s.split(" ")
    if len(toks) != 11 or toks[0] != "bloomfilter:1":
        raise FormatError("not the text form of a bloomfilter (\"bloomfilter:1 layout=...\")")
    vals = []
    for key, tok in zip(_TEXT_KEYS, toks[1:]):
        if not tok.startswith(key + "="):
            raise FormatError("expected %s= in the text form" % key)
        vals.append(tok[len(key) + 1:])
    layout, hashfn, fam, k, nbits, seed, cap, fpr, ins, bits = vals
    if layout != "blocked":
        raise FormatError("unknown layout %r" % layout)
    if hashfn != "xxh3_64":
        raise FormatError("unknown hash function %r" % hashfn)
    family, detail = _family(fam)
    k = _uint(k, "nhashes")
    if not 1 <= k <= MAX_HASHES:
        raise FormatError("nhashes %d is not between 1 and 64" % k)
    nb = _uint(nbits, "nbits")
    if nb == 0 or nb % BLOCK_BITS or nb // BLOCK_BITS > MAX_BLOCKS:
        raise FormatError("nbits %d is not a positive multiple of 512 up to 2^32" % nb)
    seedv = _int(seed, "seed")
    capv = _int(cap, "capacity")
    if capv < 0:
        raise FormatError("capacity %d is negative" % capv)
    fprv = _float(fpr, "fpr")
    if not 0.0 <= fprv < 1.0:
        raise FormatError("fpr %r is not in [0, 1)" % fpr)
    insv = _uint(ins, "inserted")
    nbytes = nb // 8
    if len(bits) != 4 * ((nbytes + 2) // 3) or not _B64.match(bits):
        raise FormatError("bits= is not the base64 of %d bytes" % nbytes)
    try:
        raw = base64.b64decode(bits, validate=True)
    except (binascii.Error, ValueError):
        raise FormatError("bits= is not valid base64") from None
    if len(raw) != nbytes or base64.b64encode(raw).decode("ascii") != bits:
        raise FormatError("bits= is not the canonical base64 of %d bytes" % nbytes)
    flags = 1 if family == RECORD and OTHER in record_fields(detail) else 0
    h = Header(family, flags, k, detail, seedv, nb // BLOCK_BITS, insv, capv, fprv)
    h.validate()
    # one text per filter, as the server reads it: leading zeros, signs and
    # other spellings of the same numbers are refused
    if to_text(h, raw) != s:
        raise FormatError("not the text bloomfilter output prints for this filter")
    return h.pack() + raw


def format_fpr(x: float) -> str:
    """The shortest text that reads back to the same float8, as
    PostgreSQL prints it (FORMAT.md §5)."""
    if x == 0.0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    s = repr(x)                         # Python's repr is that shortest text
    return s[:-2] if s.endswith(".0") else s


def to_text(header: Header, bits: bytes | bytearray | memoryview) -> str:
    return " ".join((
        "bloomfilter:1", "layout=blocked", "hash=xxh3_64",
        "family=" + header.family_text(), "nhashes=%d" % header.nhashes,
        "nbits=%d" % (header.nblocks * BLOCK_BITS), "seed=%d" % header.seed,
        "capacity=%d" % header.capacity, "fpr=" + format_fpr(header.fpr),
        "inserted=%d" % header.inserted,
        "bits=" + base64.b64encode(bytes(bits)).decode("ascii")))


# ---------------------------------------------------------------------------
# §9 growing filters: a header, then layers that are each a filter of §1;
# §10 unions: the same bytes under another magic, without the sizing chain

GROW_MAGIC = b"BLMG"
UNION_MAGIC = b"BLMU"
GROW_HEADER = struct.Struct("<4sHHIIqdd24s")
GROW_TEXT_PREFIX = "bloomgrowing:1"
UNION_TEXT_PREFIX = "bloomunion:1"
MAX_LAYERS = 64
MIN_GROWTH = 2
MAX_GROWTH = 16
_U64 = struct.Struct("<Q")


@dataclass(frozen=True)
class GrowHeader:
    """The header fields of a growing filter (FORMAT.md §9.1), or of a
    union (§10.1: growth and ratio 0)."""
    nlayers: int
    growth: int        # g: layer i holds capacity * g^i keys
    capacity: int      # c: layer 0's capacity; of a union, the layers' sum
    fpr: float         # p: the rate of the whole filter; of a union, the bound of §10.3
    ratio: float       # r: layer 0 is sized for p * (1 - r), each later one for r times less
    union: bool = False

    def pack(self) -> bytes:
        return GROW_HEADER.pack(UNION_MAGIC if self.union else GROW_MAGIC, 1, self.nlayers,
                                self.growth, 0, self.capacity, self.fpr, self.ratio, bytes(24))


def is_growing(data: bytes | bytearray | memoryview) -> bool:
    """Whether a value's bytes are of the growing form (told by the magic)."""
    return bytes(data[:4]) == GROW_MAGIC


def is_union(data: bytes | bytearray | memoryview) -> bool:
    """Whether a value's bytes are of the union form (told by the magic)."""
    return bytes(data[:4]) == UNION_MAGIC


def parse_growing(data: bytes | bytearray | memoryview
                  ) -> tuple[GrowHeader, list[tuple[int, int, Header]]]:
    """Parse and validate a growing filter's bytes (FORMAT.md §9.1) or a
    union's (§10.1): its header, and each layer's start, end and header."""
    n = len(data)
    if n < HEADER_SIZE:
        raise FormatError("%d bytes is shorter than the 64-byte header" % n)
    magic, version, nlayers, growth, res1, capacity, fpr, ratio, res2 = \
        GROW_HEADER.unpack_from(data)
    union = magic == UNION_MAGIC
    if magic != GROW_MAGIC and not union:
        raise FormatError("not a growing bloomfilter or union value (magic %r)" % bytes(magic))
    if version != 1:
        raise FormatError("unknown growing format version %d" % version)
    if not 1 <= nlayers <= MAX_LAYERS:
        raise FormatError("%d layers is not between 1 and 64" % nlayers)
    if union:
        # independent layers: no chain, and the rate only a bound in [0, 1]
        if not 0.0 <= fpr <= 1.0:
            raise FormatError("the union's fpr %r is not in [0, 1]" % fpr)
        if bytes(data[8:16]) != bytes(8) or bytes(data[32:64]) != bytes(32):
            raise FormatError("a reserved header field is not 0")
    else:
        if not MIN_GROWTH <= growth <= MAX_GROWTH:
            raise FormatError("growth %d is not between 2 and 16" % growth)
        if capacity < 1:
            raise FormatError("capacity %d is not positive" % capacity)
        if not 0.0 < fpr < 1.0:
            raise FormatError("target fpr %r is not in (0, 1)" % fpr)
        if not 0.0 < ratio < 1.0:
            raise FormatError("tightening ratio %r is not in (0, 1)" % ratio)
        if res1 != 0 or res2 != bytes(24):
            raise FormatError("a reserved header field is not 0")
    view = memoryview(data)
    layers: list[tuple[int, int, Header]] = []
    off = HEADER_SIZE
    blocks = 0
    total = 0                                       # a union's capacities
    cap, p = capacity, fpr * (1.0 - ratio)         # layer 0's sizing; then the chain
    for i in range(nlayers):
        if i:
            cap, p = cap * growth, p * ratio
        if n - off < HEADER_SIZE:
            raise FormatError("the value ends before layer %d" % i)
        # a layer's own nblocks says where it ends; a bad one is its error
        nb = _U64.unpack_from(data, off + 24)[0]
        end = off + HEADER_SIZE + BLOCK_BYTES * nb
        if not 1 <= nb <= MAX_BLOCKS or end > n:
            end = n
        try:
            h = parse_header(view[off:end])
        except FormatError as e:
            raise FormatError("layer %d: %s" % (i, e)) from None
        first = layers[0][2] if layers else h
        if (h.family, h.flags, h.detail, h.seed) != (first.family, first.flags, first.detail,
                                                     first.seed):
            raise FormatError("layer %d differs from layer 0 in its seed, element family "
                              "or flags" % i)
        if union:
            total += h.capacity                     # each >= 0 (§1)
            if total > I64_MAX:
                raise FormatError("the layers' capacities add up to more than the largest "
                                  "bigint")
        elif cap > I64_MAX or not p > 0.0 or h.capacity != cap or h.fpr != p:
            raise FormatError("layer %d is sized for capacity %d at fpr %r, not as the "
                              "filter's capacity, fpr, growth and ratio say"
                              % (i, h.capacity, h.fpr))
        blocks += h.nblocks
        if blocks > MAX_BLOCKS:
            raise FormatError("the layers together hold more than 2^23 blocks")
        layers.append((off, end, h))
        off = end
    if off != n:
        raise FormatError("%d bytes, but the %d layers end at %d" % (n, nlayers, off))
    if union and capacity != total:
        raise FormatError("the union's capacity %d is not its layers' sum %d" % (capacity, total))
    return GrowHeader(nlayers, growth, capacity, fpr, ratio, union), layers


def _growing_head(gh: GrowHeader) -> str:
    if gh.union:
        return "%s capacity=%d fpr=%s" % (UNION_TEXT_PREFIX, gh.capacity, format_fpr(gh.fpr))
    return "%s capacity=%d fpr=%s ratio=%s growth=%d" % (
        GROW_TEXT_PREFIX, gh.capacity, format_fpr(gh.fpr), format_fpr(gh.ratio), gh.growth)


def growing_to_text(gh: GrowHeader, layer_texts: list[str]) -> str:
    """The text form of a growing filter (FORMAT.md §9.4) or a union
    (§10.4) from its header and its layers' text forms."""
    return _growing_head(gh) + "".join(" layer=" + t for t in layer_texts)


def is_growing_text(s: str) -> bool:
    """Whether a text is (meant to be) a growing filter's or a union's."""
    return s.startswith("bloomgrowing:") or s.startswith("bloomunion:")


def parse_growing_text(s: str) -> bytes:
    """The bytes of a growing filter or a union given in the text form
    (validated)."""
    try:
        return _parse_growing_text(s)
    except TextFormatError:
        raise
    except FormatError as e:
        raise TextFormatError(str(e)) from None


def _parse_growing_text(s: str) -> bytes:
    head, *layers = s.split(" layer=")
    toks = head.split(" ")
    union = toks[0] == UNION_TEXT_PREFIX
    keys = ("capacity", "fpr") if union else ("capacity", "fpr", "ratio", "growth")
    if len(toks) != len(keys) + 1 or toks[0] not in (GROW_TEXT_PREFIX, UNION_TEXT_PREFIX) or \
            not all(t.startswith(k + "=") for k, t in zip(keys, toks[1:])):
        raise FormatError("not the text form of a growing bloomfilter or a union "
                          "(\"bloomgrowing:1 capacity=... layer=...\", "
                          "\"bloomunion:1 capacity=... layer=...\")")
    vals = [t.split("=", 1)[1] for t in toks[1:]]
    if not 1 <= len(layers) <= MAX_LAYERS:
        raise FormatError("%d layers is not between 1 and 64" % len(layers))
    if union:
        gh = GrowHeader(len(layers), 0, _int(vals[0], "capacity"), _float(vals[1], "fpr"), 0.0,
                        True)
    else:
        cap, fpr, ratio, growth = vals
        gh = GrowHeader(len(layers), _uint(growth, "growth", 0xFFFFFFFF), _int(cap, "capacity"),
                        _float(fpr, "fpr"), _float(ratio, "ratio"))
    # one text per value: the header as output prints it (each layer's
    # text is checked by parse_text)
    if _growing_head(gh) != head:
        raise FormatError("not the text bloomfilter output prints for this value")
    raw = [gh.pack()]
    blocks = 0
    for t in layers:            # each as bloomfilter input reads it
        b = parse_text(t)
        blocks += (len(b) - HEADER_SIZE) // BLOCK_BYTES
        if blocks > MAX_BLOCKS:
            raise FormatError("the layers together hold more than 2^23 blocks")
        raw.append(b)
    data = b"".join(raw)
    parse_growing(data)
    return data
