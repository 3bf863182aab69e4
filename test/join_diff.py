#!/usr/bin/python3
"""Differential test of the join pre-filter (bloomfilter.join_filter).

    pg_virtualenv /usr/bin/python3 test/join_diff.py [CONNINFO] [options]

The planner hook of the library gives the scan that produces a join's
outer keys the qual bf_join_prefilter(index, key) when the join's inner
relation has a bloomfilter index on the key.  The qual may only drop rows
that cannot join, so every query must return the same rows with the
filter off as with it on (and auto).  This script checks that on data
and queries it generates, deterministic from a seed:

- tables with int4, int8, text and varchar keys, NULL keys, duplicates,
  a few hot keys, an empty and a one-row table, two-column keys (with a
  two-column bloomfilter index), a partitioned table (an index on the
  parent and one on a partition only), a growing and a saturated index,
  indexes built before and after the rows went in, rows updated and
  deleted after the build, an unlogged table, an index made by CREATE
  INDEX CONCURRENTLY and one left invalid by a cancelled one; and traps:
  a partial and an expression bloomfilter index, a two-column index under
  a join on one of its columns, outer sides under a LIMIT, a window or an
  aggregate, cross-type joins (int4 = int8, text = varchar);
- thousands of queries (--queries, default 3000): inner joins, EXISTS / IN
  semi-joins, NOT EXISTS / NOT IN anti-joins, LEFT / RIGHT / FULL joins
  (also a LEFT join reduced to an inner or an anti join by its WHERE),
  joins of three tables, extra conditions on either side, subqueries on
  either side, aggregates, DISTINCT, windows, ORDER BY ... LIMIT of a total
  order, DELETE ... USING ... RETURNING (rolled back), rescans (LATERAL,
  correlated subqueries), each under a random choice of join methods
  (never all off), enable_seqscan, a small work_mem (multi-batch hash
  joins) and parallel query; some through a cursor fetched in chunks, some
  as a prepared statement run twice from its generic plan.

Each query runs with bloomfilter.join_filter = off, then on (and auto for
every third one), and with bloomfilter.runtime_join_filter = on (run-time
filters built from a hash join's inner side; the index pre-filter on for
every other query; --min-runtime percent of the eligible queries, inner,
semi or right joins with hash joins enabled, must get one); the results must be equal as multisets (sorted here, in
Python).  The EXPLAIN of the "on" run counts the queries that got a
pre-filter: the test fails if fewer than --min-filtered percent (20) of
the queries the generator knows to be eligible got one (an inner, semi or
right join on one column whose inner relation is a plain table with a
complete single-column bloomfilter index on it, same type or two integer
types), if a filter sits on the preserved side of a LEFT / RIGHT / FULL /
anti join, or if no filter of a sample run under EXPLAIN ANALYZE removed
a row.  Then fixed checks: a prepared statement (and a PL/pgSQL function)
planned with the filter whose index is dropped (and another made under
its name), a cursor whose index another session tries to drop, an index
made by CREATE INDEX CONCURRENTLY while rows go in, one left invalid by a
cancelled one (never used; used once REINDEXed), auto where the filter
clearly pays (40 000 outer rows, a hash join in batches, a merge join, a
nested loop), and REPEATABLE READ snapshots older than rows inserted,
rows deleted followed by a REINDEX, and keys HOT-updated followed by a
CREATE INDEX (an index whose pg_index.indcheckxmin says old snapshots
must not use it), all by another session.

Exit 77 (skipped) when the library has no such setting: after LOAD
'bloomfilter', SHOW bloomfilter.join_filter fails.  --self-test runs
everything with the filter off twice (any library): it must find no
mismatch and no filter in any plan, and it checks the comparison itself
on real results (blind to row order, not to a row missing, added or
changed).  A mismatch prints the query, its settings, the seed and the
arguments that run that query alone (--seed S --only N).

Needs psycopg 3 (Debian python3-psycopg).  Works in a SQL_ASCII cluster
(all data is ASCII).  Creates and drops the database bf_join_diff.
"""

import argparse
import collections
import contextlib
import json
import os
import random
import sys
import threading
import time

import psycopg
from psycopg import conninfo as pg_conninfo
from psycopg import errors

GUC = "bloomfilter.join_filter"
SKIP_MSG = "skipped: the library has no join pre-filter (bloomfilter.join_filter)"
FN = "bf_join_prefilter"
# the pre-filter of a column tracked by the trigger method
TRACKED_FN = "bf_join_tracked_prefilter"
# run-time filters built from a hash join's inner side: a fourth run of
# each query has them on (the index pre-filter on or off by turns)
RT_GUC = "bloomfilter.runtime_join_filter"
# scan guards (a guard node above a scan for column = parameter): off in
# the baseline run, on in the others, so that the comparison covers them
GUARD_GUC = "bloomfilter.guard_scans"
RT_FN = "bf_runtime_filter"
HOT = [7, 42, 1000, -3, 0]
# session settings of every connection: no JIT (the disable costs of
# enable_* = off would make every plan "expensive" and JIT-compiled)
BASE_OPTIONS = "-c jit=off -c statement_timeout=120s -c lock_timeout=60s"

failures = []          # (kind, text) of everything that fails the test
MAX_PRINTED = 10


def fail(kind, text):
    failures.append((kind, text))
    if len(failures) <= MAX_PRINTED:
        print("FAIL [%s] %s" % (kind, text), flush=True)
    elif len(failures) == MAX_PRINTED + 1:
        print("FAIL ... (further failures are only counted)", flush=True)


def connect(conninfo, **kw):
    """A connection that never prepares statements of its own (the test
    runs DEALLOCATE ALL)."""
    return psycopg.connect(conninfo, prepare_threshold=None, **kw)


def note(text):
    print("join_diff: " + text, flush=True)


# ---------------------------------------------------------------------------
# rows and comparison

def sort_key(row):
    return tuple((0, "", 0) if v is None else (1, type(v).__name__, v) for v in row)


def canon(rows):
    return sorted((tuple(r) for r in rows), key=sort_key)


def diff_text(a, b, limit=5):
    """The rows of multiset a missing from b and those of b extra, briefly."""
    ca, cb = collections.Counter(a), collections.Counter(b)
    missing = list((ca - cb).elements())
    extra = list((cb - ca).elements())

    def short(rows):
        out = []
        for r in rows[:limit]:
            out.append("(" + ", ".join(
                (repr(v)[:40] + "...") if isinstance(v, str) and len(v) > 40 else repr(v)
                for v in r) + ")")
        return "[" + ", ".join(out) + (", ..." if len(rows) > limit else "") + "]"
    return "%d rows vs %d; missing %d %s; extra %d %s" % (
        len(a), len(b), len(missing), short(missing), len(extra), short(extra))


def show(res):
    if isinstance(res, tuple):
        return "ERROR %s: %s" % (res[1], res[2])
    return "%d rows" % len(res)


# ---------------------------------------------------------------------------
# the schema

COLUMNS = ("id int NOT NULL, k4 int, k8 bigint, kt text, kv varchar, c1 int, c2 int, "
           "v int, grp int")


class Table:
    def __init__(self, name, n, profile, bf=(), btree=(), bf_before=(), extra_bf=(),
                 relkind="r", unlogged=False, modify=False, outer_weight=1.0, inner_weight=1.0,
                 tracked=()):
        self.name = name
        self.n = n
        self.profile = profile
        self.bf = list(bf)                  # complete bloomfilter indexes: column tuples
        self.bf_before = list(bf_before)    # (cols, WITH options): made before the rows
        self.extra_bf = list(extra_bf)      # (DDL, description): partial / expression
        self.btree = list(btree)
        self.relkind = relkind
        self.unlogged = unlogged
        self.modify = modify
        self.outer_weight = outer_weight   # how often it is drawn as the outer side
        self.inner_weight = inner_weight
        # columns tracked by the trigger method (bf_track(..., method =>
        # 'trigger')), made before the rows: their filters answer as an
        # index would (bf_join_tracked_prefilter)
        self.tracked = list(tracked)
        # the complete indexes a join may use: filled by setup
        self.bf1 = set()
        self.bf2 = set()


def table_specs():
    return [
        Table("f_a", 3000, "fact", bf=[("k4",)]),
        Table("f_b", 2000, "fact", btree=["k4", "kt"]),
        # the outer side where auto finds a filter pays (10 000 rows dropped)
        Table("f_big", 12000, "big", btree=["k8"], outer_weight=1.0, inner_weight=0.3),
        Table("f_small", 150, "fact", bf=[("k8",), ("kt",)]),
        Table("d_x", 800, "dim", bf=[("k4",), ("k8",), ("kt",), ("kv",), ("c1", "c2")],
              btree=["k4"], modify=True),
        Table("d_y", 500, "dim", bf=[("k4",), ("kt",), ("c1",)], btree=["k4", "k8"],
              extra_bf=[("CREATE INDEX d_y_k8_part_bf ON d_y USING bloomfilter (k8) "
                         "WHERE v %% 2 = 0", "partial"),
                        ("CREATE INDEX d_y_k4_expr_bf ON d_y USING bloomfilter ((k4 %% 97))",
                         "expression")]),
        Table("d_dup", 600, "skew", bf=[("c1", "c2")],
              bf_before=[(("k8",), "capacity = 50, growth = 2"),
                         (("k4",), "capacity = 10")]),
        Table("d_grow", 400, "dim", bf_before=[(("kt",), "capacity = 20, growth = 2"),
                                               (("k4",), "")], modify=True),
        Table("d_unl", 300, "dim", bf=[("k4",), ("kt",)], unlogged=True),
        Table("d_inv", 400, "dim"),      # kt: CREATE INDEX CONCURRENTLY; k4: left invalid
        Table("d_trk", 500, "dim", tracked=["k4", "kt", "k8"], btree=["k4"], modify=True),
        Table("e_empty", 0, "dim", bf=[("k4",), ("k8",), ("kt",), ("c1", "c2")]),
        Table("e_one", 1, "dim", bf=[("k4",), ("k8",), ("kt",), ("c1", "c2")]),
        # kt: tracked by the trigger method on the partitioned table (a
        # partition has a bloomfilter index of its own on it, the parent none)
        Table("p_part", 1500, "dim", relkind="p", tracked=["kt"]),
        Table("p_part_2", 0, "dim"),     # a partition of p_part, joined on its own
    ]


def gen_int(rng, profile):
    r = rng.random()
    if r < 0.05:
        return None
    if profile == "fact":
        if r < 0.12:
            return rng.choice(HOT)
        return rng.randint(-200, 6000)
    if profile == "big":        # many rows, few that join
        if r < 0.01:
            return rng.choice(HOT)
        return rng.randint(-200, 60000)
    if profile == "skew":
        if r < 0.3:
            return rng.choice(HOT[:3])
        return rng.randint(0, 1500)
    if r < 0.08:
        return rng.choice(HOT)
    return rng.randint(0, 3000)


def gen_int8(rng, profile):
    r = rng.random()
    if r < 0.06:
        return rng.choice([1, -1]) * ((1 << rng.choice([31, 32, 40, 62])) + rng.randint(-2, 50))
    return gen_int(rng, profile)


def gen_text(rng, profile):
    n = gen_int(rng, profile)
    if n is None:
        return None
    r = rng.random()
    if r < 0.02:
        return ""
    if r < 0.05:
        return "L" * 2500 + str(n % 50)        # compressed inline, detoasted to hash
    if r < 0.10:
        return "K%d" % n                       # lower() makes it another key
    if r < 0.12:
        return "k%d " % n                      # trailing blank: another key
    return "k%d" % n


def gen_rows(rng, t, first_id):
    rows = []
    for j in range(t.n):
        p = t.profile
        c1 = None if rng.random() < 0.05 else rng.randint(0, 1000)
        c2 = None if rng.random() < 0.05 else rng.randint(0, 4 if p == "fact" else 8)
        rows.append((first_id + j, gen_int(rng, p), gen_int8(rng, p), gen_text(rng, p),
                     gen_text(rng, p), c1, c2, rng.randint(0, 99), rng.randint(0, 9)))
    return rows


def idxname(table, cols, suffix="bf"):
    return "%s_%s_%s" % (table, "_".join(cols), suffix)


def setup(conninfo, seed, tables):
    """Create the tables of the run; returns the total row count."""
    rng = random.Random("%d/data" % seed)
    total = 0
    next_id = 1
    with connect(conninfo, autocommit=True) as conn:
        cur = conn.cursor()
        cur.execute("CREATE EXTENSION bloomfilter")
        for t in tables:
            if t.name == "p_part_2":
                continue
            opts = " WITH (autovacuum_enabled = off)" if t.relkind == "r" else ""
            if t.name == "p_part":
                cur.execute("CREATE TABLE p_part (%s) PARTITION BY RANGE (k4)" % COLUMNS)
                cur.execute("CREATE TABLE p_part_1 PARTITION OF p_part FOR VALUES FROM "
                            "(MINVALUE) TO (1000) WITH (autovacuum_enabled = off)")
                cur.execute("CREATE TABLE p_part_2 PARTITION OF p_part FOR VALUES FROM "
                            "(1000) TO (3000) WITH (autovacuum_enabled = off)")
                cur.execute("CREATE TABLE p_part_3 PARTITION OF p_part DEFAULT "
                            "WITH (autovacuum_enabled = off)")
            else:
                cur.execute("CREATE %sTABLE %s (%s)%s" % ("UNLOGGED " if t.unlogged else "",
                                                         t.name, COLUMNS, opts))
            for cols, w in t.bf_before:
                cur.execute("CREATE INDEX %s ON %s USING bloomfilter (%s)%s" % (
                    idxname(t.name, cols), t.name, ", ".join(cols),
                    " WITH (%s)" % w if w else ""))
            for col in t.tracked:
                # a growing filter (no capacity), filled as the rows come
                cur.execute("SELECT bf_track(%s, %s, method => 'trigger')", (t.name, col))
                t.bf1.add(col)
            if t.name == "e_one":
                rows = [(next_id, 42, 42, "k42", "k42", 1, 1, 5, 0)]
            else:
                rows = gen_rows(rng, t, next_id)
            next_id += len(rows) + 1000
            total += len(rows)
            with cur.copy("COPY %s FROM STDIN" % t.name) as cp:
                for r in rows:
                    cp.write_row(r)
            for cols in t.bf:
                cur.execute("CREATE INDEX %s ON %s USING bloomfilter (%s)" % (
                    idxname(t.name, cols), t.name, ", ".join(cols)))
            for ddl, _ in t.extra_bf:
                cur.execute(ddl.replace("%%", "%"))
            for col in t.btree:
                cur.execute("CREATE INDEX %s ON %s (%s)" % (idxname(t.name, (col,), "bt"),
                                                           t.name, col))
            if t.modify:
                # after the build: new keys, keys of deleted rows stay in the filter
                cur.execute("UPDATE %s SET k4 = k4 + 1, kt = kt || 'u' WHERE id %% 17 = 0"
                            % t.name)
                cur.execute("DELETE FROM %s WHERE id %% 23 = 0" % t.name)
            if t.name == "p_part":
                # an index on the parent (one on each partition) and one on a partition
                cur.execute("CREATE INDEX p_part_k8_bf ON p_part USING bloomfilter (k8)")
                cur.execute("CREATE INDEX p_part_2_kt_bf ON p_part_2 USING bloomfilter (kt)")
                cur.execute("CREATE INDEX p_part_k4_bt ON p_part (k4)")
        # d_inv: an index made concurrently while rows go in, one left invalid
        make_concurrent_indexes(conninfo, conn, rng)
        cur.execute("ANALYZE")
        # what the joins may use: the complete indexes, from the catalog
        cur.execute("""
            SELECT c.relname, array_agg(a.attname::text ORDER BY k.n), t.relkind::text
            FROM pg_index i
            JOIN pg_class x ON x.oid = i.indexrelid
            JOIN pg_am am ON am.oid = x.relam AND am.amname = 'bloomfilter'
            JOIN pg_class c ON c.oid = i.indrelid
            JOIN pg_class t ON t.oid = i.indrelid
            CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(att, n)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.att
            WHERE i.indisvalid AND i.indisready AND i.indislive
              AND i.indexprs IS NULL AND i.indpred IS NULL
            GROUP BY x.oid, c.relname, t.relkind""")
        byname = {t.name: t for t in tables}
        for rel, cols, relkind in cur.fetchall():
            t = byname.get(rel)
            if t is None:
                continue
            t.relkind = relkind
            if len(cols) == 1:
                t.bf1.add(cols[0])
            elif len(cols) == 2:
                t.bf2.add(tuple(cols))
        cur.execute("SELECT count(*) FROM p_part_2")
        byname["p_part_2"].n = cur.fetchone()[0]
    return total


def make_concurrent_indexes(conninfo, conn, rng):
    cur = conn.cursor()
    # CREATE INDEX CONCURRENTLY while another session inserts rows
    stop = threading.Event()
    errs = []

    def inserter():
        try:
            with connect(conninfo, autocommit=True) as c2:
                r2 = random.Random(rng.random())
                i = 0
                while not stop.is_set() and i < 400:
                    c2.execute("INSERT INTO d_inv VALUES (%s, %s, %s, %s, %s, 1, 1, 1, 1)",
                               (900000 + i, r2.randint(0, 3000), r2.randint(0, 3000),
                                "k%d" % r2.randint(0, 3000), "k%d" % r2.randint(0, 3000)))
                    i += 1
        except Exception as e:      # noqa: BLE001 - reported as a failure
            errs.append(e)
    th = threading.Thread(target=inserter)
    th.start()
    try:
        cur.execute("CREATE INDEX CONCURRENTLY d_inv_kt_bf ON d_inv USING bloomfilter (kt)")
    finally:
        stop.set()
        th.join()
    if errs:
        fail("setup", "inserter during CREATE INDEX CONCURRENTLY: %s" % errs[0])
    # a CREATE INDEX CONCURRENTLY cancelled while it waits for a writer
    with connect(conninfo) as writer:      # a transaction left open
        writer.execute("INSERT INTO d_inv VALUES (999999, 1, 1, 'k1', 'k1', 1, 1, 1, 1)")
        cur.execute("SET statement_timeout = '1s'")
        try:
            cur.execute("CREATE INDEX CONCURRENTLY d_inv_k4_bf ON d_inv USING bloomfilter (k4)")
            fail("setup", "CREATE INDEX CONCURRENTLY was not cancelled")
        except errors.QueryCanceled:
            pass
        finally:
            cur.execute("RESET statement_timeout")
        writer.rollback()
    cur.execute("SELECT indisvalid FROM pg_index WHERE indexrelid = 'd_inv_k4_bf'::regclass")
    if cur.fetchone()[0]:
        fail("setup", "d_inv_k4_bf should have been left invalid")


# ---------------------------------------------------------------------------
# queries

KINDS = {
    # name: (outer columns, inner columns)
    "k4": (("k4",), ("k4",)),
    "k8": (("k8",), ("k8",)),
    "kt": (("kt",), ("kt",)),
    "x48": (("k4",), ("k8",)),
    "x84": (("k8",), ("k4",)),
    "c1": (("c1",), ("c1",)),
    "pair": (("c1", "c2"), ("c1", "c2")),
    "kv": (("kt",), ("kv",)),
    "expr": (None, None),
}
KIND_WEIGHTS = [("k4", 25), ("k8", 14), ("kt", 15), ("x48", 8), ("x84", 8), ("c1", 5),
                ("pair", 11), ("kv", 5), ("expr", 5)]

SHAPES = [
    ("inner_on", 14), ("inner_where", 5), ("inner_using", 3),
    ("exists", 8), ("in", 6), ("not_exists", 5), ("not_in", 4),
    ("left", 5), ("left_reduced", 3), ("left_anti", 3), ("right", 5), ("full", 4),
    ("three", 9), ("agg", 6), ("group", 5), ("distinct", 2), ("window", 2),
    ("order_limit", 3), ("lateral", 3), ("scalar_sub", 3), ("exists_rescan", 2),
    ("values_outer", 1), ("cte_outer", 2), ("subq_outer", 2), ("limit_outer", 2),
    ("window_outer", 1), ("agg_outer", 1), ("agg_inner", 2), ("limit_inner", 1),
    ("union_outer", 1), ("delete_using", 2),
]

# the single-join shapes whose aliases must never carry a filter: the
# preserved side of an outer or anti join
MUST_NOT_FILTER = {"not_exists": {"o"}, "not_in": {"o"}, "left": {"o"}, "left_anti": {"o"},
                   "right": {"i"}, "full": {"o", "i"}}


def wchoice(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.uniform(0, total)
    for item, w in pairs:
        x -= w
        if x <= 0:
            return item
    return pairs[-1][0]


class Query:
    pass


class Gen:
    def __init__(self, tables, seed):
        self.tables = {t.name: t for t in tables}
        self.names = [t.name for t in tables]
        self.seed = seed

    # -- tables and keys --

    def t(self, name):
        return self.tables[name]

    def pick_outer(self, rng):
        return wchoice(rng, [(n, self.t(n).outer_weight) for n in self.names])

    def pick_inner(self, rng, kind):
        """Mostly a table with an index on the inner key (so that the query
        is a candidate), sometimes any."""
        icols = KINDS[kind][1] or ("k4",)
        cands = [n for n in self.names
                 if (len(icols) == 1 and icols[0] in self.t(n).bf1)
                 or (len(icols) == 2 and tuple(icols) in self.t(n).bf2)]
        if cands and rng.random() < 0.7:
            return rng.choice(cands)
        return wchoice(rng, [(n, self.t(n).inner_weight) for n in self.names])

    def idx_cat(self, table, kind, side):
        """The category of a filter by table's index on its key of the join
        (side 0: the outer columns of the kind, 1: the inner ones): 'main'
        (what the feature must do), another label, or None (no index)."""
        t = self.t(table)
        if kind == "expr":
            # the other side of the equality is an expression
            return "expr" if side == 1 and "k4" in t.bf1 else None
        cols = KINDS[kind][side]
        if len(cols) == 2:
            return "pair" if tuple(cols) in t.bf2 else None
        if cols[0] not in t.bf1:
            return None
        # a partitioned table: its partitioned index answers (1.2 on)
        if kind == "kv":
            return "varchar"
        return "main"

    def cond(self, rng, kind, o, i):
        """The join condition between aliases o (outer columns) and i."""
        if kind == "expr":
            c = rng.choice(["%(o)s.k4 + 0 = %(i)s.k4", "lower(%(o)s.kt) = %(i)s.kt",
                            "%(o)s.k8 - 1 = %(i)s.k4", "%(i)s.k4 = abs(%(o)s.k4)"])
            return c % {"o": o, "i": i}
        oc, ic = KINDS[kind]
        if len(oc) == 2:
            if rng.random() < 0.4:
                return "(%s.c1, %s.c2) = (%s.c1, %s.c2)" % (o, o, i, i)
            return "%s.c1 = %s.c1 AND %s.c2 = %s.c2" % (o, i, o, i)
        if rng.random() < 0.3:
            return "%s.%s = %s.%s" % (i, ic[0], o, oc[0])
        return "%s.%s = %s.%s" % (o, oc[0], i, ic[0])

    def in_parts(self, kind, o, i):
        """(outer expression, inner select list) of kind for IN."""
        if kind == "expr":
            return "%s.k4 + 0" % o, "%s.k4" % i
        oc, ic = KINDS[kind]
        if len(oc) == 2:
            return "(%s.c1, %s.c2)" % (o, o), "%s.c1, %s.c2" % (i, i)
        return "%s.%s" % (o, oc[0]), "%s.%s" % (i, ic[0])

    def pick_kind(self, rng):
        return wchoice(rng, KIND_WEIGHTS)

    # -- conditions --

    def extra(self, rng, a, param=False):
        """A condition on alias a; {P} is the statement's parameter."""
        x = "{P}" if param else str(rng.randint(10, 90))
        return rng.choice([
            "%s.v < %s" % (a, x), "%s.v >= %s" % (a, x), "%s.grp = %d" % (a, rng.randint(0, 9)),
            "%s.grp <> %d" % (a, rng.randint(0, 9)), "%s.k4 > %d" % (a, rng.randint(0, 3000)),
            "%s.kt LIKE 'k1%%'" % a, "%s.k8 IS NOT NULL" % a, "%s.v %% 3 = 0" % a,
            "%s.c1 < 20" % a, "%s.kt IS NULL" % a])

    def wheres(self, rng, aliases, q):
        """Random extra conditions on the given aliases, one maybe the parameter."""
        conds = []
        for a in aliases:
            r = rng.random()
            if r < 0.45:
                use_p = not q.has_param and rng.random() < 0.5
                c = self.extra(rng, a, use_p)
                if "{P}" in c:
                    q.has_param = True
                conds.append(c)
                q.sel *= 0.5
        return conds

    # -- one query --

    def make(self, index):
        rng = random.Random("%d/%d" % (self.seed, index))
        q = Query()
        q.index = index
        q.has_param = False
        q.param = rng.randint(10, 90)
        q.sel = 1.0
        q.cats = set()          # eligibility labels: inner, semi, outer; other:...
        q.forbid = set()
        q.dml = False
        q.rescans = 1
        shape = wchoice(rng, SHAPES)
        q.shape = shape
        q.sql, q.work = getattr(self, "s_" + shape)(rng, q)
        if shape in MUST_NOT_FILTER:
            q.forbid = MUST_NOT_FILTER[shape]
        q.settings = self.settings(rng, q)
        r = rng.random()
        if q.dml:
            q.mode = "dml"
        elif r < 0.15:
            q.mode = "cursor"
        elif r < 0.30:
            q.mode = "prepared"
        else:
            q.mode = "plain"
        q.chunks = [rng.choice([1, 3, 17, 100, 1000]) for _ in range(8)]
        q.auto = index % 3 == 0
        return q

    def settings(self, rng, q):
        s = {}
        methods = wchoice(rng, [((1, 1, 1), 4), ((1, 0, 0), 1), ((0, 1, 0), 1), ((0, 0, 1), 1),
                                ((1, 1, 0), 1), ((1, 0, 1), 1), ((0, 1, 1), 1)])
        # a nested loop over two large unindexed inputs is slow, not interesting
        parallel = rng.random() < 0.3
        if methods == (0, 0, 1) and q.work > 400000:
            methods = (rng.randint(0, 1), 1, 1) if rng.random() < 0.5 else (1, 0, 1)
        # nor one that starts parallel workers again for each outer row
        if methods == (0, 0, 1) and parallel:
            methods = (1, 0, 1)
        s["enable_hashjoin"], s["enable_mergejoin"], s["enable_nestloop"] = (
            "on" if m else "off" for m in methods)
        s["enable_seqscan"] = "on" if rng.random() < 0.8 else "off"
        s["enable_memoize"] = "on" if rng.random() < 0.8 else "off"
        s["enable_material"] = "on" if rng.random() < 0.8 else "off"
        s["enable_hashagg"] = "on" if rng.random() < 0.8 else "off"
        s["work_mem"] = "64kB" if rng.random() < 0.35 else "4MB"
        if q.shape == "not_in" and q.work > 400000:
            s["work_mem"] = "4MB"       # a hashed subplan, not a scan per outer row
        if parallel:
            s["max_parallel_workers_per_gather"] = "2"
            s["parallel_setup_cost"] = "0"
            s["parallel_tuple_cost"] = "0"
            s["min_parallel_table_scan_size"] = "0"
            s["min_parallel_index_scan_size"] = "0"
        else:
            s["max_parallel_workers_per_gather"] = "0"
            s["parallel_setup_cost"] = "1000"
            s["parallel_tuple_cost"] = "0.1"
            s["min_parallel_table_scan_size"] = "8MB"
            s["min_parallel_index_scan_size"] = "512kB"
        s["plan_cache_mode"] = "force_generic_plan"
        return s

    # -- two-table pieces --

    def pair(self, rng, kind=None, big=True):
        """(kind, outer table, inner table); big=False: not the large table
        (for joins that return every outer row)."""
        kind = kind or self.pick_kind(rng)
        a = self.pick_outer(rng)
        if not big and self.t(a).n > 5000:
            a = "f_a"
        b = self.pick_inner(rng, kind)
        return kind, a, b

    def work2(self, q, a, b):
        return self.t(a).n * self.t(b).n * q.sel

    def cat_inner(self, q, kind, a, b):
        for c in (self.idx_cat(b, kind, 1), self.idx_cat(a, kind, 0)):
            if c == "main":
                q.cats.add("inner")
            elif c:
                q.cats.add("other:" + c)

    def cat_one(self, q, label, c):
        if c == "main":
            q.cats.add(label)
        elif c:
            q.cats.add("other:" + c)

    def select2(self, rng, o, i, nullable=""):
        cols = ["%s.id" % o, "%s.id" % i]
        for c in rng.sample(["%s.v" % o, "%s.k4" % i, "left(%s.kt, 12)" % i, "%s.k8" % o,
                             "%s.v + %s.v" % (o, i), "length(%s.kt)" % o, "%s.c2" % i], 2):
            cols.append(c)
        return ", ".join(cols)

    def where(self, conds):
        return (" WHERE " + " AND ".join(conds)) if conds else ""

    # -- shapes: each returns (sql, work) --

    def s_inner_on(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        if rng.random() < 0.15:
            c += " AND o.v <> i.v"
        w = self.wheres(rng, ["o", "i"], q)
        sql = "SELECT %s FROM %s o JOIN %s i ON %s%s" % (self.select2(rng, "o", "i"), a, b, c,
                                                          self.where(w))
        return sql, self.work2(q, a, b)

    def s_inner_where(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        w = [self.cond(rng, kind, "o", "i")] + self.wheres(rng, ["o", "i"], q)
        return ("SELECT %s FROM %s i, %s o%s" % (self.select2(rng, "o", "i"), b, a, self.where(w)),
                self.work2(q, a, b))

    def s_inner_using(self, rng, q):
        kind = rng.choice(["k4", "k8", "kt", "c1", "pair"])
        kind, a, b = self.pair(rng, kind)
        self.cat_inner(q, kind, a, b)
        cols = "c1, c2" if kind == "pair" else kind
        w = self.wheres(rng, ["o", "i"], q)
        return ("SELECT o.id, i.id, %s FROM %s o JOIN %s i USING (%s)%s" % (
            cols, a, b, cols, self.where(w)), self.work2(q, a, b))

    def s_exists(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_one(q, "semi", self.idx_cat(b, kind, 1))
        inner = [self.cond(rng, kind, "o", "i")] + self.wheres(rng, ["i"], q)
        if rng.random() < 0.2:
            inner.append("i.v > o.v")
        limit = " LIMIT 1" if rng.random() < 0.2 else ""
        outer = self.wheres(rng, ["o"], q)
        sql = "SELECT o.id, o.v, left(o.kt, 8) FROM %s o WHERE EXISTS (SELECT 1 FROM %s i%s%s)%s" % (
            a, b, self.where(inner), limit, "".join(" AND " + c for c in outer))
        return sql, self.work2(q, a, b)

    def s_in(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_one(q, "semi", self.idx_cat(b, kind, 1))
        lhs, sel = self.in_parts(kind, "o", "i")
        inner = self.wheres(rng, ["i"], q)
        outer = self.wheres(rng, ["o"], q)
        sql = "SELECT o.id, o.k4 FROM %s o WHERE %s IN (SELECT %s FROM %s i%s)%s" % (
            a, lhs, sel, b, self.where(inner), "".join(" AND " + c for c in outer))
        return sql, self.work2(q, a, b)

    def s_not_exists(self, rng, q):
        kind, a, b = self.pair(rng, big=False)
        inner = [self.cond(rng, kind, "o", "i")] + self.wheres(rng, ["i"], q)
        outer = self.wheres(rng, ["o"], q)
        sql = "SELECT o.id, o.k8 FROM %s o WHERE NOT EXISTS (SELECT 1 FROM %s i%s)%s" % (
            a, b, self.where(inner), "".join(" AND " + c for c in outer))
        return sql, self.work2(q, a, b)

    def s_not_in(self, rng, q):
        kind, a, b = self.pair(rng, big=False)
        lhs, sel = self.in_parts(kind, "o", "i")
        inner = self.wheres(rng, ["i"], q)
        sql = "SELECT o.id FROM %s o WHERE %s NOT IN (SELECT %s FROM %s i%s)" % (
            a, lhs, sel, b, self.where(inner))
        # NOT IN is a subplan per outer row unless it fits in work_mem (hashed)
        return sql, self.work2(q, a, b)

    def s_left(self, rng, q):
        return self.outer_join(rng, q, "LEFT")

    def outer_join(self, rng, q, join):
        """o LEFT or RIGHT JOIN i: extra conditions on the nullable side (i,
        o) in the ON, on the preserved side in the WHERE; the nullable
        side's scan is the one filtered, by the preserved side's index."""
        left = join == "LEFT"
        kind, a, b = self.pair(rng, big=not left)
        self.cat_one(q, "outer", self.idx_cat(a, kind, 0) if left else self.idx_cat(b, kind, 1))
        c = self.cond(rng, kind, "o", "i")
        nullable, preserved = ("i", "o") if left else ("o", "i")
        on_extra = "".join(" AND " + x for x in self.wheres(rng, [nullable], q))
        w = self.wheres(rng, [preserved], q)
        sql = "SELECT %s FROM %s o %s JOIN %s i ON %s%s%s" % (
            self.select2(rng, "o", "i"), a, join, b, c, on_extra, self.where(w))
        return sql, self.work2(q, a, b)

    def s_left_reduced(self, rng, q):
        # a strict condition on the nullable side: an inner join
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = "SELECT %s FROM %s o LEFT JOIN %s i ON %s WHERE i.v >= %d" % (
            self.select2(rng, "o", "i"), a, b, c, rng.randint(0, 60))
        return sql, self.work2(q, a, b)

    def s_left_anti(self, rng, q):
        kind, a, b = self.pair(rng, big=False)
        c = self.cond(rng, kind, "o", "i")
        sql = "SELECT o.id, o.v FROM %s o LEFT JOIN %s i ON %s WHERE i.id IS NULL" % (a, b, c)
        return sql, self.work2(q, a, b)

    def s_right(self, rng, q):
        return self.outer_join(rng, q, "RIGHT")

    def s_full(self, rng, q):
        kind = rng.choice(["k4", "k8", "kt", "x48", "x84", "pair", "c1"])
        kind, a, b = self.pair(rng, kind, big=False)
        c = self.cond(rng, kind, "o", "i")
        sql = "SELECT %s FROM %s o FULL JOIN %s i ON %s" % (
            self.select2(rng, "o", "i"), a, b, c)
        return sql, self.work2(q, a, b)

    def s_three(self, rng, q):
        k1, a, b = self.pair(rng)
        k2 = self.pick_kind(rng)
        c = self.pick_inner(rng, k2)
        # the third table joins the first or the second
        src = rng.choice(["o", "i"])
        srct = a if src == "o" else b
        j1 = rng.choice(["JOIN", "JOIN", "LEFT JOIN"])
        j2 = rng.choice(["JOIN", "JOIN", "LEFT JOIN", "EXISTS"])
        if j1 == "JOIN":
            self.cat_inner(q, k1, a, b)
        else:
            self.cat_one(q, "outer", self.idx_cat(a, k1, 0))
        c1 = self.cond(rng, k1, "o", "i")
        c2 = self.cond(rng, k2, src, "j")
        w = self.wheres(rng, ["o", "i"], q)
        if j2 == "EXISTS":
            if j1 == "JOIN" or src == "o":
                self.cat_one(q, "semi", self.idx_cat(c, k2, 1))
            w.append("EXISTS (SELECT 1 FROM %s j WHERE %s)" % (c, c2))
            sql = "SELECT o.id, i.id FROM %s o %s %s i ON %s%s" % (a, j1, b, c1, self.where(w))
        else:
            if j2 == "JOIN" and (j1 == "JOIN" or src == "o"):
                self.cat_inner(q, k2, srct, c)
            elif j2 == "LEFT JOIN":
                self.cat_one(q, "outer", self.idx_cat(srct, k2, 0))
            sql = "SELECT o.id, i.id, j.id FROM %s o %s %s i ON %s %s %s j ON %s%s" % (
                a, j1, b, c1, j2, c, c2, self.where(w))
        n = [self.t(x).n for x in (a, b, c)]
        return sql, max(n[0] * n[1], n[0] * n[2], n[1] * n[2]) * q.sel * 2

    def s_agg(self, rng, q):
        kind, a, b = self.pair(rng)
        jt = rng.choice(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN"])
        if jt == "JOIN":
            self.cat_inner(q, kind, a, b)
        elif jt == "RIGHT JOIN":
            self.cat_one(q, "outer", self.idx_cat(b, kind, 1))
            q.forbid = {"i"}
        else:
            self.cat_one(q, "outer", self.idx_cat(a, kind, 0))
            q.forbid = {"o"}
        c = self.cond(rng, kind, "o", "i")
        # conditions on the preserved side only (one on the other side would
        # make the outer join an inner one)
        w = self.wheres(rng, ["i" if jt == "RIGHT JOIN" else "o"], q)
        sql = ("SELECT count(*), count(i.id), sum(o.v), min(i.kt), max(o.k8), "
               "count(DISTINCT o.k4), avg(i.v) FROM %s o %s %s i ON %s%s" % (
                   a, jt, b, c, self.where(w)))
        return sql, self.work2(q, a, b)

    def s_group(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        w = self.wheres(rng, ["o", "i"], q)
        having = " HAVING count(*) > %d" % rng.randint(1, 5) if rng.random() < 0.4 else ""
        sql = ("SELECT o.grp, i.grp, count(*), sum(i.v), max(o.id) FROM %s o JOIN %s i ON %s%s "
               "GROUP BY o.grp, i.grp%s" % (a, b, c, self.where(w), having))
        return sql, self.work2(q, a, b)

    def s_distinct(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = "SELECT DISTINCT o.k4, i.grp FROM %s o JOIN %s i ON %s" % (a, b, c)
        return sql, self.work2(q, a, b)

    def s_window(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT o.id, i.id, count(*) OVER (PARTITION BY o.grp), "
               "sum(i.v) OVER (PARTITION BY i.grp) FROM %s o JOIN %s i ON %s" % (a, b, c))
        return sql, self.work2(q, a, b)

    def s_order_limit(self, rng, q):
        # a total order (the ids are unique in each table): a fixed set of rows
        kind, a, b = self.pair(rng)
        jt = rng.choice(["JOIN", "JOIN", "LEFT JOIN"])
        if jt == "JOIN":
            self.cat_inner(q, kind, a, b)
        else:
            self.cat_one(q, "outer", self.idx_cat(a, kind, 0))
        c = self.cond(rng, kind, "o", "i")
        w = self.wheres(rng, ["o"], q)
        desc = rng.choice(["", " DESC"])
        sql = "SELECT o.id, i.id, o.v FROM %s o %s %s i ON %s%s ORDER BY o.id%s, i.id LIMIT %d" % (
            a, jt, b, c, self.where(w), desc, rng.choice([1, 10, 50, 300]))
        if jt == "LEFT JOIN":
            q.forbid = {"o"}
        return sql, self.work2(q, a, b)

    def s_lateral(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        n = rng.choice([2, 4])
        if rng.random() < 0.5:
            sql = ("SELECT s.n, x.c, x.sv FROM generate_series(0, %d) s(n) CROSS JOIN LATERAL "
                   "(SELECT count(*) AS c, sum(o.v) AS sv FROM %s o JOIN %s i ON %s "
                   "WHERE o.grp %% %d = s.n) x" % (n - 1, a, b, c, n))
        else:
            sql = ("SELECT s.n, x.oid, x.iid FROM (VALUES (0), (1), (2)) s(n) CROSS JOIN LATERAL "
                   "(SELECT o.id AS oid, i.id AS iid FROM %s o JOIN %s i ON %s "
                   "WHERE o.v %% 3 = s.n) x" % (a, b, c))
            n = 3
        return sql, self.work2(q, a, b) * n

    def s_scalar_sub(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT g.n, (SELECT count(*) FROM %s o JOIN %s i ON %s WHERE o.grp = g.n), "
               "(SELECT max(i.id) FROM %s o JOIN %s i ON %s WHERE i.grp = g.n) "
               "FROM generate_series(0, 9) g(n)" % (a, b, c, a, b, c))
        return sql, self.work2(q, a, b) * 20

    def s_exists_rescan(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT g.n FROM generate_series(0, 9) g(n) WHERE EXISTS (SELECT 1 FROM %s o "
               "JOIN %s i ON %s WHERE o.grp = g.n AND i.v > %d LIMIT 1)" % (
                   a, b, c, rng.randint(0, 99)))
        return sql, self.work2(q, a, b) * 10

    def s_values_outer(self, rng, q):
        b = self.pick_inner(rng, "k4")
        vals = ", ".join("(%s::int)" % rng.choice(["NULL", str(rng.choice(HOT)),
                                               str(rng.randint(-10, 4000))])
                         for _ in range(rng.randint(1, 30)))
        sql = "SELECT v.k, i.id FROM (VALUES %s) v(k) JOIN %s i ON i.k4 = v.k" % (vals, b)
        self.cat_one(q, "inner", self.idx_cat(b, "k4", 1))
        return sql, 30 * self.t(b).n

    def s_cte_outer(self, rng, q):
        kind, a, b = self.pair(rng)
        c = self.cond(rng, kind, "o", "i")
        w = self.wheres(rng, ["o"], q)
        mat = rng.choice(["MATERIALIZED ", "NOT MATERIALIZED ", ""])
        sql = "WITH o AS %s(SELECT * FROM %s o%s) SELECT o.id, i.id FROM o JOIN %s i ON %s" % (
            mat, a, self.where(w), b, c)
        # a CTE scan produces the outer keys of a plain table's index
        self.cat_one(q, "inner", self.idx_cat(b, kind, 1))
        return sql, self.work2(q, a, b)

    def s_subq_outer(self, rng, q):
        kind, a, b = self.pair(rng)
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT o.id, i.id FROM (SELECT * FROM %s WHERE v < %d) o JOIN %s i ON %s" % (
            a, rng.randint(20, 99), b, c))
        return sql, self.work2(q, a, b)

    def s_limit_outer(self, rng, q):
        # filtering below the LIMIT would pick other rows
        kind, a, b = self.pair(rng)
        c = self.cond(rng, kind, "o", "i")
        n = rng.choice([5, 100, 700])
        sql = ("SELECT o.id, i.id FROM (SELECT * FROM %s ORDER BY id LIMIT %d) o "
               "JOIN %s i ON %s" % (a, n, b, c))
        return sql, self.t(b).n * n

    def s_window_outer(self, rng, q):
        # filtering below the window would change its counts
        kind, a, b = self.pair(rng)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT o.id, o.cnt, o.rn, i.id FROM (SELECT *, count(*) OVER () AS cnt, "
               "row_number() OVER (ORDER BY id) AS rn FROM %s) o JOIN %s i ON %s" % (a, b, c))
        return sql, self.work2(q, a, b)

    def keyed_sub(self, rng, q, side):
        """A pair whose key on one side (0: outer, 1: inner) a subquery
        groups or orders by: (a, b, that side's key column, the join
        condition). Below an inner one, the inner table's index filters."""
        kind, a, b = self.pair(rng, rng.choice(["k4", "k8", "kt", "x48", "x84"]))
        col = KINDS[kind][side][0]
        if side == 1:
            self.cat_one(q, "inner", self.idx_cat(b, kind, 1))
        return a, b, col, self.cond(rng, kind, "o", "i")

    def s_agg_outer(self, rng, q):
        # filtering below the aggregate would change its counts... except on its keys
        a, b, oc, c = self.keyed_sub(rng, q, 0)
        sql = ("SELECT o.%s, o.c, o.s, i.id FROM (SELECT %s, count(*) AS c, sum(v) AS s FROM %s "
               "GROUP BY %s%s) o JOIN %s i ON %s" % (
                   oc, oc, a, oc, rng.choice(["", " HAVING count(*) > 1"]), b, c))
        return sql, self.work2(q, a, b)

    def s_agg_inner(self, rng, q):
        a, b, ic, c = self.keyed_sub(rng, q, 1)
        sql = ("SELECT o.id, i.c FROM %s o JOIN (SELECT %s, count(*) AS c FROM %s "
               "WHERE v < %d GROUP BY %s) i ON %s" % (a, ic, b, rng.randint(20, 99), ic, c))
        return sql, self.work2(q, a, b)

    def s_limit_inner(self, rng, q):
        a, b, ic, c = self.keyed_sub(rng, q, 1)
        # only the key of the limited rows: the same multiset whatever the ties
        sql = ("SELECT o.id, i.%s FROM %s o JOIN (SELECT %s FROM %s ORDER BY %s LIMIT %d) i "
               "ON %s" % (ic, a, ic, b, ic, rng.choice([3, 50, 400]), c))
        return sql, self.work2(q, a, b)

    def s_union_outer(self, rng, q):
        kind = rng.choice(["k4", "k8", "kt"])
        k, a, b = self.pair(rng, kind)
        a2 = self.pick_outer(rng)
        c = self.cond(rng, kind, "o", "i")
        sql = ("SELECT o.id, i.id FROM (SELECT id, %s FROM %s UNION ALL SELECT id, %s FROM %s) o "
               "JOIN %s i ON %s" % (kind, a, kind, a2, b, c))
        return sql, (self.t(a).n + self.t(a2).n) * self.t(b).n

    def s_delete_using(self, rng, q):
        kind, a, b = self.pair(rng)
        if self.t(a).relkind == "p" or a == "p_part_2" or self.t(a).n > 5000:
            a = "f_a"
        self.cat_inner(q, kind, a, b)
        c = self.cond(rng, kind, "o", "i")
        w = self.wheres(rng, ["o"], q)
        q.dml = True
        # every target row once: its id only (the joined row is any of its partners)
        sql = "DELETE FROM %s o USING %s i WHERE %s%s RETURNING o.id, o.k4" % (
            a, b, c, "".join(" AND " + x for x in w))
        return sql, self.work2(q, a, b)


# ---------------------------------------------------------------------------
# running

def plan_nodes(plan):
    yield plan
    for p in plan.get("Plans", []):
        yield from plan_nodes(p)


def filters_of(explain_json, fn=FN):
    """(alias, filter text) of every node whose Filter calls the pre-filter
    (fn: or the run-time filter)."""
    doc = explain_json
    if isinstance(doc, str):
        doc = json.loads(doc)
    out = []
    for top in doc:
        for n in plan_nodes(top["Plan"]):
            f = n.get("Filter", "")
            if fn in f or (fn == FN and TRACKED_FN in f):
                out.append((n.get("Alias", "?"), f, n))
    return out


def guards_of(explain_json):
    """The scan guards (BloomGuard nodes) of a plan."""
    doc = json.loads(explain_json) if isinstance(explain_json, str) else explain_json
    return [n for top in doc for n in plan_nodes(top["Plan"])
            if n.get("Custom Plan Provider") == "BloomGuard"]


class Session:
    """What the generated queries (Runner) and the fixed checks (Fixed)
    share: their connections, with the library loaded where the server has
    the setting, and the setting's value of a run."""

    def __init__(self, conninfo, args, has_guc):
        self.conninfo = conninfo
        self.args = args
        self.has_guc = has_guc

    def connect(self):
        conn = connect(self.conninfo, autocommit=True)
        if self.has_guc:
            load(conn)
        return conn

    def values(self, value):
        """The setting's value of a run: off twice in the self-test."""
        return "off" if self.args.self_test else value

    def mode(self, value):
        """A join filter setting's value of a run: on is force, the hidden
        value that places a filter wherever it is safe, even where the
        planner expects it to remove nothing (as on did before it judged)."""
        value = self.values(value)
        return "force" if value == "on" else value


class Runner(Session):
    def __init__(self, conninfo, args, has_guc):
        super().__init__(conninfo, args, has_guc)
        self.conn = self.connect()
        self.stats = collections.Counter()
        self.cat_total = collections.Counter()
        self.cat_filtered = collections.Counter()
        self.shape_filtered = collections.Counter()
        self.shape_total = collections.Counter()
        self.removed = 0
        self.not_eligible = collections.Counter()
        self.slow = []
        self.has_rt = has_guc and has_setting(conninfo, RT_GUC)
        self.has_guard = has_guc and has_setting(conninfo, GUARD_GUC)
        self.rt_removed = 0

    def apply(self, q, value, runtime="off"):
        s = dict(q.settings)
        if self.has_guc:
            s[GUC] = self.mode(value)
        if self.has_rt:
            s[RT_GUC] = self.mode(runtime)
        if self.has_guard:
            s[GUARD_GUC] = self.values("off" if value == "off" and runtime == "off" else "on")
        sql = "SELECT " + ", ".join("set_config('%s', '%s', false)" % kv for kv in s.items())
        self.conn.execute(sql)

    def text(self, q, prepared=False):
        return q.sql.replace("{P}", "$1" if prepared else str(q.param))

    def execute(self, q, value, explain=False, analyze=False, runtime="off"):
        """(result, explain json or None) of one run of q."""
        cur = self.conn.cursor()
        self.apply(q, value, runtime)
        ex = None
        try:
            if q.mode in ("plain", "dml"):
                # a DML statement rolled back, so that each run finds the same rows
                with (self.conn.transaction(force_rollback=True) if q.mode == "dml"
                      else contextlib.nullcontext()):
                    cur.execute(self.text(q))
                    res = canon(cur.fetchall())
                if explain:
                    cur.execute("EXPLAIN (COSTS OFF, FORMAT JSON) " + self.text(q))
                    ex = cur.fetchone()[0]
            elif q.mode == "cursor":
                rows = []
                with self.conn.transaction():
                    cur.execute("DECLARE jd_c NO SCROLL CURSOR FOR " + self.text(q))
                    k = 0
                    while True:
                        n = q.chunks[k % len(q.chunks)]
                        k += 1
                        cur.execute("FETCH %d FROM jd_c" % n)
                        got = cur.fetchall()
                        rows.extend(got)
                        if len(got) < n:
                            break
                    cur.execute("CLOSE jd_c")
                    if explain:
                        cur.execute("EXPLAIN (COSTS OFF, FORMAT JSON) DECLARE jd_e NO SCROLL "
                                    "CURSOR FOR " + self.text(q))
                        ex = cur.fetchone()[0]
                res = canon(rows)
            else:   # prepared: its generic plan, run twice
                cur.execute("DEALLOCATE ALL")
                arg = "(%d)" % q.param if q.has_param else ""
                cur.execute("PREPARE jd_p%s AS %s" % ("(int)" if q.has_param else "",
                                                      self.text(q, True)))
                cur.execute("EXECUTE jd_p" + arg)
                res = canon(cur.fetchall())
                cur.execute("EXECUTE jd_p" + arg)
                res2 = canon(cur.fetchall())
                if res2 != res:
                    fail("mismatch", "%s: the second EXECUTE of the prepared statement differs "
                         "(%s) %s" % (describe(q, value, self.args), value, diff_text(res, res2)))
                if explain:
                    cur.execute("EXPLAIN (COSTS OFF, FORMAT JSON) EXECUTE jd_p" + arg)
                    ex = cur.fetchone()[0]
            if analyze and q.mode in ("plain", "cursor"):
                cur.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) "
                            + self.text(q))
                doc = cur.fetchone()[0]
                for _, _, n in filters_of(doc, RT_FN if runtime == "on" else FN):
                    removed = int(n.get("Rows Removed by Filter", 0) * n.get("Actual Loops", 1))
                    if runtime == "on":
                        self.rt_removed += removed
                    else:
                        self.removed += removed
                self.stats["analyzed"] += 1
        except psycopg.OperationalError as e:
            if self.conn.closed or self.conn.broken:
                fail("crash", "%s: the connection was lost (%s): %s" % (
                    describe(q, value, self.args), value, e))
                self.conn = self.connect()
                return ("ERROR", "connection lost", str(e).splitlines()[0]), None
            res = ("ERROR", e.sqlstate, str(e).splitlines()[0])
        except psycopg.Error as e:
            res = ("ERROR", e.sqlstate, str(e).splitlines()[0] if str(e) else "")
        return res, ex

    def run(self, q):
        t0 = time.time()
        base, ex_off = self.execute(q, "off")
        if isinstance(base, tuple):
            fail("error", "%s: with the filter off: %s" % (describe(q, "off", self.args), show(base)))
            return
        analyze = (not self.args.self_test) and q.index % 7 == 0
        on, ex = self.execute(q, "on", explain=True, analyze=analyze)
        if on != base:
            self.mismatch(q, "on", base, on)
        if self.has_rt:
            self.run_runtime(q, base, analyze)
        if q.auto:
            auto, ex_auto = self.execute(q, "auto", explain=True, runtime="auto")
            self.stats["auto runs"] += 1
            if auto != base:
                self.mismatch(q, "auto", base, auto)
            if ex_auto is not None and filters_of(ex_auto):
                self.stats["auto filtered"] += 1
        self.stats["queries"] += 1
        self.stats["mode " + q.mode] += 1
        self.stats["rows"] += len(base)
        self.shape_total[q.shape] += 1
        filt = filters_of(ex) if ex is not None else []
        if ex is not None and guards_of(ex):
            self.stats["guarded"] += 1
        if filt:
            self.stats["filtered"] += 1
            self.shape_filtered[q.shape] += 1
        if any(TRACKED_FN in f for _, f, _ in filt):
            self.stats["filtered by a tracked filter"] += 1
        if any("p_part_k8_bf" in f for _, f, _ in filt):
            self.stats["filtered by a partitioned index"] += 1
        if any(TRACKED_FN in f and "p_part" in f for _, f, _ in filt):
            self.stats["filtered by a partitioned tracked filter"] += 1
        main = q.cats & {"inner", "semi", "outer"}
        if main:
            self.stats["eligible"] += 1
            if filt:
                self.stats["eligible filtered"] += 1
        elif filt:
            self.stats["filtered, not eligible"] += 1
            self.not_eligible[q.shape] += 1
        for c in q.cats:
            self.cat_total[c] += 1
            if filt:
                self.cat_filtered[c] += 1
        # a filter on the preserved side of an outer or anti join is never safe
        for alias, f, _ in filt:
            if alias in q.forbid:
                fail("placement", "%s: a pre-filter on the preserved side %r: %s" % (
                    describe(q, "on", self.args), alias, f))
        if self.args.self_test and base and q.index % 20 == 0:
            self.check_comparison(q, base)
        dt = time.time() - t0
        self.slow.append((dt, q.index, q.shape, len(base)))

    def run_runtime(self, q, base, analyze):
        """The run with run-time filters on (and the index pre-filter on
        for every other query): the same rows, and no run-time filter on
        the preserved side of an outer or anti join."""
        value = "on" if q.index % 2 else "off"
        rt, ex = self.execute(q, value, explain=True, analyze=analyze, runtime="on")
        self.stats["runtime runs"] += 1
        if rt != base:
            self.mismatch(q, "%s with %s=on" % (value, RT_GUC), base, rt)
        filt = filters_of(ex, RT_FN) if ex is not None else []
        if filt:
            self.stats["runtime filtered"] += 1
        if q.settings.get("max_parallel_workers_per_gather") != "0" and filt:
            self.stats["runtime filtered, parallel"] += 1
        if q.settings.get("work_mem") == "64kB" and filt:
            self.stats["runtime filtered, small work_mem"] += 1
        if q.mode == "cursor" and filt:
            self.stats["runtime filtered, cursor"] += 1
        if q.shape in ("lateral", "scalar_sub", "exists_rescan") and filt:
            self.stats["runtime filtered, rescans"] += 1
        # eligible: an inner, semi or right join that may be a hash join
        if q.cats & {"inner", "semi", "outer"} and q.settings["enable_hashjoin"] == "on":
            self.stats["runtime eligible"] += 1
            if filt:
                self.stats["runtime eligible filtered"] += 1
        for alias, f, _ in filt:
            if alias in q.forbid:
                fail("placement", "%s: a run-time filter on the preserved side %r: %s" % (
                    describe(q, "on", self.args), alias, f))

    def check_comparison(self, q, base):
        """The comparison itself: blind to the order rows come in, not to a
        row missing, added or changed."""
        rng = random.Random(q.index)
        rows = list(base)
        rng.shuffle(rows)
        r = rng.randrange(len(rows))
        changed = list(rows)
        changed[r] = tuple(None if v is not None else 0 for v in changed[r])
        ok = (canon(rows) == base and canon(rows[:r] + rows[r + 1:]) != base
              and canon(rows + [rows[r]]) != base and canon(changed) != base)
        self.stats["comparison checks"] += 1
        if not ok:
            fail("harness", "the comparison of rows is wrong on query %d" % q.index)

    def mismatch(self, q, value, base, got):
        if isinstance(got, tuple):
            text = "%s; off: %d rows" % (show(got), len(base))
        else:
            text = diff_text(base, got)
        fail("mismatch", "%s: off vs %s: %s" % (describe(q, value, self.args), value, text))


def describe(q, value, args):
    s = ", ".join("%s=%s" % kv for kv in q.settings.items()
                  if kv[0].startswith("enable") or kv[0] in ("work_mem",
                                                              "max_parallel_workers_per_gather"))
    return ("query %d (seed %d, shape %s, mode %s; rerun: --seed %d --only %d)\n    %s\n"
            "    settings: %s%s\n   " % (q.index, args.seed, q.shape, q.mode, args.seed, q.index,
                                        q.sql.replace("{P}", "%d" % q.param),
                                        s, " [self-test]" if args.self_test else ""))


def load(conn):
    """Load the library into the session (LOAD needs a superuser; otherwise
    calling one of its functions loads it)."""
    try:
        conn.execute("LOAD 'bloomfilter'")
    except errors.InsufficientPrivilege:
        conn.execute("SELECT bf_create(10) IS NOT NULL")


def has_setting(conninfo, guc=GUC):
    with connect(conninfo, autocommit=True) as conn:
        try:
            conn.execute("LOAD 'bloomfilter'")
        except errors.InsufficientPrivilege:
            pass
        try:
            conn.execute("SHOW " + guc)
            return True
        except psycopg.Error:
            return False


# ---------------------------------------------------------------------------
# fixed checks

class Fixed(Session):
    def __init__(self, conninfo, args, has_guc):
        super().__init__(conninfo, args, has_guc)
        self.passed = 0
        self.failed = 0
        self.notes = []

    def setting(self, conn, value, local=False):
        if self.has_guc:
            conn.execute("SELECT set_config('%s', '%s', %s)" % (
                GUC, self.mode(value), "true" if local else "false"))

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            fail("fixed", "%s%s" % (name, (": " + detail) if detail else ""))

    def expect_filter(self, name, conn, sql, index=None, want=True):
        """In a run with the feature: EXPLAIN of sql (the session's settings)
        names (want) or does not name the pre-filter (of index)."""
        if self.args.self_test or not self.has_guc:
            return
        ex = conn.execute("EXPLAIN (COSTS OFF, FORMAT JSON) " + sql).fetchone()[0]
        f = [x[1] for x in filters_of(ex) if index is None or index in x[1]]
        detail = "%s pre-filter%s in the plan of %s" % (
            "no" if want else "a", " of " + index if index else "", sql)
        if bool(f) != want:
            # the plan, for the failure's reader
            detail += ":\n" + "\n".join(
                r[0] for r in conn.execute("EXPLAIN " + sql).fetchall())
        self.check(name, bool(f) == want, detail)

    def rows(self, conn, sql):
        return canon(conn.execute(sql).fetchall())

    def both(self, conn, sql, local=False):
        self.setting(conn, "off", local)
        off = self.rows(conn, sql)
        self.setting(conn, "on", local)
        on = self.rows(conn, sql)
        return off, on

    def make(self, cur, name, n, rng, profile, index_cols=("k4",), fillfactor=None):
        cur.execute("DROP TABLE IF EXISTS %s" % name)
        cur.execute("CREATE TABLE %s (%s) WITH (autovacuum_enabled = off%s)" % (
            name, COLUMNS, ", fillfactor = %d" % fillfactor if fillfactor else ""))
        t = Table(name, n, profile)
        with cur.copy("COPY %s FROM STDIN" % name) as cp:
            for r in gen_rows(rng, t, 1):
                cp.write_row(r)
        for col in index_cols:
            cur.execute("CREATE INDEX %s_%s_bf ON %s USING bloomfilter (%s)" % (name, col, name, col))
        cur.execute("ANALYZE %s" % name)

    def run(self):
        rng = random.Random("%d/fixed" % self.args.seed)
        for f in (self.dropped_index, self.cursor_drop, self.concurrent, self.invalid,
                  self.auto_pays, self.partitioned_tracked, self.rr_insert, self.rr_delete_reindex,
                  self.rr_hot_new_index):
            try:
                f(rng)
            except psycopg.Error as e:
                self.check(f.__name__, False, "%s: %s" % (type(e).__name__, e))

    def dropped_index(self, rng):
        with self.connect() as a, self.connect() as b:
            cur = a.cursor()
            # the outer side stays the larger one after the insert below, so
            # that every planner keeps fx_inner on the hashed side
            self.make(cur, "fx_outer", 10000, rng, "fact", ())
            self.make(cur, "fx_inner", 300, rng, "dim", ("k4",))
            sql = ("SELECT o.id, i.id FROM fx_outer o JOIN fx_inner i ON o.k4 = i.k4 "
                   "WHERE o.v < %s")
            a.execute("SET plan_cache_mode = force_generic_plan")
            self.setting(a, "off")
            want = self.rows(a, sql % "50")
            self.setting(a, "on")
            a.execute("PREPARE fx_q(int) AS " + sql % "$1")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: first EXECUTE", got == want, diff_text(want, got))
            self.expect_filter("prepared: the generic plan has the pre-filter", a,
                               "EXECUTE fx_q(50)", "fx_inner_k4_bf")
            # new inner keys (set in the index by the insert), same cached plan
            b.execute("INSERT INTO fx_inner SELECT id + 100000, k4, k8, kt, kv, c1, c2, v, grp "
                      "FROM fx_outer WHERE id % 23 = 0 AND k4 IS NOT NULL")
            self.setting(a, "off")
            want = self.rows(a, sql % "50")
            self.setting(a, "on")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: EXECUTE after an insert into the inner table", got == want,
                       diff_text(want, got))
            # the index dropped by another session
            b.execute("DROP INDEX fx_inner_k4_bf")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: EXECUTE after DROP INDEX (another session)", got == want,
                       diff_text(want, got))
            self.expect_filter("prepared: no pre-filter once the index is dropped", a,
                               "EXECUTE fx_q(50)", want=False)
            # another index made under the same name, on another column
            b.execute("CREATE INDEX fx_inner_k4_bf ON fx_inner USING bloomfilter (kt)")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: EXECUTE after an index of the same name on another column",
                       got == want, diff_text(want, got))
            self.expect_filter("prepared: no pre-filter from an index on another column", a,
                               "EXECUTE fx_q(50)", want=False)
            # the right index again, then dropped in this very session
            a.execute("CREATE INDEX fx_inner_k4_bf2 ON fx_inner USING bloomfilter (k4)")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: EXECUTE after CREATE INDEX", got == want, diff_text(want, got))
            self.expect_filter("prepared: the new index's pre-filter", a, "EXECUTE fx_q(50)",
                               "fx_inner_k4_bf2")
            a.execute("DROP INDEX fx_inner_k4_bf2")
            got = self.rows(a, "EXECUTE fx_q(50)")
            self.check("prepared: EXECUTE after DROP INDEX (same session)", got == want,
                       diff_text(want, got))
            # a plan of a PL/pgSQL function (cached in the function)
            a.execute("CREATE INDEX fx_inner_k4_bf3 ON fx_inner USING bloomfilter (k4)")
            a.execute("CREATE OR REPLACE FUNCTION fx_f(x int) RETURNS bigint LANGUAGE plpgsql AS $$"
                      "BEGIN RETURN (SELECT count(*) FROM fx_outer o JOIN fx_inner i "
                      "ON o.k4 = i.k4 WHERE o.v < x); END $$")
            wantc = len(want)
            got1 = a.execute("SELECT fx_f(50)").fetchone()[0]
            b.execute("DROP INDEX fx_inner_k4_bf3")
            got2 = a.execute("SELECT fx_f(50)").fetchone()[0]
            self.check("plpgsql: the cached plan before and after DROP INDEX",
                       got1 == wantc and got2 == wantc, "%d, %d, want %d" % (got1, got2, wantc))
            a.execute("DEALLOCATE fx_q")

    def cursor_drop(self, rng):
        """A cursor planned with the filter, its index dropped by another
        session between fetches: the drop waits for the cursor's transaction
        (or, if it does not, the rows are still right)."""
        with self.connect() as a, self.connect() as b:
            cur = a.cursor()
            self.make(cur, "fy_outer", 3000, rng, "fact", ())
            self.make(cur, "fy_inner", 300, rng, "dim", ("k4",))
            sql = "SELECT o.id, i.id FROM fy_outer o JOIN fy_inner i ON o.k4 = i.k4"
            self.setting(a, "off")
            want = self.rows(a, sql)
            self.setting(a, "on")
            dropped = False
            with a.transaction():
                cur.execute("DECLARE fy_c NO SCROLL CURSOR FOR " + sql)
                cur.execute("FETCH 5 FROM fy_c")
                rows = cur.fetchall()
                b.execute("SET lock_timeout = '300ms'")
                try:
                    b.execute("DROP INDEX fy_inner_k4_bf")
                    dropped = True
                except errors.LockNotAvailable:
                    pass
                cur.execute("FETCH ALL FROM fy_c")
                rows += cur.fetchall()
            got = canon(rows)
            self.check("cursor: rows with an index dropped between fetches", got == want,
                       diff_text(want, got))
            self.notes.append("cursor: DROP INDEX during the cursor's transaction %s" % (
                "went through" if dropped else "waited (lock timeout)"))

    def concurrent(self, rng):
        """The index of d_inv.kt made by CREATE INDEX CONCURRENTLY in setup,
        with rows inserted meanwhile: joins on it."""
        with self.connect() as a:
            for src in ("f_a", "f_b", "d_x"):
                for key in ("o.kt = i.kt", "i.kt = o.kt AND o.v < 60"):
                    sql = "SELECT o.id, i.id FROM %s o JOIN d_inv i ON %s" % (src, key)
                    off, on = self.both(a, sql)
                    self.check("concurrent index: %s" % sql, off == on, diff_text(off, on))
                    sql = "SELECT o.id FROM %s o WHERE EXISTS (SELECT 1 FROM d_inv i WHERE %s)" % (
                        src, key)
                    off, on = self.both(a, sql)
                    self.check("concurrent index: %s" % sql, off == on, diff_text(off, on))
            # the filter needs d_inv on the inner side, which the planner
            # may not choose with a seed's data (it hashed f_a once): the
            # first of these plans that has it is checked
            self.setting(a, "on")
            tries = [(src, shape) for shape in ("", "SET enable_hashjoin = off; SET enable_mergejoin = off")
                     for src in ("f_a", "f_b", "d_x")]
            for src, shape in tries:
                if shape:
                    a.execute(shape)
                sql = "SELECT o.id FROM %s o JOIN d_inv i ON o.kt = i.kt" % src
                if self.d_inv_inner(a, sql) or (src, shape) == tries[-1]:
                    self.expect_filter("concurrent index: its pre-filter", a, sql, "d_inv_kt_bf")
                    break
            a.execute("RESET enable_hashjoin; RESET enable_mergejoin")

    def d_inv_inner(self, conn, sql):
        """Is d_inv scanned on the inner side of the plan's top join?"""
        ex = conn.execute("EXPLAIN (COSTS OFF, FORMAT JSON) " + sql).fetchone()[0]
        plan = ex[0]["Plan"]
        while plan.get("Plans") and "Join" not in plan["Node Type"] and plan["Node Type"] != "Nested Loop":
            plan = plan["Plans"][0]
        inner = [p for p in plan.get("Plans", []) if p.get("Parent Relationship") == "Inner"]
        return bool(inner) and "d_inv" in json.dumps(inner[0])

    def invalid(self, rng):
        """d_inv_k4_bf, left invalid by a cancelled CREATE INDEX CONCURRENTLY:
        never used; once REINDEXed, used."""
        with self.connect() as a:
            sql = "SELECT o.id, i.id FROM f_a o JOIN d_inv i ON o.k4 = i.k4"
            off, on = self.both(a, sql)
            self.check("invalid index: rows", off == on, diff_text(off, on))
            self.expect_filter("invalid index: not used", a, sql, "d_inv_k4_bf", want=False)
            a.execute("REINDEX INDEX CONCURRENTLY d_inv_k4_bf")
            off, on = self.both(a, sql)
            self.check("invalid index REINDEXed: rows", off == on, diff_text(off, on))
            self.expect_filter("invalid index REINDEXed: used", a, sql, "d_inv_k4_bf")

    def auto_pays(self, rng):
        """auto: a filter where it clearly pays (40 000 outer rows of which
        one in a hundred joins; a hash join in many batches, a merge join, a
        nested loop over a btree), and the same rows as off."""
        with self.connect() as a:
            a.execute("DROP TABLE IF EXISTS fa_outer, fa_inner")
            a.execute("CREATE TABLE fa_outer WITH (autovacuum_enabled = off) AS "
                      "SELECT g AS id, (g * 7919) % 400000 AS k, repeat('x', 20) AS pad "
                      "FROM generate_series(1, 40000) g")
            a.execute("CREATE TABLE fa_inner WITH (autovacuum_enabled = off) AS "
                      "SELECT g AS id, g * 100 AS k, repeat('y', 60) AS pad "
                      "FROM generate_series(1, 4000) g")
            a.execute("CREATE INDEX fa_inner_k_bf ON fa_inner USING bloomfilter (k)")
            a.execute("ANALYZE fa_outer, fa_inner")
            sql = "SELECT o.id, i.id, i.pad FROM fa_outer o JOIN fa_inner i ON o.k = i.k"
            for methods in (("64kB", "on", "off", "off"), ("4MB", "off", "on", "off"),
                            ("4MB", "off", "off", "on")):
                if methods[3] == "on":
                    # the nested loop's inner side: a parameterized index scan
                    a.execute("CREATE INDEX fa_inner_k_bt ON fa_inner (k)")
                a.execute("SELECT set_config('work_mem', '%s', false), "
                          "set_config('enable_hashjoin', '%s', false), "
                          "set_config('enable_mergejoin', '%s', false), "
                          "set_config('enable_nestloop', '%s', false)" % methods)
                self.setting(a, "off")
                off = self.rows(a, sql)
                self.setting(a, "auto")
                got = self.rows(a, sql)
                name = "auto (work_mem %s, hash %s, merge %s, nestloop %s)" % methods
                self.check(name + ": rows", got == off, diff_text(off, got))
                self.expect_filter(name + ": a pre-filter", a, sql, "fa_inner_k_bf")
            a.execute("RESET ALL")
            self.setting(a, "on")

    def partitioned_tracked(self, rng):
        """A join whose inner side is a partitioned table with a column
        tracked by the trigger method on the parent: the tracked filter
        answers for every partition (the random queries reach p_part's only
        now and then).  Tables of its own, so that every planner hashes the
        small partitioned side and filters the large one."""
        with self.connect() as a:
            a.execute("DROP TABLE IF EXISTS fp_outer, fp_part")
            a.execute("CREATE TABLE fp_part (id int, k text) PARTITION BY RANGE (id)")
            a.execute("CREATE TABLE fp_part_1 PARTITION OF fp_part FOR VALUES FROM (0) TO (150)")
            a.execute("CREATE TABLE fp_part_2 PARTITION OF fp_part DEFAULT")
            a.execute("SELECT bf_track('fp_part', 'k', method => 'trigger')")
            a.execute("INSERT INTO fp_part SELECT g, 'k' || (g * 37) FROM generate_series(1, 300) g")
            a.execute("CREATE TABLE fp_outer WITH (autovacuum_enabled = off) AS "
                      "SELECT g AS id, 'k' || g AS k FROM generate_series(1, 20000) g")
            a.execute("ANALYZE fp_outer, fp_part")
            sql = "SELECT o.id, p.id FROM fp_outer o JOIN fp_part p ON o.k = p.k"
            a.execute("SET enable_nestloop = off; SET enable_mergejoin = off")
            off, on = self.both(a, sql)
            self.check("partitioned tracked filter: rows", on == off and len(on) > 0,
                       diff_text(off, on))
            self.expect_filter("partitioned tracked filter: the pre-filter", a, sql,
                               TRACKED_FN)
            a.execute("RESET ALL")
            self.setting(a, "on")

    def rr_queries(self, outer, inner, key):
        return [
            "SELECT o.id, i.id FROM %s o JOIN %s i ON o.%s = i.%s" % (outer, inner, key, key),
            "SELECT o.id FROM %s o WHERE EXISTS (SELECT 1 FROM %s i WHERE i.%s = o.%s)" % (
                outer, inner, key, key),
            "SELECT o.id FROM %s o WHERE o.%s IN (SELECT %s FROM %s)" % (outer, key, key, inner),
            "SELECT count(*), sum(i.v) FROM %s o JOIN %s i ON o.%s = i.%s" % (outer, inner, key, key),
        ]

    def snapshot_case(self, name, prepare, change, queries, table_lock_free=True):
        """prepare(cur); A takes a REPEATABLE READ snapshot; change(b) in
        another session; each query in A with the filter off and on must
        give the rows of before the change."""
        with self.connect() as a, self.connect() as b:
            prepare(a.cursor())
            self.setting(a, "off")
            before = [self.rows(a, q) for q in queries]
            self.setting(a, "on")
            for q in queries:
                self.expect_filter("%s: its pre-filter before the change" % name, a, q)
            a.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            a.execute("SELECT 1")                     # the snapshot, no lock on the tables
            change(b)
            for q, want in zip(queries, before):
                off, on = self.both(a, q, local=True)
                self.check("%s: off in the old snapshot gives the rows of before" % name,
                           off == want, diff_text(want, off) + " -- " + q)
                self.check("%s: on = off in the old snapshot" % name, on == off,
                           diff_text(off, on) + " -- " + q)
            a.execute("ROLLBACK")
            changed = 0
            for q, old in zip(queries, before):
                off, on = self.both(a, q)
                self.check("%s: on = off after the old snapshot" % name, on == off,
                           diff_text(off, on) + " -- " + q)
                changed += off != old
            self.check("%s: the change changed the results (harness)" % name, changed > 0)

    def rr_insert(self, rng):
        def prepare(cur):
            self.make(cur, "rr_outer", 3000, rng, "fact", ())
            self.make(cur, "rr_inner", 300, rng, "dim", ("k4",))

        def change(b):
            # inner rows with keys that only outer rows had, and more outer rows
            b.execute("INSERT INTO rr_inner SELECT id + 100000, k4, k8, kt, kv, c1, c2, v, grp "
                      "FROM rr_outer WHERE id % 5 = 0 AND k4 IS NOT NULL")
            b.execute("INSERT INTO rr_outer SELECT id + 100000, k4, k8, kt, kv, c1, c2, v, grp "
                      "FROM rr_inner")
        self.snapshot_case("repeatable read, rows inserted", prepare, change,
                           self.rr_queries("rr_outer", "rr_inner", "k4"))

    def rr_delete_reindex(self, rng):
        def prepare(cur):
            self.make(cur, "rd_outer", 3000, rng, "fact", ())
            self.make(cur, "rd_inner", 600, rng, "dim", ("k4",))
            cur.execute("INSERT INTO rd_inner SELECT id + 100000, k4, k8, kt, kv, c1, c2, v, grp "
                        "FROM rd_outer WHERE id % 4 = 0")
            cur.execute("ANALYZE rd_inner")

        def change(b):
            # rows deleted, then the filter rebuilt from the rows left
            b.execute("DELETE FROM rd_inner WHERE id % 3 <> 0")
            b.execute("REINDEX INDEX rd_inner_k4_bf")
        self.snapshot_case("repeatable read, rows deleted and REINDEX", prepare, change,
                           self.rr_queries("rd_outer", "rd_inner", "k4"))

    def rr_hot_new_index(self, rng):
        def prepare(cur):
            self.make(cur, "rh_outer", 3000, rng, "fact", ())
            self.make(cur, "rh_inner", 600, rng, "dim", (), fillfactor=50)
            cur.execute("UPDATE rh_outer SET kt = 'k' || (id % 600) WHERE id % 2 = 0")
            cur.execute("UPDATE rh_inner SET kt = 'k' || (id % 600)")
            cur.execute("VACUUM ANALYZE rh_inner")
            cur.execute("ANALYZE rh_outer")
            # a filter needs the index: made here, dropped again, for the plans before
            cur.execute("CREATE INDEX rh_inner_kt_bf ON rh_inner USING bloomfilter (kt)")

        def change(b):
            # keys changed by HOT updates (no index on the column), then the index
            # made: the old keys of those rows are not in it (indcheckxmin)
            b.execute("DROP INDEX rh_inner_kt_bf")
            b.execute("UPDATE rh_inner SET kt = kt || 'x' WHERE id % 2 = 0")
            b.execute("CREATE INDEX rh_inner_kt_bf ON rh_inner USING bloomfilter (kt)")
            hot = b.execute("SELECT indcheckxmin FROM pg_index WHERE indexrelid = "
                            "'rh_inner_kt_bf'::regclass").fetchone()[0]
            self.notes.append("repeatable read, HOT updates and CREATE INDEX: indcheckxmin %s%s"
                              % (hot, "" if hot else " (the updates were not HOT: the case "
                                 "was not exercised)"))
        self.snapshot_case("repeatable read, HOT updates and CREATE INDEX", prepare, change,
                           self.rr_queries("rh_outer", "rh_inner", "kt"))


# ---------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("conninfo", nargs="?", default="",
                    help="libpq connection string of a database to start from "
                         "(default: the libpq environment)")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--queries", type=int, default=3000)
    ap.add_argument("--only", type=int, default=None, help="run query N alone (and print it)")
    ap.add_argument("--self-test", action="store_true",
                    help="the filter off in both runs: checks the harness, any library")
    ap.add_argument("--min-filtered", type=float, default=20.0,
                    help="percent of the eligible queries that must get a pre-filter")
    ap.add_argument("--min-runtime", type=float, default=20.0,
                    help="percent of the queries eligible for a run-time filter (an inner, semi "
                    "or right join with hash joins enabled) that must get one")
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed checks")
    ap.add_argument("--keep", action="store_true", help="keep the database bf_join_diff")
    ap.add_argument("--dbname", default="bf_join_diff")
    ap.add_argument("--max-printed", type=int, default=10)
    ap.add_argument("--times", help="write each query's number, shape, rows and seconds here")
    ap.add_argument("--mutate", action="store_true",
                    help="a check of the test: bf_join_prefilter replaced by a wrong one that "
                         "drops one key in seven; the run must fail with mismatches")
    args = ap.parse_args()
    global MAX_PRINTED
    MAX_PRINTED = args.max_printed
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    t0 = time.time()

    base = pg_conninfo.make_conninfo(args.conninfo, client_encoding="UTF8",
                                     options=BASE_OPTIONS)
    has_guc = has_setting(base)
    if not has_guc and not args.self_test:
        print(SKIP_MSG)
        return 77
    note("seed %d%s; %s" % (args.seed, " (self-test: the filter off in every run)"
                            if args.self_test else "",
                            "the library has %s" % GUC if has_guc else
                            "the library has no %s" % GUC))
    with connect(base, autocommit=True) as conn:
        # the database's collation from pg_database: 16 removed the
        # lc_collate setting
        note("server %s, encoding %s, lc_collate %s" % conn.execute(
            "SELECT current_setting('server_version'), current_setting('server_encoding'), "
            "datcollate FROM pg_database WHERE datname = current_database()").fetchone())
        conn.execute("DROP DATABASE IF EXISTS %s" % args.dbname)
        conn.execute("CREATE DATABASE %s TEMPLATE template0" % args.dbname)
    db = pg_conninfo.make_conninfo(base, dbname=args.dbname)
    try:
        tables = table_specs()
        nrows = setup(db, args.seed, tables)
        if args.mutate:
            with connect(db, autocommit=True) as conn:
                conn.execute("CREATE OR REPLACE FUNCTION bf_join_prefilter(index regclass, key anyelement) "
                             "RETURNS bool LANGUAGE sql AS $$ SELECT hashtext($2::text) %% 7 <> 0 $$"
                             .replace("%%", "%"))
                conn.execute("CREATE OR REPLACE FUNCTION bf_join_tracked_prefilter(tbl regclass, col name, "
                             "key anyelement) RETURNS bool LANGUAGE sql AS "
                             "$$ SELECT hashtext($3::text) %% 7 <> 0 $$".replace("%%", "%"))
            note("--mutate: bf_join_prefilter and bf_join_tracked_prefilter drop one key in seven "
                 "(this run must fail)")
        note("data: %d tables, %d rows (%.1f s)" % (len(tables), nrows, time.time() - t0))
        gen = Gen(tables, args.seed)
        runner = Runner(db, args, has_guc)
        t1 = time.time()
        indexes = [args.only] if args.only is not None else range(args.queries)
        for i in indexes:
            q = gen.make(i)
            if args.only is not None:
                print("query %d (%s, %s): %s\n  settings %s\n  categories %s" % (
                    i, q.shape, q.mode, q.sql, q.settings, sorted(q.cats)))
            runner.run(q)
        st = runner.stats
        note("queries: %d in %.1f s (%s); %d result rows; auto runs %d" % (
            st["queries"], time.time() - t1,
            ", ".join("%s %d" % (m, st["mode " + m]) for m in ("plain", "cursor", "prepared", "dml")),
            st["rows"], st["auto runs"]))
        if st["comparison checks"]:
            note("the comparison checked on %d results (row order, a row missing, added, "
                 "changed)" % st["comparison checks"])
        mism = sum(1 for k, _ in failures if k == "mismatch")
        errs = sum(1 for k, _ in failures if k in ("error", "crash"))
        note("mismatches %d, errors %d, unsafe placements %d" % (
            mism, errs, sum(1 for k, _ in failures if k == "placement")))
        elig, ef = st["eligible"], st["eligible filtered"]
        pct = 100.0 * ef / elig if elig else 0.0
        note("pre-filters: %d of %d eligible queries (%.0f %%) [%s]; %d queries in all; "
             "%d not counted eligible" % (
                 ef, elig, pct, ", ".join("%s %d/%d" % (c, runner.cat_filtered[c], runner.cat_total[c])
                                          for c in ("inner", "semi", "outer")),
                 st["filtered"], st["filtered, not eligible"]))
        note("scan guards (off in the baseline run): %d queries" % st["guarded"])
        note("pre-filters from filters tracked by the trigger method: %d queries; "
             "from the partitioned index of p_part: %d; from p_part's tracked filter: %d"
             % (st["filtered by a tracked filter"], st["filtered by a partitioned index"],
                st["filtered by a partitioned tracked filter"]))
        # p_part's tracked filter: a fixed check (partitioned_tracked)
        for what in ("filtered by a tracked filter", "filtered by a partitioned index"):
            if not args.self_test and not args.mutate and args.only is None and st[what] == 0:
                fail("harness", "no query was " + what)
        if runner.not_eligible:
            note("filtered, not counted eligible, by shape: %s" % ", ".join(
                "%s %d" % kv for kv in sorted(runner.not_eligible.items())))
        others = sorted(c for c in runner.cat_total if c.startswith("other:"))
        if others:
            note("other candidates (not counted): %s" % ", ".join(
                "%s %d/%d" % (c[6:], runner.cat_filtered[c], runner.cat_total[c]) for c in others))
        if st["auto runs"]:
            note("auto: %d of %d runs had a pre-filter" % (st["auto filtered"], st["auto runs"]))
        if st["analyzed"]:
            note("EXPLAIN ANALYZE of %d queries: %d rows removed by pre-filters" % (
                st["analyzed"], runner.removed))
        rt_elig, rt_ef = st["runtime eligible"], st["runtime eligible filtered"]
        rt_pct = 100.0 * rt_ef / rt_elig if rt_elig else 0.0
        if st["runtime runs"]:
            note("run-time filters: %d of %d runs (%d of %d eligible, %.0f %%; parallel %d, "
                 "work_mem 64kB %d, cursors %d, rescans %d); %d rows removed under "
                 "EXPLAIN ANALYZE" % (
                     st["runtime filtered"], st["runtime runs"], rt_ef, rt_elig, rt_pct,
                     st["runtime filtered, parallel"], st["runtime filtered, small work_mem"],
                     st["runtime filtered, cursor"], st["runtime filtered, rescans"],
                     runner.rt_removed))
        if args.only is None and st["queries"] >= 200 and elig < st["queries"] // 10:
            fail("harness", "only %d eligible queries of %d" % (elig, st["queries"]))
        if not args.self_test and args.only is None:
            if elig >= 20 and pct < args.min_filtered:
                fail("coverage", "only %.0f %% of the eligible queries got a pre-filter "
                     "(at least %.0f %% wanted)" % (pct, args.min_filtered))
            if st["analyzed"] and runner.removed == 0 and ef:
                fail("coverage", "no pre-filter removed a row under EXPLAIN ANALYZE")
            if runner.has_rt and rt_elig >= 20 and rt_pct < args.min_runtime:
                fail("coverage", "only %.0f %% of the queries eligible for a run-time filter "
                     "got one (at least %.0f %% wanted)" % (rt_pct, args.min_runtime))
            if runner.has_rt and st["analyzed"] and rt_ef and runner.rt_removed == 0:
                fail("coverage", "no run-time filter removed a row under EXPLAIN ANALYZE")
        if args.self_test and st["runtime filtered"]:
            fail("harness", "%d plans of the self-test have a run-time filter" %
                 st["runtime filtered"])
        if args.self_test and st["filtered"]:
            fail("harness", "%d plans of the self-test have a pre-filter" % st["filtered"])
        slow = sorted(runner.slow, reverse=True)
        note("slowest queries: %s; the slowest 100 took %.1f s" % (
            ", ".join("%d (%s, %d rows) %.2f s" % (i, s, n, d) for d, i, s, n in slow[:3]),
            sum(x[0] for x in slow[:100])))
        if args.times:
            with open(args.times, "w") as f:
                for d, i, s, n in slow:
                    f.write("%d %s %d %.4f\n" % (i, s, n, d))
        runner.conn.close()
        if not args.no_fixed and args.only is None:
            t2 = time.time()
            fx = Fixed(db, args, has_guc)
            fx.run()
            for n in fx.notes:
                note(n)
            note("fixed checks: %d passed, %d failed (%.1f s)" % (fx.passed, fx.failed,
                                                                 time.time() - t2))
    finally:
        if not args.keep:
            with connect(base, autocommit=True) as conn:
                conn.execute("DROP DATABASE IF EXISTS %s WITH (FORCE)" % args.dbname)
    dt = time.time() - t0
    if failures:
        note("FAILED: %d failures (seed %d, %.0f s)" % (len(failures), args.seed, dt))
        return 1
    note("ok (seed %d, %.0f s)" % (args.seed, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
