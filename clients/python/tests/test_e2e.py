"""End to end with a real server and psycopg 3: read a tracked table's
filter, answer 10 000 probes exactly as bf_might_contain does, then find
every key inserted later after one refresh; read a growing filter
(bf_create_growing) and a union (bf_union_layered) and answer as
bf_contains does.

Runs when BF_E2E=1, against the server of the libpq environment (PGHOST,
PGPORT, ...) with the extension installed: test/suites/7*-client-python.sh
runs it in a pg_virtualenv cluster.
"""

import dataclasses
import os
import random

import pytest

psycopg = pytest.importorskip("psycopg")

from pgbloomfilter import BloomFilter, PostgresSource, Refresher  # noqa: E402
from pgbloomfilter import adapt  # noqa: E402

pytestmark = pytest.mark.skipif(os.environ.get("BF_E2E") != "1",
                                reason="needs a server: set BF_E2E=1 (test/suites)")

DB = "bf_client_python"
NKEYS = 10_000
NPROBES = 10_000


@pytest.fixture(scope="module")
def conninfo():
    with psycopg.connect("dbname=postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s" % DB)
        c.execute("CREATE DATABASE %s" % DB)
    info = "dbname=%s" % DB
    with psycopg.connect(info, autocommit=True) as c:
        c.execute("CREATE EXTENSION bloomfilter")
        # user ids are spread out so that absent keys lie between present ones
        c.execute("CREATE TABLE users (id int8 PRIMARY KEY, name text)")
        c.execute("INSERT INTO users SELECT g * 7 + 3, 'user ' || g FROM generate_series(1, %s) g"
                  % NKEYS)
        c.execute("SELECT bf_track('users', 'id')")
        c.execute("SELECT bf_track('users', 'name', method => 'trigger')")
        c.execute("CREATE TABLE attrs (user_id int8, attr text)")
        c.execute("INSERT INTO attrs SELECT g / 4, (ARRAY['color','size','lang','plan'])[1 + g % 4] "
                  "FROM generate_series(0, 39999) g")
        c.execute("CREATE INDEX attrs_bf ON attrs USING bloomfilter (user_id, attr)")
    yield info
    with psycopg.connect("dbname=postgres", autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % DB)


def probes(n, rng):
    """Half present keys, half absent ones."""
    present = [rng.randrange(1, NKEYS + 1) * 7 + 3 for _ in range(n // 2)]
    absent = [rng.randrange(1, NKEYS + 1) * 7 + rng.randrange(4, 10) for _ in range(n - n // 2)]
    keys = present + absent
    rng.shuffle(keys)
    return keys


def server_answers(conn, keys, table="users", col="id", typ="int8"):
    rows = conn.execute(
        "SELECT bf_might_contain(%%s::regclass, %%s::name, k) FROM unnest(%%s::%s[]) "
        "WITH ORDINALITY u(k, n) ORDER BY n" % typ, (table, col, keys)).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
def test_tracked_filter_answers_as_the_server(conninfo, binary):
    with psycopg.connect(conninfo) as conn:
        adapt.register(conn)
        cur = conn.cursor(binary=binary)
        f = cur.execute("SELECT bf_tracked_filter('users', 'id')").fetchone()[0]
        assert isinstance(f, BloomFilter) and f.family == "integer"
        raw = conn.execute("SELECT bf_tracked_filter('users', 'id')::bytea").fetchone()[0]
        assert BloomFilter(raw) == f                    # the bytea result reads the same
        keys = probes(NPROBES, random.Random(binary))
        want = server_answers(conn, keys)
        got = [f.contains(k) for k in keys]
        assert got == want
        assert sum(want) >= NPROBES // 2                     # every present key, and a few more
        # a BloomFilter goes back to the server as a parameter
        assert conn.execute("SELECT bf_contains(%s, 10::int8)", (f,)).fetchone()[0] is True


GROWING = ("SELECT bf_add_all(bf_create_growing(10, 0.01), "
           "ARRAY(SELECT generate_series(1, 500)))")
# the same keys in a union: a plain filter of 100, the layers of a growing one
UNION = ("SELECT bf_union_layered(bf_add_all(bf_create(100, 0.01), "
         "ARRAY(SELECT generate_series(1, 100))), bf_add_all(bf_create_growing(10, 0.01), "
         "ARRAY(SELECT generate_series(101, 500))))")


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "text"])
@pytest.mark.parametrize("sql,layout", [(GROWING, "growing"), (UNION, "union")],
                         ids=["growing", "union"])
def test_layered_filter_answers_for_every_member(conninfo, binary, sql, layout):
    with psycopg.connect(conninfo) as conn:
        adapt.register(conn)
        f = conn.cursor(binary=binary).execute(sql).fetchone()[0]
        assert isinstance(f, BloomFilter) and len(f.layers) > 1
        assert (f.is_growing, f.is_union) == (layout == "growing", layout == "union")
        assert all(f.contains(k) for k in range(1, 501))
        raw = conn.execute("SELECT (%s)::bytea" % sql).fetchone()[0]
        assert BloomFilter(raw) == f and f.to_bytes() == raw
        # non-members too, as bf_contains answers; the filter goes back as a parameter
        keys = list(range(1, 5001))
        want = [r[0] for r in conn.execute(
            "SELECT bf_contains(%s, k) FROM unnest(%s::int4[]) WITH ORDINALITY u(k, n) "
            "ORDER BY n", (f, keys)).fetchall()]
        assert [f.contains(k) for k in keys] == want
        assert sum(want) < 600                          # 500 members and a few more
        rows = conn.execute("SELECT layer, nbits, nhashes, capacity, target_fpr, inserted "
                            "FROM bf_layers(%s)", (f,)).fetchall()
        assert rows == [dataclasses.astuple(x) for x in f.layers]
        # (compared in SQL: a SQL_ASCII database sends text as bytes)
        info = conn.execute("SELECT layout = %s, bits_set, saturated FROM bf_info(%s)",
                            (layout, f)).fetchone()
        assert info == (True, f.info().bits_set, f.info().saturated)


def test_text_column_tracked_by_trigger(conninfo):
    with psycopg.connect(conninfo) as conn:
        adapt.register(conn)
        f = conn.execute("SELECT bf_tracked_filter('users', 'name')").fetchone()[0]
        keys = ["user %d" % i for i in range(1, 5001)] + ["user x%d" % i for i in range(5000)]
        want = server_answers(conn, keys, "users", "name", "text")
        assert [f.contains(k) for k in keys] == want


def test_refresh_finds_every_new_key(conninfo):
    with Refresher(PostgresSource(conninfo, table="users", column="id"), interval=0.2) as r:
        assert r.wait_ready(60), r.status().last_error
        new = list(range(10_000_001, 10_002_001))
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute("INSERT INTO users SELECT k, 'new' FROM unnest(%s::int8[]) k", (new,))
        r.refresh()                                     # one refresh after the commit
        assert all(r.contains(k) for k in new)
        assert r.status().refreshes >= 2


def test_index_filter_and_composite_keys(conninfo):
    src = PostgresSource(conninfo, index="attrs_bf")
    r = Refresher(src)
    r.refresh()
    f = r.filter
    assert f.family == "record(integer,text)"
    with psycopg.connect(conninfo) as conn:
        keys = [(u, a) for u in range(0, 12000, 7) for a in ("color", "size", "nope")]
        want = [row[0] for row in conn.execute(
            "SELECT bf_index_contains('attrs_bf', ROW(u, a)) FROM unnest(%s::int8[], %s::text[]) "
            "WITH ORDINALITY x(u, a, n) ORDER BY n",
            ([k[0] for k in keys], [k[1] for k in keys])).fetchall()]
    assert [f.contains(k) for k in keys] == want
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("INSERT INTO attrs VALUES (99999, 'fresh')")
    r.refresh()
    assert r.contains((99999, "fresh"))
    r.close()


def test_lost_connection_keeps_the_last_copy(conninfo):
    conns = []

    def connect():
        c = psycopg.connect(conninfo)
        conns.append(c)
        return c

    r = Refresher(PostgresSource(connect, table="users", column="id"))
    r.refresh()
    with psycopg.connect(conninfo, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (conns[-1].info.backend_pid,))
    with pytest.raises(psycopg.OperationalError):
        r.refresh()
    assert r.contains(10) and r.status().last_error is not None
    r.refresh()                                         # a new connection
    assert len(conns) == 2 and r.status().refreshes == 2
    r.close()
