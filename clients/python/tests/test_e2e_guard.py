"""End to end: scan guards (bloomfilter.guard_scans) through psycopg's
prepared statements (prepare_threshold=0: every execution runs a named
server-side statement).  Once the server uses its generic plan (after the
fifth execution), a lookup of an absent key reads the bloomfilter index's
page alone, not the btree's: pages per lookup counted from the table's
pg_statio counters, with the guard on and off.  A key inserted after the
plan was made is found.

Runs when BF_E2E=1, against the server of the libpq environment:
test/suites/73-client-python.sh runs it in a pg_virtualenv cluster.
"""

import os

import pytest

psycopg = pytest.importorskip("psycopg")

pytestmark = pytest.mark.skipif(os.environ.get("BF_E2E") != "1",
                                reason="needs a server: set BF_E2E=1 (test/suites)")

DB = "bf_client_python_guard"
ROWS = 100_000
LOOKUP = "SELECT id FROM guard_users WHERE email = %s"


@pytest.fixture(scope="module")
def conninfo():
    with psycopg.connect("dbname=postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s" % DB)
        c.execute("CREATE DATABASE %s" % DB)
    # UTF8 on the client: a SQL_ASCII database would have psycopg send
    # the keys as bytea, which the statement cannot compare with text
    info = "dbname=%s client_encoding=UTF8" % DB
    with psycopg.connect(info, autocommit=True) as c:
        c.execute("CREATE EXTENSION bloomfilter")
        c.execute("CREATE TABLE guard_users (id int8, email text)")
        c.execute("INSERT INTO guard_users SELECT g, 'user' || g || '@example.com' "
                  "FROM generate_series(1, %d) g" % ROWS)
        c.execute("CREATE INDEX guard_users_email ON guard_users (email)")
        c.execute("CREATE INDEX guard_users_email_bf ON guard_users USING bloomfilter (email)")
        c.execute("VACUUM ANALYZE guard_users")
    yield info
    with psycopg.connect("dbname=postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)


def absent_keys(conn, n):
    """n keys the filter says are absent (no false positive among them)."""
    return [r[0] for r in conn.execute(
        "SELECT k FROM (SELECT 'absent' || g || '@example.org' AS k "
        "FROM generate_series(1, 1000) g) s "
        "WHERE NOT bf_index_contains('guard_users_email_bf', k) LIMIT %s", (n,))]


def pages(conn):
    """Blocks of guard_users and its indexes read so far (hits and reads),
    this session's counts flushed first."""
    conn.execute("SELECT pg_stat_force_next_flush()", prepare=False)
    return conn.execute(
        "SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) + "
        "coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) "
        "FROM pg_statio_user_tables WHERE relname = 'guard_users'", prepare=False).fetchone()[0]


def pages_per_lookup(conninfo, guard):
    """Pages per lookup of executions 6 to 15 of the prepared lookup (the
    generic plan), and how many times the server used its generic plan."""
    with psycopg.connect(conninfo, autocommit=True, prepare_threshold=0) as c:
        keys = absent_keys(c, 15)
        c.execute("SET bloomfilter.guard_scans = %s" % ("on" if guard else "off"), prepare=False)
        for k in keys[:5]:
            assert c.execute(LOOKUP, (k,)).fetchall() == []
        before = pages(c)
        for k in keys[5:]:
            assert c.execute(LOOKUP, (k,)).fetchall() == []
        after = pages(c)
        generic = c.execute("SELECT max(generic_plans) FROM pg_prepared_statements "
                            "WHERE statement LIKE 'SELECT id FROM guard_users%%'",
                            prepare=False).fetchone()[0]
    return (after - before) / 10, generic


def test_guard_after_fifth_execution(conninfo):
    on, generic_on = pages_per_lookup(conninfo, True)
    off, generic_off = pages_per_lookup(conninfo, False)
    print("psycopg prepared statements: pages per absent lookup, guarded %.2f, "
          "btree alone %.2f (generic plans %d, %d)" % (on, off, generic_on, generic_off))
    assert generic_on >= 10 and generic_off >= 10
    assert on <= 1.5
    assert off >= 2
    assert on < off


def test_key_inserted_after_the_plan_is_found(conninfo):
    with psycopg.connect(conninfo, autocommit=True, prepare_threshold=0) as c, \
            psycopg.connect(conninfo, autocommit=True) as w:
        keys = absent_keys(c, 8)
        for k in keys[:7]:
            assert c.execute(LOOKUP, (k,)).fetchall() == []
        w.execute("INSERT INTO guard_users VALUES (-1, %s)", (keys[7],))
        assert c.execute(LOOKUP, (keys[7],)).fetchall() == [(-1,)]
        w.execute("DELETE FROM guard_users WHERE id = -1")
