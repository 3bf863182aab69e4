"""psycopg 3 integration: load `bloomfilter` results (text or binary) as
BloomFilter objects (a GrowingBloomFilter for the growing form, a
UnionBloomFilter for a union), and send
BloomFilter parameters as `bloomfilter`.

    import psycopg, pgbloomfilter.adapt
    conn = psycopg.connect(...)
    pgbloomfilter.adapt.register(conn)
    f = conn.execute("SELECT bf_tracked_filter('users', 'id')").fetchone()[0]

A `bytea` result (`f::bytea`) is plain bytes: BloomFilter(b) reads it.
register_window(conn) does the same for `bloomwindow` (BloomWindow).
"""

from __future__ import annotations

from typing import Any, Optional

from psycopg import adapt, pq
from psycopg.types import TypeInfo

from ._filter import BloomFilter
from ._window import BloomWindow


class BloomFilterLoader(adapt.Loader):
    """The text form (FORMAT.md §5, or §9.4 for a growing filter, §10.4 for
    a union)."""
    format = pq.Format.TEXT

    def load(self, data: Any) -> BloomFilter:
        return BloomFilter.from_text(bytes(data).decode("ascii"))


class BloomFilterBinaryLoader(adapt.Loader):
    """The binary form: the value's bytes (FORMAT.md §1, or §9.1, §10.1)."""
    format = pq.Format.BINARY

    def load(self, data: Any) -> BloomFilter:
        return BloomFilter(data)


class BloomFilterBinaryDumper(adapt.Dumper):
    format = pq.Format.BINARY

    def dump(self, obj: BloomFilter) -> bytes:
        return obj.to_bytes()


def _type_oid(context: Any, name: str, oid: Optional[int]) -> int:
    if oid is None:
        conn = getattr(context, "connection", context)
        info = TypeInfo.fetch(conn, name)
        if info is None:
            raise LookupError("type %r not found: is the bloomfilter extension installed "
                              "and its schema on the search_path?" % name)
        oid = info.oid
    return oid


def register(context: Any, name: str = "bloomfilter", oid: Optional[int] = None) -> int:
    """Register the loaders (and a dumper) of the type `name` on a
    connection or cursor (`context`); returns the type's OID.  Give `oid`
    to skip the catalog lookup (then `context` may be any adapt context)."""
    oid = _type_oid(context, name, oid)
    adapters = context.adapters
    adapters.register_loader(oid, BloomFilterLoader)
    adapters.register_loader(oid, BloomFilterBinaryLoader)
    dumper = type("BloomFilterDumper", (BloomFilterBinaryDumper,), {"oid": oid})
    adapters.register_dumper(BloomFilter, dumper)
    return oid


class BloomWindowLoader(adapt.Loader):
    """A sliding window's text form (FORMAT.md §7.4)."""
    format = pq.Format.TEXT

    def load(self, data: Any) -> BloomWindow:
        return BloomWindow.from_text(bytes(data).decode("ascii"))


class BloomWindowBinaryLoader(adapt.Loader):
    """A sliding window's bytes (FORMAT.md §7.1)."""
    format = pq.Format.BINARY

    def load(self, data: Any) -> BloomWindow:
        return BloomWindow(data)


def register_window(context: Any, name: str = "bloomwindow", oid: Optional[int] = None) -> int:
    """As register, for the `bloomwindow` type (results only)."""
    oid = _type_oid(context, name, oid)
    context.adapters.register_loader(oid, BloomWindowLoader)
    context.adapters.register_loader(oid, BloomWindowBinaryLoader)
    return oid
