#!/usr/bin/python3
"""Independent reference reader/writer of the `bloomfilter` format, version 1.

Written from docs/FORMAT.md alone (not from the C sources), to show that the
document is precise enough to implement a reader in another language, and
to pin the extension's hashing and bytes (see test/reference_check.py).

Library:
    parse(data: bytes) -> Filter          validates every rule of FORMAT.md §1
    Filter.empty(nblocks, k, seed, capacity=0, fpr=0.0)
    canonical(value, family) -> bytes     FORMAT.md §3
    hash_value(value, family, seed) -> int (u64)   FORMAT.md §2
    Filter.add(h) / Filter.contains(h)    on a u64 hash
    Filter.add_value(v, family) / Filter.contains_value(v, family)
    Filter.to_bytes(), Filter.to_text(), parse_text(s)   FORMAT.md §1, §5

Families are named as in FORMAT.md §3: integer, float, numeric, text,
bytea, uuid, boolean, date, timestamp, timestamptz, enum, record, other.
A record value is a sequence of (family, value) pairs; value None is NULL.
A field of family `other` must be given as its 8-byte hash, i.e. an int
(the result of the type's extended hash function with seed 0), because
that hash cannot be computed outside PostgreSQL.

CLI:
    reference.py contains HEXFILTER FAMILY VALUE   -> prints true/false
    reference.py hash FAMILY VALUE [SEED]          -> prints bf_hash (signed)
    reference.py text HEXFILTER                    -> prints the text form
    reference.py check HEXFILTER                   -> validates, prints header
"""

import base64
import datetime
import decimal
import math
import struct
import sys
import uuid as uuidmod

import xxhash

U64 = (1 << 64) - 1
I64_MIN = -(1 << 63)
I64_MAX = (1 << 63) - 1

MAGIC = b"BLMF"
HEADER = struct.Struct("<4sHBBBBHIqQQqdQ")   # FORMAT.md §1, 64 bytes
assert HEADER.size == 64
BLOCK_BYTES = 64
MAX_NBLOCKS = 1 << 23

FAMILIES = {
    "none": 0, "integer": 1, "float": 2, "numeric": 3, "text": 4, "bytea": 5,
    "uuid": 6, "boolean": 7, "date": 8, "timestamp": 9, "timestamptz": 10,
    "enum": 11, "record": 12, "other": 13,
}
FAMILY_NAMES = {v: k for k, v in FAMILIES.items()}
FAM_RECORD = 12
FAM_OTHER = 13

# §3.1: the OIDs PostgreSQL fixes for the types of the table of §3 (and
# unknown); family other never names one of them
PORTABLE_TYPE_OIDS = {
    16: "bool", 17: "bytea", 19: "name", 20: "int8", 21: "int2", 23: "int4",
    25: "text", 700: "float4", 701: "float8", 705: "unknown", 1042: "bpchar",
    1043: "varchar", 1082: "date", 1114: "timestamp", 1184: "timestamptz",
    1700: "numeric", 2950: "uuid",
}

PG_EPOCH_DATE = datetime.date(2000, 1, 1)
PG_EPOCH = datetime.datetime(2000, 1, 1)
PG_EPOCH_TZ = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
DATE_NEG_INF = -(1 << 31)
DATE_POS_INF = (1 << 31) - 1


def _fam_id(family):
    if isinstance(family, int):
        if family not in FAMILY_NAMES:
            raise ValueError("unknown family id %r" % family)
        return family
    try:
        return FAMILIES[family]
    except KeyError:
        raise ValueError("unknown family %r" % (family,)) from None


# ---------------------------------------------------------------------------
# §3 canonical encodings

def days_from_civil(y, m, d):
    """Days since 2000-01-01 of the proleptic Gregorian date y-m-d, y in
    astronomical numbering (1 BC = year 0, 4714 BC = -4713)."""
    y -= m <= 2
    era = y // 400                      # floor division
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468 - 10957     # 10957 = 1970..2000


def timestamp_us(y, mo, d, h=0, mi=0, s=0, us=0):
    """Microseconds since 2000-01-01 00:00:00 of a (proleptic Gregorian,
    astronomical-year) timestamp; for dates Python's datetime cannot hold."""
    return ((days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s)
            * 1000000 + us)


def _i64(v):
    if not (I64_MIN <= v <= I64_MAX):
        raise ValueError("value %r out of int64 range" % (v,))
    return struct.pack("<q", v)


def _special(v):
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("infinity", "+infinity"):
            return 1
        if s == "-infinity":
            return -1
    return 0


def numeric_text(v):
    """The numeric family's canonical text (FORMAT.md §3)."""
    if isinstance(v, (int, str)):
        d = decimal.Decimal(v)
    elif isinstance(v, decimal.Decimal):
        d = v
    elif isinstance(v, float):
        d = decimal.Decimal(repr(v))
    else:
        raise TypeError("numeric value must be Decimal, str or int")
    if d.is_nan():
        return "NaN"
    if d.is_infinite():
        return "-Infinity" if d < 0 else "Infinity"
    sign, digits, exp = d.as_tuple()
    ds = "".join(map(str, digits)).lstrip("0")
    if not ds:
        return "0"
    if exp >= 0:
        ip, fp = ds + "0" * exp, ""
    else:
        ds_frac_len = -exp
        if len(ds) <= ds_frac_len:
            ip, fp = "0", "0" * (ds_frac_len - len(ds)) + ds
        else:
            ip, fp = ds[:len(ds) - ds_frac_len], ds[len(ds) - ds_frac_len:]
        fp = fp.rstrip("0")
    return ("-" if sign else "") + ip + ("." + fp if fp else "")


def canonical(value, family):
    """Canonical bytes of a value of a portable family (FORMAT.md §3)."""
    f = _fam_id(family)
    if value is None:
        raise ValueError("NULL has no canonical bytes outside a record")
    if f == 1:                                     # integer
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("integer family needs an int")
        return _i64(value)
    if f == 2:                                     # float
        x = float(value)
        if math.isnan(x):
            return bytes.fromhex("000000000000F87F")
        if x == 0.0:
            x = 0.0
        return struct.pack("<d", x)
    if f == 3:                                     # numeric
        return numeric_text(value).encode("ascii")
    if f == 4 or f == 11:                          # text, enum label
        if isinstance(value, bytes):
            return value
        return str(value).encode("utf-8")
    if f == 5:                                     # bytea
        return bytes(value)
    if f == 6:                                     # uuid
        if isinstance(value, uuidmod.UUID):
            return value.bytes
        if isinstance(value, (bytes, bytearray)) and len(value) == 16:
            return bytes(value)
        return uuidmod.UUID(str(value)).bytes
    if f == 7:                                     # boolean
        if not isinstance(value, bool):
            raise TypeError("boolean family needs a bool")
        return b"\x01" if value else b"\x00"
    if f == 8:                                     # date
        sp = _special(value)
        if sp:
            return _i64(DATE_POS_INF if sp > 0 else DATE_NEG_INF)
        if isinstance(value, datetime.datetime):
            raise TypeError("date family needs a date, not a datetime")
        if isinstance(value, datetime.date):
            return _i64((value - PG_EPOCH_DATE).days)
        if isinstance(value, tuple):
            return _i64(days_from_civil(*value))
        if isinstance(value, int):
            return _i64(value)
        raise TypeError("bad date value %r" % (value,))
    if f in (9, 10):                               # timestamp(tz)
        sp = _special(value)
        if sp:
            return _i64(I64_MAX if sp > 0 else I64_MIN)
        if isinstance(value, datetime.datetime):
            if f == 9:
                if value.tzinfo is not None:
                    raise TypeError("timestamp needs a naive datetime")
                delta = value - PG_EPOCH
            else:
                if value.tzinfo is None:
                    raise TypeError("timestamptz needs an aware datetime")
                delta = value - PG_EPOCH_TZ
            return _i64(delta // datetime.timedelta(microseconds=1))
        if isinstance(value, tuple):
            return _i64(timestamp_us(*value))
        if isinstance(value, int):
            return _i64(value)
        raise TypeError("bad timestamp value %r" % (value,))
    if f == FAM_RECORD:
        return record_bytes(value)
    raise ValueError("family %s has no portable canonical bytes"
                     % FAMILY_NAMES[f])


def record_bytes(fields):
    """FORMAT.md §3.2: fields = [(family, value), ...]; value None = NULL;
    an `other` field's value is its extended hash with seed 0 (an int)."""
    fields = list(fields)
    if not 1 <= len(fields) <= 8:
        raise ValueError("a record has 1 to 8 fields")
    out = bytearray()
    for fam, val in fields:
        f = _fam_id(fam)
        if f in (0, FAM_RECORD):
            raise ValueError("nested records / family none not allowed")
        out.append(f)
        if val is None:
            out += struct.pack("<I", 0xFFFFFFFF)
            continue
        if f == FAM_OTHER:
            b = struct.pack("<Q", val & U64)
        else:
            b = canonical(val, f)
        out += struct.pack("<I", len(b)) + b
    return bytes(out)


def record_detail(fields):
    d = 0
    for i, (fam, _v) in enumerate(fields):
        d |= _fam_id(fam) << (4 * i)
    return d


def xxh3(data, seed):
    return xxhash.xxh3_64_intdigest(data, seed=seed & U64)


def hash_value(value, family, seed=0):
    """FORMAT.md §2: the u64 hash of a value of a portable family (or a
    record).  For family `other`, pass the extended hash itself."""
    f = _fam_id(family)
    if f == FAM_OTHER:
        return value & U64
    return xxh3(canonical(value, f), seed)


def signed(h):
    return h - (1 << 64) if h >= (1 << 63) else h


# ---------------------------------------------------------------------------
# §2 positions

def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & U64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & U64
    return z ^ (z >> 31)


def positions(h, k):
    out = []
    x = 0
    for i in range(k):
        if i % 7 == 0:
            x = mix64((h + (i // 7 + 1) * 0x9E3779B97F4A7C15) & U64)
        out.append(x & 511)
        x >>= 9
    return out


# ---------------------------------------------------------------------------
# §1 bytes

def _portable_flag_for(family, detail):
    if family == FAM_OTHER:
        return True
    if family == FAM_RECORD:
        return any(((detail >> (4 * i)) & 15) == FAM_OTHER for i in range(8))
    return False


class Filter:
    __slots__ = ("family", "flags", "k", "detail", "seed", "nblocks",
                 "inserted", "capacity", "fpr", "bits")

    def __init__(self, family, flags, k, detail, seed, nblocks, inserted,
                 capacity, fpr, bits):
        self.family, self.flags, self.k, self.detail = family, flags, k, detail
        self.seed, self.nblocks, self.inserted = seed, nblocks, inserted
        self.capacity, self.fpr = capacity, fpr
        self.bits = bytearray(bits)

    @classmethod
    def empty(cls, nblocks, k, seed=0, capacity=0, fpr=0.0):
        f = cls(0, 0, k, 0, seed, nblocks, 0, capacity, fpr,
                bytes(BLOCK_BYTES * nblocks))
        f.validate()
        return f

    @property
    def nbits(self):
        return 512 * self.nblocks

    @property
    def nonportable(self):
        return bool(self.flags & 1)

    def validate(self):
        """Every rule of FORMAT.md §1 (except those about the raw length
        and magic, checked by parse)."""
        if self.family not in FAMILY_NAMES:
            raise ValueError("unknown element family %d" % self.family)
        if self.flags & ~1:
            raise ValueError("unknown flag bits 0x%02x" % self.flags)
        if not 1 <= self.k <= 64:
            raise ValueError("nhashes %d out of range [1, 64]" % self.k)
        if not 1 <= self.nblocks <= MAX_NBLOCKS:
            raise ValueError("nblocks %d out of range [1, 2^23]" % self.nblocks)
        if not (I64_MIN <= self.seed <= I64_MAX):
            raise ValueError("seed out of range")
        if math.isnan(self.fpr) or not (0.0 <= self.fpr < 1.0):
            raise ValueError("fpr %r not in [0, 1)" % self.fpr)
        if self.capacity < 0:
            raise ValueError("capacity %d negative" % self.capacity)
        if self.inserted > I64_MAX:
            raise ValueError("inserted %d above 2^63 - 1" % self.inserted)
        if self.family == 0 and self.inserted != 0:
            raise ValueError("family 0 but inserted = %d" % self.inserted)
        # the "rule" column of §1 for the family detail field
        if self.family == FAM_RECORD:
            nib = [(self.detail >> (4 * i)) & 15 for i in range(8)]
            n = 8 - next((i for i, x in enumerate(reversed(nib)) if x), 8)
            if n == 0 or any(x in (0, FAM_RECORD) or x not in FAMILY_NAMES
                             for x in nib[:n]):
                raise ValueError("record family detail %#x is not 1 to 8 "
                                 "field families" % self.detail)
        elif self.family == FAM_OTHER:
            if self.detail == 0:
                raise ValueError("family other with type OID 0")
            if self.detail in PORTABLE_TYPE_OIDS:
                raise ValueError("family other names type OID %d (%s), which has "
                                 "a portable family (§3.1)"
                                 % (self.detail, PORTABLE_TYPE_OIDS[self.detail]))
        elif self.detail != 0:
            raise ValueError("family detail %#x must be 0 for family %d"
                             % (self.detail, self.family))
        if bool(self.flags & 1) != _portable_flag_for(self.family, self.detail):
            raise ValueError("non-portable flag disagrees with family %d"
                             % self.family)
        if len(self.bits) != BLOCK_BYTES * self.nblocks:
            raise ValueError("bit array is %d bytes, expected %d"
                             % (len(self.bits), BLOCK_BYTES * self.nblocks))

    # --- §2 -------------------------------------------------------------
    def block(self, h):
        return ((h >> 32) * self.nblocks) >> 32

    def _bit(self, b, p):
        return (self.bits[BLOCK_BYTES * b + (p >> 3)] >> (p & 7)) & 1

    def add(self, h):
        h &= U64
        b = self.block(h)
        changed = False
        for p in positions(h, self.k):
            i = BLOCK_BYTES * b + (p >> 3)
            m = 1 << (p & 7)
            if not self.bits[i] & m:
                self.bits[i] |= m
                changed = True
        if changed and self.inserted < I64_MAX:
            self.inserted += 1
        return changed

    def contains(self, h):
        if self.family == 0:
            return False
        h &= U64
        b = self.block(h)
        return all(self._bit(b, p) for p in positions(h, self.k))

    # --- §3 family bookkeeping --------------------------------------------
    def _family_of(self, value, family, detail):
        f = _fam_id(family)
        if f == FAM_RECORD:
            detail = record_detail(value)
        elif f != FAM_OTHER:
            detail = 0
        return f, (detail or 0)

    def add_value(self, value, family, detail=None):
        """Add a value; `detail` is the type OID for family `other`."""
        if value is None:
            return False
        f, d = self._family_of(value, family, detail)
        if self.family == 0:
            self.family, self.detail = f, d
            self.flags = 1 if _portable_flag_for(f, d) else 0
        elif (self.family, self.detail) != (f, d):
            raise ValueError("value of family %s/%#x added to a filter of "
                             "family %s/%#x" % (FAMILY_NAMES[f], d,
                                                FAMILY_NAMES[self.family],
                                                self.detail))
        return self.add(hash_value(value, f, self.seed))

    def contains_value(self, value, family, detail=None):
        if self.family == 0:
            return False
        f, d = self._family_of(value, family, detail)
        if (self.family, self.detail) != (f, d):
            raise ValueError("family mismatch")
        return self.contains(hash_value(value, f, self.seed))

    # --- serialisation ----------------------------------------------------
    def to_bytes(self):
        self.validate()
        return HEADER.pack(MAGIC, 1, 1, 1, self.family, self.flags, self.k,
                           self.detail, self.seed, self.nblocks, self.inserted,
                           self.capacity, self.fpr, 0) + bytes(self.bits)

    def family_text(self, type_name=None):
        name = FAMILY_NAMES[self.family]
        if self.family == FAM_RECORD:
            subs = []
            for i in range(8):
                n = (self.detail >> (4 * i)) & 15
                if n:
                    subs.append(FAMILY_NAMES[n])
            return "record(%s)" % ",".join(subs)
        if self.family == FAM_OTHER:
            if type_name is None:
                if callable(type_name_resolver):
                    type_name = type_name_resolver(self.detail)
                else:
                    raise ValueError("family other needs the type's name")
            return "other(%s)" % type_name
        return name

    def to_text(self, type_name=None):
        self.validate()
        return " ".join([
            "bloomfilter:1", "layout=blocked", "hash=xxh3_64",
            "family=" + self.family_text(type_name),
            "nhashes=%d" % self.k, "nbits=%d" % self.nbits,
            "seed=%d" % self.seed, "capacity=%d" % self.capacity,
            "fpr=" + format_fpr(self.fpr), "inserted=%d" % self.inserted,
            "bits=" + base64.b64encode(bytes(self.bits)).decode("ascii")])

    def header(self):
        return dict(family=FAMILY_NAMES[self.family], flags=self.flags,
                    nhashes=self.k, detail=self.detail, seed=self.seed,
                    nblocks=self.nblocks, nbits=self.nbits,
                    inserted=self.inserted, capacity=self.capacity,
                    fpr=self.fpr)

    def copy(self):
        return Filter(self.family, self.flags, self.k, self.detail, self.seed,
                      self.nblocks, self.inserted, self.capacity, self.fpr,
                      bytes(self.bits))


# Optional global hook: oid -> qualified type name (for family `other`).
type_name_resolver = None


def format_fpr(x):
    """§5: "the shortest text that reads back to the same float8".  We read
    this as the shortest round-trip digit string (Python repr / Ryu), with
    0 printed as "0" and -0.0 as "-0".  (The sentence leaves the notation
    open: "1e-05" and "1e-5" are both round-trip texts; we follow the
    common shortest-round-trip convention of Python's repr / Ryu.)"""
    if x == 0.0:                       # -0.0 must read back as -0.0
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    s = repr(x)
    if s.endswith(".0"):
        s = s[:-2]
    return s


def parse(data):
    """Parse and validate the binary form (FORMAT.md §1)."""
    data = bytes(data)
    if len(data) < 64:
        raise ValueError("%d bytes: shorter than the 64-byte header" % len(data))
    (magic, version, layout, hfun, family, flags, k, detail, seed, nblocks,
     inserted, capacity, fpr, reserved) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ValueError("bad magic %r" % magic)
    if version != 1:
        raise ValueError("unknown version %d" % version)
    if layout != 1:
        raise ValueError("unknown layout %d" % layout)
    if hfun != 1:
        raise ValueError("unknown hash function %d" % hfun)
    if reserved != 0:
        raise ValueError("reserved field is %#x, not 0" % reserved)
    if not 1 <= nblocks <= MAX_NBLOCKS:
        raise ValueError("nblocks %d out of range [1, 2^23]" % nblocks)
    if len(data) != 64 + BLOCK_BYTES * nblocks:
        raise ValueError("length %d != 64 + 64*%d" % (len(data), nblocks))
    f = Filter(family, flags, k, detail, seed, nblocks, inserted, capacity,
               fpr, data[64:])
    f.validate()
    return f


_TEXT_KEYS = ["layout", "hash", "family", "nhashes", "nbits", "seed",
              "capacity", "fpr", "inserted", "bits"]


def _int_token(s, lo, hi, what):
    if not s or not (s.isdigit() or (s[0] == "-" and s[1:].isdigit())):
        raise ValueError("bad %s %r" % (what, s))
    v = int(s)
    if not lo <= v <= hi:
        raise ValueError("%s %d out of range" % (what, v))
    return v


def parse_text(s, type_oid_resolver=None):
    """Parse the text form (FORMAT.md §5) into a validated Filter.
    For family other(...), type_oid_resolver(name) -> OID is needed."""
    toks = s.split(" ")
    if len(toks) != 11 or toks[0] != "bloomfilter:1":
        raise ValueError("not a bloomfilter:1 text form")
    vals = []
    for key, tok in zip(_TEXT_KEYS, toks[1:]):
        if not tok.startswith(key + "="):
            raise ValueError("expected %s= got %r" % (key, tok[:20]))
        vals.append(tok[len(key) + 1:])
    layout, hfun, fam, k, nbits, seed, cap, fpr, ins, bits = vals
    if layout != "blocked":
        raise ValueError("unknown layout %r" % layout)
    if hfun != "xxh3_64":
        raise ValueError("unknown hash %r" % hfun)
    detail = 0
    if fam.startswith("record(") and fam.endswith(")"):
        family = FAM_RECORD
        subs = fam[7:-1].split(",")
        if not 1 <= len(subs) <= 8:
            raise ValueError("record of %d fields" % len(subs))
        for i, n in enumerate(subs):
            fid = FAMILIES.get(n)
            if fid in (None, 0, FAM_RECORD):
                raise ValueError("bad record field family %r" % n)
            detail |= fid << (4 * i)
    elif fam.startswith("other(") and fam.endswith(")"):
        family = FAM_OTHER
        if type_oid_resolver is None:
            raise ValueError("cannot resolve type %r" % fam[6:-1])
        detail = type_oid_resolver(fam[6:-1])
    elif fam in FAMILIES and fam not in ("record", "other"):
        family = FAMILIES[fam]
    else:
        raise ValueError("unknown family %r" % fam)
    k = _int_token(k, 1, 64, "nhashes")
    nbits = _int_token(nbits, 512, 512 * MAX_NBLOCKS, "nbits")
    if nbits % 512:
        raise ValueError("nbits %d not a multiple of 512" % nbits)
    seed = _int_token(seed, I64_MIN, I64_MAX, "seed")
    cap = _int_token(cap, 0, I64_MAX, "capacity")
    ins = _int_token(ins, 0, U64, "inserted")
    try:
        fprv = float(fpr)
    except ValueError:
        raise ValueError("bad fpr %r" % fpr) from None
    try:
        raw = base64.b64decode(bits, validate=True)
    except Exception as e:
        raise ValueError("bad base64: %s" % e) from None
    if base64.b64encode(raw).decode("ascii") != bits:
        raise ValueError("non-canonical base64")
    flags = 1 if _portable_flag_for(family, detail) else 0
    if len(raw) != nbits // 8:
        raise ValueError("bits has %d bytes, nbits says %d" % (len(raw), nbits // 8))
    f = Filter(family, flags, k, detail, seed, nbits // 512, ins, cap, fprv, raw)
    f.validate()
    # §5: one text per filter
    if f.to_text(fam[6:-1] if family == FAM_OTHER else None) != s:
        raise ValueError("not the text the output prints for this filter")
    return f


# ---------------------------------------------------------------------------
# §4 sizing (informative: not part of the format)

def model_fpr(lam, k, B=512):
    q1 = (1.0 - 1.0 / B) ** k
    q2 = (1.0 - 2.0 / B) ** k
    total, pmf, i = 0.0, math.exp(-lam), 0
    top = int(lam + 40 * math.sqrt(lam) + 60)
    while i <= top:
        p = 1.0 - q1 ** i
        var = max(0.0, B * (B - 1) * q2 ** i + B * q1 ** i - B * B * q1 ** (2 * i))
        f = p ** k
        if k >= 2:
            f += 0.5 * k * (k - 1) * p ** (k - 2) * var / (B * B)
        total += pmf * f
        i += 1
        pmf *= lam / i
    return total


def estimate(n, p):
    """(nblocks, k) that §4 picks for capacity n and target fpr p."""
    best = None
    for k in range(1, 65):
        lo, hi = 0.0, 1.0
        while model_fpr(hi, k) <= p and hi < 1e9:
            lo, hi = hi, hi * 2
        for _ in range(200):
            mid = (lo + hi) / 2
            if model_fpr(mid, k) <= p:
                lo = mid
            else:
                hi = mid
        if lo <= 0:
            continue
        nb = max(1, math.ceil(n / lo))
        if best is None or nb < best[0]:
            best = (nb, k)
    return best


# ---------------------------------------------------------------------------
# CLI

def _cli_value(family, text):
    f = _fam_id(family)
    if f == 1:
        return int(text)
    if f == 2:
        return float(text)
    if f == 5:
        return bytes.fromhex(text[2:] if text.startswith("\\x") else text)
    if f == 7:
        return text.lower() in ("t", "true", "1", "yes", "on")
    if f == 8:
        if _special(text):
            return text
        return datetime.date.fromisoformat(text)
    if f in (9, 10):
        if _special(text):
            return text
        return datetime.datetime.fromisoformat(text)
    return text


def main(argv):
    if len(argv) >= 2 and argv[0] == "contains" and len(argv) == 4:
        f = parse(bytes.fromhex(argv[1].removeprefix("\\x")))
        print("true" if f.contains_value(_cli_value(argv[2], argv[3]), argv[2])
              else "false")
        return 0
    if len(argv) in (3, 4) and argv[0] == "hash":
        seed = int(argv[3]) if len(argv) == 4 else 0
        print(signed(hash_value(_cli_value(argv[1], argv[2]), argv[1], seed)))
        return 0
    if len(argv) == 2 and argv[0] == "text":
        print(parse(bytes.fromhex(argv[1].removeprefix("\\x"))).to_text())
        return 0
    if len(argv) == 2 and argv[0] == "check":
        print(parse(bytes.fromhex(argv[1].removeprefix("\\x"))).header())
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
