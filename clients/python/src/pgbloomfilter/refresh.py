"""Keeping a local copy of a server's filter current.

A Refresher asks a source every `interval` seconds for the changes since
the position it last received (API-CONTRACTS §1), applies them to a new
copy and swaps that copy in with one assignment: a reader sees the old
filter or the new one, never a half-applied refresh.  When the source
fails (the server is down, the connection was lost) it keeps answering
from the last good copy and reports the error and the copy's age.

The contract: the local copy is the server's filter as of the start of
the last successful refresh.  A key committed after that may be answered
"absent"; it is found at most `interval` plus one refresh's duration after
its commit, while refreshes succeed.  `status().age` says how old the copy
is.
"""

from __future__ import annotations

import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Union

from ._filter import BloomFilter
from ._keys import TypeSpec
from .errors import BloomFilterError, PatchError
from .patch import apply_patch, full_patch


@dataclass(frozen=True)
class Changes:
    """One answer of a source: a row of bf_index_changes/bf_tracked_changes."""
    next_lsn: Optional[str]
    full_refresh: bool
    patch: bytes


class ChangeSource(Protocol):
    """Where a Refresher gets changes from.  `since` is the next_lsn of
    the previous answer, or None to get the whole value."""

    def changes(self, since: Optional[str]) -> Changes: ...

    def close(self) -> None: ...


class NotReadyError(BloomFilterError):
    """No refresh has succeeded yet: there is no copy to answer from."""
    sqlstate = "55000"


@dataclass(frozen=True)
class RefreshStatus:
    """How current the local copy is."""
    ready: bool                   # a copy exists
    age: float                    # seconds since the start of the last good refresh (inf if none)
    last_success: Optional[float]  # time.time() of the start of the last good refresh
    last_error: Optional[BaseException]
    last_error_time: Optional[float]
    lsn: Optional[str]            # the position the next refresh asks from
    refreshes: int                # successful refreshes
    full_refreshes: int           # ... of which transferred the whole value
    failures: int
    bytes_received: int           # patch bytes received in all


class Refresher:
    """A local copy of a filter, kept current by a background thread.

        r = Refresher(PostgresSource(conninfo, index="users_id_bf"), interval=1.0)
        r.start(); r.wait_ready(10)
        if not r.contains(user_id): ...    # definitely not in the table
    """

    def __init__(self, source: ChangeSource, interval: float = 1.0,
                 on_error: Optional[Callable[[BaseException], None]] = None):
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.source = source
        self.interval = interval
        self.on_error = on_error
        self._filter: Optional[BloomFilter] = None   # swapped, never mutated
        self._lsn: Optional[str] = None
        self._good_mono: Optional[float] = None
        self._good_wall: Optional[float] = None
        self._error: Optional[BaseException] = None
        self._error_time: Optional[float] = None
        self._counts = [0, 0, 0, 0]     # refreshes, full, failures, bytes
        self._lock = threading.Lock()   # one refresh at a time
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    # -- reading ----------------------------------------------------------
    @property
    def filter(self) -> BloomFilter:
        """The current copy (do not modify it: it is shared with readers)."""
        f = self._filter
        if f is None:
            raise NotReadyError("no refresh has succeeded yet (last error: %r)" % self._error)
        return f

    def contains(self, value: Any, type: TypeSpec = None) -> bool:
        return self.filter.contains(value, type)

    __contains__ = contains

    def status(self) -> RefreshStatus:
        good = self._good_mono
        return RefreshStatus(
            ready=self._filter is not None,
            age=(time.monotonic() - good) if good is not None else float("inf"),
            last_success=self._good_wall, last_error=self._error,
            last_error_time=self._error_time, lsn=self._lsn,
            refreshes=self._counts[0], full_refreshes=self._counts[1],
            failures=self._counts[2], bytes_received=self._counts[3])

    @property
    def age(self) -> float:
        """Seconds since the start of the last successful refresh."""
        return self.status().age

    def wait_ready(self, timeout: Optional[float] = None) -> bool:
        return self._ready.wait(timeout)

    # -- refreshing -------------------------------------------------------
    def refresh(self) -> None:
        """One refresh, now, in this thread; raises the source's or the
        patch's error (after recording it) and keeps the old copy then."""
        with self._lock:
            t_mono, t_wall = time.monotonic(), time.time()
            try:
                self._refresh_locked()
            except BaseException as e:
                self._error, self._error_time = e, t_wall
                self._counts[2] += 1
                raise
            self._good_mono, self._good_wall = t_mono, t_wall
            self._counts[0] += 1
            self._ready.set()

    def _refresh_locked(self) -> None:
        old = self._filter
        since = self._lsn if old is not None else None
        ch = self.source.changes(since)
        self._counts[3] += len(ch.patch)
        if not ch.full_refresh and old is not None and _unchanged(ch.patch, old):
            self._lsn = ch.next_lsn
            return
        try:
            buf = apply_patch(None if ch.full_refresh else old._buf, ch.patch)
            new = BloomFilter._own(buf)
        except BloomFilterError:
            self._lsn = None            # start over with the whole value
            raise
        if ch.full_refresh:
            self._counts[1] += 1
        self._filter = new              # the atomic swap
        self._lsn = ch.next_lsn

    def _run(self) -> None:
        next_t = time.monotonic()
        while not self._stop.is_set():
            try:
                self.refresh()
            except Exception as e:      # recorded by refresh(); keep going
                if self.on_error is not None:
                    try:
                        self.on_error(e)
                    except Exception:
                        pass
            next_t += self.interval
            now = time.monotonic()
            if next_t < now:            # a slow refresh: do not catch up in a burst
                next_t = now
            self._stop.wait(next_t - now)

    def start(self) -> "Refresher":
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="pgbloomfilter-refresh",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: Optional[float] = None) -> None:
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        self._thread = None

    def close(self) -> None:
        self.stop()
        self.source.close()

    def __enter__(self) -> "Refresher":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unchanged(patch: bytes, old: BloomFilter) -> bool:
    """An incremental change set with no runs for a value of old's size."""
    if len(patch) < 24:
        return False
    magic, _v, flags, _r, total, nruns = struct.unpack_from("<4sHBBQI", patch)
    return magic == b"BLMP" and flags == 0 and nruns == 0 and total == len(old._buf) \
        and len(patch) == 24


# ---------------------------------------------------------------------------
# the PostgreSQL source

Connector = Union[str, Callable[[], Any]]


def _text(v: Any) -> Any:
    """psycopg returns text as bytes when the database is SQL_ASCII (it
    cannot know the encoding); names and LSNs are ASCII either way."""
    return bytes(v).decode("ascii") if isinstance(v, (bytes, bytearray, memoryview)) else v


class PostgresSource:
    """Changes of an index's filter (`index=`) or of a tracked column's
    (`table=`, `column=`) from a PostgreSQL server, through psycopg 3.

    `connect` is a conninfo string or a function returning a new psycopg
    connection; the source opens it when needed and opens a new one after
    a failure.  Servers without bf_index_changes/bf_tracked_changes (told
    by to_regprocedure of the qualified signature) get a full fetch every
    time (bf_index_filter/bf_tracked_filter).  `schema` qualifies the
    extension's functions (default: the schema the extension is in, looked
    up on connecting, so that the search_path does not matter)."""

    def __init__(self, connect: Connector, *, index: Optional[str] = None,
                 table: Optional[str] = None, column: Optional[str] = None,
                 schema: Optional[str] = None):
        if (index is None) == (table is None) or (table is None) != (column is None):
            raise ValueError("give index=, or table= and column=")
        self._connect = connect
        self.index, self.table, self.column = index, table, column
        self._schema = schema
        self._conn: Any = None
        self._ext_schema: Optional[str] = schema
        self._incremental: Optional[bool] = None   # unknown until connected

    def _fn(self, name: str) -> str:
        if self._ext_schema is None:
            return name
        return '"%s".%s' % (self._ext_schema.replace('"', '""'), name)

    def _probe(self, conn: Any) -> None:
        """Find the extension's schema and whether the server has the
        incremental function (a server before it, or a 1.0 catalog)."""
        self._ext_schema = self._schema
        if self._ext_schema is None:
            row = conn.execute(
                "SELECT n.nspname FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n"
                " ON n.oid = e.extnamespace WHERE e.extname = 'bloomfilter'").fetchone()
            if row is None:
                raise PatchError("the extension bloomfilter is not installed in this database")
            self._ext_schema = _text(row[0])
        if self.index is not None:
            sig = self._fn("bf_index_changes") + "(pg_catalog.regclass, pg_catalog.pg_lsn)"
        else:
            sig = (self._fn("bf_tracked_changes")
                   + "(pg_catalog.regclass, pg_catalog.name, pg_catalog.pg_lsn)")
        row = conn.execute("SELECT pg_catalog.to_regprocedure(%s) IS NOT NULL", (sig,)).fetchone()
        self._incremental = bool(row[0])

    def _connection(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self.close()
            if isinstance(self._connect, str):
                import psycopg
                self._conn = psycopg.connect(self._connect, autocommit=True)
            else:
                self._conn = self._connect()
                self._conn.autocommit = True
            self._incremental = None
            try:
                self._probe(self._conn)
            except BaseException:
                self.close()
                raise
        return self._conn

    def changes(self, since: Optional[str]) -> Changes:
        import psycopg
        conn = self._connection()
        try:
            if self._incremental:
                return self._changes(conn, since)
            return self._full(conn)
        except psycopg.OperationalError:
            self.close()                # reconnect next time
            raise

    def _changes(self, conn: Any, since: Optional[str]) -> Changes:
        if self.index is not None:
            sql = ("SELECT next_lsn::text, full_refresh, patch FROM %s(%%s::regclass, %%s::pg_lsn)"
                   % self._fn("bf_index_changes"))
            args: tuple = (self.index, since)
        else:
            sql = ("SELECT next_lsn::text, full_refresh, patch FROM "
                   "%s(%%s::regclass, %%s::name, %%s::pg_lsn)" % self._fn("bf_tracked_changes"))
            args = (self.table, self.column, since)
        row = conn.cursor(binary=True).execute(sql, args).fetchone()
        return Changes(_text(row[0]), bool(row[1]), bytes(row[2]))

    def _full(self, conn: Any) -> Changes:
        if self.index is not None:
            sql = "SELECT %s(%%s::regclass)::bytea" % self._fn("bf_index_filter")
            args: tuple = (self.index,)
        else:
            sql = "SELECT %s(%%s::regclass, %%s::name)::bytea" % self._fn("bf_tracked_filter")
            args = (self.table, self.column)
        row = conn.cursor(binary=True).execute(sql, args).fetchone()
        if row is None or row[0] is None:
            raise PatchError("the server returned no filter")
        return Changes(None, True, full_patch(row[0]))

    def close(self) -> None:
        c, self._conn = self._conn, None
        if c is not None:
            try:
                c.close()
            except Exception:
                pass
