"""Canonical bytes of a value (FORMAT.md §3): from Python values, or from
PostgreSQL's text output of a value of a named SQL type.

A value's family is inferred from its Python type (bool, int, float,
Decimal, str, bytes, uuid.UUID, datetime.date, datetime.datetime naive or
aware, tuple for a composite key) unless a SQL type name says what it is:
then a str is read as PostgreSQL prints that type ('infinity', '4714-11-24
BC', '\\x00ff', '1.50', ...), which also reaches the values Python's own
types cannot hold.
"""

from __future__ import annotations

import datetime
import decimal
import re
import struct
import uuid as uuidmod
from typing import Any, Callable, Sequence, Union

from . import _format as F
from .errors import FamilyMismatchError

# A SQL type given for a key: one name, or one per field of a record.
TypeSpec = Union[str, Sequence[Union[str, None]], None]

_Q = struct.Struct("<q")
_D = struct.Struct("<d")
_F4 = struct.Struct("<f")
_I32 = struct.Struct("<I")
_NAN = bytes.fromhex("000000000000F87F")
_DATE_NEG_INF = -(1 << 31)
_DATE_POS_INF = (1 << 31) - 1
_EPOCH_ORDINAL = datetime.date(2000, 1, 1).toordinal()
_EPOCH = datetime.datetime(2000, 1, 1)
_EPOCH_TZ = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
_US = datetime.timedelta(microseconds=1)
_DAY_US = 86400 * 1000000
_CYCLE_DAYS = 146097                     # days in 400 Gregorian years

# SQL type name -> (family, reader of the type's text output); the
# family names themselves are accepted as type names too
_TYPES: dict[str, int] = {}


def _types(family: int, *names: str) -> None:
    for n in names:
        _TYPES[n] = family


_types(F.INTEGER, "int2", "int4", "int8", "smallint", "integer", "int", "bigint")
_types(F.FLOAT, "float4", "float8", "real", "double precision", "float")
_types(F.NUMERIC, "numeric", "decimal")
_types(F.TEXT, "text", "varchar", "character varying", "name", "bpchar", "char",
       "character")
_types(F.BYTEA, "bytea")
_types(F.UUID, "uuid")
_types(F.BOOLEAN, "bool", "boolean")
_types(F.DATE, "date")
_types(F.TIMESTAMP, "timestamp", "timestamp without time zone")
_types(F.TIMESTAMPTZ, "timestamptz", "timestamp with time zone")
_types(F.ENUM, "enum")


def type_family(name: str) -> int:
    """The family of a SQL type name ('int4', 'bpchar', ...) or family name."""
    f = _TYPES.get(name.lower())
    if f is None:
        raise FamilyMismatchError("the type %r has no portable encoding (FORMAT.md §3); "
                                  "an enum is given as type 'enum'" % name)
    return f


# ---------------------------------------------------------------------------
# values of each family -> canonical bytes

def _i64(v: int) -> bytes:
    try:
        return _Q.pack(v)
    except struct.error:
        raise ValueError("%d is out of the range of bigint" % v) from None


def _integer(v: Any, typ: str | None) -> bytes:
    if isinstance(v, str):
        v = int(v.strip())
    elif isinstance(v, bool) or not isinstance(v, int):
        raise FamilyMismatchError("an integer key must be an int, not %s" % type(v).__name__)
    return _i64(v)


def _float(v: Any, typ: str | None) -> bytes:
    if isinstance(v, str):
        x = float(v.strip())
    elif isinstance(v, bool) or not isinstance(v, (float, int)):
        raise FamilyMismatchError("a float key must be a float, not %s" % type(v).__name__)
    else:
        x = float(v)
    if typ in ("float4", "real"):
        # the server widens the float4 value, not the decimal it was read from
        try:
            x = _F4.unpack(_F4.pack(x))[0]
        except OverflowError:
            raise ValueError("%r is out of the range of real" % v) from None
    if x != x:
        return _NAN
    return _D.pack(x + 0.0)             # -0.0 + 0.0 == +0.0


def numeric_text(v: decimal.Decimal | str | int) -> str:
    """The numeric family's canonical text: PostgreSQL's output with the
    trailing zeros of the fraction (and then the point) removed."""
    if isinstance(v, str):
        d = decimal.Decimal(v.strip())
    elif isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    elif isinstance(v, decimal.Decimal):
        d = v
    else:
        raise FamilyMismatchError("a numeric key must be a Decimal, an int or a str "
                                  "(not %s: a float has no exact decimal)" % type(v).__name__)
    if d.is_nan():
        return "NaN"
    if d.is_infinite():
        return "-Infinity" if d < 0 else "Infinity"
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    if abs(exp) + len(digits) > 300000:
        raise ValueError("%s is out of the range of numeric" % v)
    ds = "".join(map(str, digits))
    if exp >= 0:
        whole, frac = ds + "0" * exp, ""
    else:
        ds = ds.rjust(-exp + 1, "0")
        whole, frac = ds[:exp], ds[exp:]
    whole = whole.lstrip("0") or "0"
    frac = frac.rstrip("0")
    s = whole + ("." + frac if frac else "")
    return "-" + s if sign and s != "0" else s


def _numeric(v: Any, typ: str | None) -> bytes:
    return numeric_text(v).encode("ascii")


def _text(v: Any, typ: str | None) -> bytes:
    if isinstance(v, (bytes, bytearray, memoryview)) and typ is not None:
        b = bytes(v)                    # as stored in a SQL_ASCII database
    elif isinstance(v, str):
        b = v.encode("utf-8")
    else:
        raise FamilyMismatchError("a text key must be a str, not %s" % type(v).__name__)
    if typ in ("bpchar", "char", "character"):
        b = b.rstrip(b" ")              # blank-padded: the padding is no part of it
    return b


def _bytea(v: Any, typ: str | None) -> bytes:
    if isinstance(v, str):
        s = v.strip()
        if not s.startswith("\\x"):
            raise ValueError("a bytea text must be in hex format (\\x...)")
        return bytes.fromhex(s[2:])
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise FamilyMismatchError("a bytea key must be bytes, not %s" % type(v).__name__)


def _uuid(v: Any, typ: str | None) -> bytes:
    if isinstance(v, uuidmod.UUID):
        return v.bytes
    if isinstance(v, str):
        return uuidmod.UUID(v.strip()).bytes
    raise FamilyMismatchError("a uuid key must be a uuid.UUID, not %s" % type(v).__name__)


_BOOL_TEXT = {"t": True, "true": True, "f": False, "false": False, "1": True, "0": False,
              "y": True, "yes": True, "n": False, "no": False, "on": True, "off": False}


def _boolean(v: Any, typ: str | None) -> bytes:
    if isinstance(v, str):
        try:
            v = _BOOL_TEXT[v.strip().lower()]
        except KeyError:
            raise ValueError("%r is not a boolean" % v) from None
    if not isinstance(v, bool):
        raise FamilyMismatchError("a boolean key must be a bool, not %s" % type(v).__name__)
    return b"\x01" if v else b"\x00"


def days_since_2000(y: int, m: int, d: int) -> int:
    """Days from 2000-01-01 to the proleptic Gregorian date y-m-d, y an
    astronomical year (1 BC = 0); any year, by whole 400-year cycles."""
    cycles, yy = divmod(y, 400)
    return (datetime.date(2000 + yy, m, d).toordinal() - _EPOCH_ORDINAL
            + (cycles - 5) * _CYCLE_DAYS)


# PostgreSQL's ISO output (and input in ISO form) of date, timestamp and
# timestamptz: years of 4 or more digits, optional fraction, UTC offset, BC
_DATETIME = re.compile(r"(\d{4,})-(\d\d)-(\d\d)"
                       r"(?:[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?)?"
                       r"(Z|[+-]\d\d(?::?\d\d(?::?\d\d)?)?)?( BC)?\Z")


def _parse_datetime(s: str, what: str) -> tuple[int, int, int]:
    """(days since 2000-01-01, microseconds into the day, UTC offset in
    microseconds) of a date/timestamp/timestamptz text."""
    m = _DATETIME.match(s.strip())
    if not m:
        raise ValueError("%r is not a %s in ISO form" % (s, what))
    y, mo, d, hh, mi, ss, frac, zone, bc = m.groups()
    if (hh is None) != (what == "date") or (zone is not None) != (what == "timestamptz"):
        raise ValueError("%r is not a %s" % (s, what))
    year = 1 - int(y) if bc else int(y)
    clock = 0
    if hh is not None:
        clock = ((int(hh) * 60 + int(mi)) * 60 + int(ss)) * 1000000 + int((frac or "").ljust(6, "0"))
    off = 0
    if zone and zone != "Z":
        digits = zone[1:].replace(":", "")
        parts = [int(digits[i:i + 2] or 0) for i in (0, 2, 4)]
        off = (parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1000000
        off = -off if zone[0] == "-" else off
    return days_since_2000(year, int(mo), int(d)), clock, off


def _infinity(s: str) -> int:
    t = s.strip().lower()
    if t in ("infinity", "+infinity"):
        return 1
    if t == "-infinity":
        return -1
    return 0


def _date(v: Any, typ: str | None) -> bytes:
    if isinstance(v, str):
        inf = _infinity(v)
        if inf:
            return _i64(_DATE_POS_INF if inf > 0 else _DATE_NEG_INF)
        return _i64(_parse_datetime(v, "date")[0])
    if isinstance(v, datetime.datetime) or not isinstance(v, datetime.date):
        raise FamilyMismatchError("a date key must be a datetime.date, not %s"
                                  % type(v).__name__)
    return _i64(v.toordinal() - _EPOCH_ORDINAL)


def _timestamp(v: Any, typ: str | None, with_zone: bool) -> bytes:
    what = "timestamptz" if with_zone else "timestamp"
    if isinstance(v, str):
        inf = _infinity(v)
        if inf:
            return _i64(F.I64_MAX if inf > 0 else F.I64_MIN)
        days, clock, off = _parse_datetime(v, what)
        return _i64(days * _DAY_US + clock - off)
    if not isinstance(v, datetime.datetime):
        raise FamilyMismatchError("a %s key must be a datetime.datetime, not %s"
                                  % (what, type(v).__name__))
    if (v.tzinfo is not None) != with_zone:
        raise FamilyMismatchError("a timestamptz key is an aware datetime, a timestamp "
                                  "key a naive one")
    return _i64((v - (_EPOCH_TZ if with_zone else _EPOCH)) // _US)


def _enum(v: Any, typ: str | None) -> bytes:
    if not isinstance(v, str):
        raise FamilyMismatchError("an enum key is its label, a str")
    return v.encode("utf-8")


_ENCODERS: dict[int, Callable[[Any, Union[str, None]], bytes]] = {
    F.INTEGER: _integer, F.FLOAT: _float, F.NUMERIC: _numeric, F.TEXT: _text,
    F.BYTEA: _bytea, F.UUID: _uuid, F.BOOLEAN: _boolean, F.DATE: _date,
    F.TIMESTAMP: lambda v, t: _timestamp(v, t, False),
    F.TIMESTAMPTZ: lambda v, t: _timestamp(v, t, True),
    F.ENUM: _enum,
}


def infer_family(v: Any) -> int:
    """The family of a Python value (str is text; see the module doc)."""
    if isinstance(v, bool):
        return F.BOOLEAN
    if isinstance(v, int):
        return F.INTEGER
    if isinstance(v, float):
        return F.FLOAT
    if isinstance(v, decimal.Decimal):
        return F.NUMERIC
    if isinstance(v, str):
        return F.TEXT
    if isinstance(v, (bytes, bytearray, memoryview)):
        return F.BYTEA
    if isinstance(v, uuidmod.UUID):
        return F.UUID
    if isinstance(v, datetime.datetime):
        return F.TIMESTAMPTZ if v.tzinfo is not None else F.TIMESTAMP
    if isinstance(v, datetime.date):
        return F.DATE
    if isinstance(v, tuple):
        return F.RECORD
    raise FamilyMismatchError("no element family for a Python %s; give its SQL type"
                              % type(v).__name__)


def encode(value: Any, family: int, typ: str | None = None) -> bytes:
    """Canonical bytes of a scalar of a (known, portable) family."""
    return _ENCODERS[family](value, typ)


def key_bytes(value: Any, typ: TypeSpec, family: int, detail: int) -> tuple[int, int, bytes]:
    """(family, detail, canonical bytes) of a key.  family/detail are the
    filter's (NONE for an empty filter): they fill in what a Python value
    leaves open (a str key of an enum filter, the family of a None field)."""
    if isinstance(value, tuple):
        return _record(value, typ, family, detail)
    if typ is not None:
        if not isinstance(typ, str):
            raise FamilyMismatchError("a scalar key has one type name")
        t = typ.lower()
        f = type_family(t)
    else:
        t = None
        f = infer_family(value)
        if f == F.TEXT and family == F.ENUM:
            f = F.ENUM
    if value is None:
        raise ValueError("NULL is no key (outside a record)")
    if f == F.INTEGER and family == F.INTEGER and t is None and type(value) is int:
        return f, 0, _i64(value)
    return f, 0, _ENCODERS[f](value, t)


def _record(value: tuple, typ: TypeSpec, family: int,
            detail: int) -> tuple[int, int, bytes]:
    n = len(value)
    if not 1 <= n <= F.MAX_FIELDS:
        raise ValueError("a composite key has 1 to 8 fields")
    if typ is not None and (isinstance(typ, str) or len(typ) != n):
        raise FamilyMismatchError("a composite key needs one type name per field")
    known = F.record_fields(detail) if family == F.RECORD else []
    out = bytearray()
    d = 0
    for i, v in enumerate(value):
        t = typ[i] if typ is not None else None
        if t is not None:
            t = t.lower()
            f = type_family(t)
        elif v is None:
            if i >= len(known):
                raise FamilyMismatchError("field %d is None: give the key's SQL types" % (i + 1))
            f = known[i]
        else:
            f = infer_family(v)
            if f == F.TEXT and i < len(known) and known[i] == F.ENUM:
                f = F.ENUM
        if f == F.RECORD:
            raise FamilyMismatchError("a composite key cannot nest another")
        if f == F.OTHER:
            raise FamilyMismatchError("field %d has no portable encoding" % (i + 1))
        d |= f << (4 * i)
        out.append(f)
        if v is None:
            out += b"\xff\xff\xff\xff"
        else:
            b = _ENCODERS[f](v, t)
            out += _I32.pack(len(b)) + b
    return F.RECORD, d, bytes(out)

