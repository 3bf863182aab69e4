#!/usr/bin/python3
"""Check the extension against test/reference.py, an independent reader of
docs/FORMAT.md.  Needs psycopg 3 (Debian python3-psycopg) and a running
server reachable through the libpq environment (PGHOST/PGPORT/PGUSER):

    pg_virtualenv /usr/bin/python3 test/reference_check.py

Every expected value is computed by reference.py from the document; the
extension's output is only ever compared with it.  Prints one line per
failed check and ends with `reference: N passed, M failed`.
"""

import datetime
import decimal
import hashlib
import os
import struct
import sys
import time
import uuid

import psycopg
from psycopg import pq

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

D = decimal.Decimal
UTC = datetime.timezone.utc
DB = "bf_reference"
SEEDS = [0, 1, -1, (1 << 62) + 7, -(1 << 63)]

passed = 0
failed = 0
notes = []


def check(ok, label, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s%s" % (label, (": " + detail) if detail else ""))
    return ok


def note(msg):
    notes.append(msg)
    print("note: " + msg)


_conns = {}


def psql(sql, db=DB, allow_error=False):
    """Runs sql (statements separated by ';', in one implicit transaction)
    on one connection per database kept for the whole run, and returns
    (rc, out, err) as `psql -X -q -A -t -v ON_ERROR_STOP=1` would: rows of
    every result as text with '|' between columns, rc 0 or 3.  Results are
    read in the server's text form, untouched by a driver."""
    if sql.lstrip().upper().startswith("DROP DATABASE"):
        for name in [n for n in _conns if n != db]:
            _conns.pop(name).close()
    conn = _conns.get(db)
    if conn is None or conn.closed or conn.broken:
        conn = psycopg.connect(dbname=db, autocommit=True, client_encoding="UTF8",
                               options="-c TimeZone=UTC")
        _conns[db] = conn
    pg = conn.pgconn
    pg.send_query(sql.encode("utf-8"))
    lines, err = [], ""
    while True:
        res = pg.get_result()
        if res is None:
            break
        if res.status == pq.ExecStatus.TUPLES_OK:
            for r in range(res.ntuples):
                lines.append("|".join("" if v is None else v.decode("utf-8") for v in
                                      (res.get_value(r, c) for c in range(res.nfields))))
        elif res.status == pq.ExecStatus.FATAL_ERROR:
            err = (res.error_message or b"ERROR").decode("utf-8", "replace").strip()
    rc = 3 if err else 0
    if rc != 0 and not allow_error:
        raise RuntimeError("query failed: %s\nSQL: %s" % (err, sql[:2000]))
    return rc, "".join(line + "\n" for line in lines), err


def q(sql):
    """Rows of a query as lists of strings ('|' separated columns)."""
    _, out, _ = psql(sql)
    return [line.split("|") for line in out.splitlines()]


def lit_seed(s):
    return "(%d)::bigint" % s


def hexlit(b):
    return "'\\x%s'::bytea" % b.hex()


# ---------------------------------------------------------------------------
# setup

def setup():
    psql("DROP DATABASE IF EXISTS %s;" % DB, db="postgres")
    psql("CREATE DATABASE %s ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' "
         "TEMPLATE template0;" % DB, db="postgres")
    psql("""
        CREATE EXTENSION IF NOT EXISTS bloomfilter;
        CREATE TYPE ref_mood AS ENUM ('sad', 'ok', 'happy', 'ünïcødé ☃', '');
        CREATE TYPE ref_pair AS (a int4, b text);
        CREATE DOMAIN ref_dom8 AS int8;
        CREATE DOMAIN ref_domt AS text;
    """)


# ---------------------------------------------------------------------------
# values: (sql expression, family, python value)

def f4(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def ts(*a):
    return datetime.datetime(*a)


def tstz(*a, off=0):
    return datetime.datetime(*a, tzinfo=datetime.timezone(datetime.timedelta(minutes=off)))


def portable_values():
    V = []
    # integer
    for t, lo, hi in (("int2", -32768, 32767), ("int4", -2**31, 2**31 - 1),
                      ("int8", -2**63, 2**63 - 1)):
        for v in (0, 1, -1, 42, lo, hi, lo + 1):
            V.append(("(%d)::%s" % (v, t), "integer", v))
    V.append(("(-5)::ref_dom8", "integer", -5))
    # float
    for t, conv in (("float4", f4), ("float8", float)):
        for s, v in (("0", 0.0), ("-0", -0.0), ("1.5", 1.5), ("-2.25", -2.25),
                     ("0.1", 0.1), ("NaN", float("nan")),
                     ("Infinity", float("inf")), ("-Infinity", float("-inf")),
                     ("1e30", 1e30), ("1.4e-45", 1.4e-45),
                     ("3.4028235e38", 3.4028235e38)):
            V.append(("'%s'::%s" % (s, t), "float", conv(v)))
    for s in ("1.7976931348623157e308", "5e-324", "-2.2250738585072014e-308"):
        V.append(("'%s'::float8" % s, "float", float(s)))
    # numeric
    for s in ("1.0", "1.00", "1", "-2.50", "0.000", "-0.000", "NaN", "Infinity",
              "-Infinity", "0.5", "-0.0010", "100", "1e100", "1e-30",
              "123456789012345678901234567890.123456789000", "-1e-16383",
              "9" * 131072, "12.3400e5", "0.1", "-7"):
        V.append(("'%s'::numeric" % s, "numeric", D(s)))
    V.append(("(10::numeric / 4)", "numeric", D("2.5")))
    V.append(("(1::numeric / 3)", "numeric", D("0.33333333333333333333")))
    # text
    for s in ("", "a", "abc", "ab  ", "  lead", "héllo wörld", "日本語テキスト",
              "emoji 😀🎉", "x" * 1000, "tab\there", "quote ' and \\ backslash"):
        sq = s.replace("'", "''")
        V.append(("E'%s'::text" % sq.replace("\\", "\\\\").replace("\t", "\\t"),
                  "text", s))
    V.append(("'x y '::varchar", "text", "x y "))
    V.append(("'ab'::varchar(10)", "text", "ab"))
    V.append(("'a_name'::name", "text", "a_name"))
    V.append(("'ñame'::name", "text", "ñame"))
    V.append(("'ab  '::char(5)", "text", "ab"))
    V.append(("'ab'::char(5)", "text", "ab"))
    V.append(("'  a'::char(3)", "text", "  a"))
    V.append(("'   '::char(3)", "text", ""))
    V.append(("'é  '::bpchar", "text", "é"))
    V.append(("'dom'::ref_domt", "text", "dom"))
    # bytea
    for b in (b"", b"\x00", b"\x00\xff\x10", bytes(range(256)) * 3):
        V.append((hexlit(b), "bytea", b))
    # uuid
    for u in ("00000000-0000-0000-0000-000000000000",
              "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
              "ffffffff-ffff-ffff-ffff-ffffffffffff"):
        V.append(("'%s'::uuid" % u, "uuid", uuid.UUID(u)))
    # boolean
    V.append(("true", "boolean", True))
    V.append(("false", "boolean", False))
    # date
    for s, v in (("2000-01-01", datetime.date(2000, 1, 1)),
                 ("1999-12-31", datetime.date(1999, 12, 31)),
                 ("2024-02-29", datetime.date(2024, 2, 29)),
                 ("1970-01-01", datetime.date(1970, 1, 1)),
                 ("0001-01-01", datetime.date(1, 1, 1)),
                 ("9999-12-31", datetime.date(9999, 12, 31)),
                 ("infinity", "infinity"), ("-infinity", "-infinity"),
                 ("4714-11-24 BC", (-4713, 11, 24)),
                 ("0001-12-31 BC", (0, 12, 31)),
                 ("5874897-12-31", (5874897, 12, 31))):
        V.append(("'%s'::date" % s, "date", v))
    # timestamp
    for s, v in (("2000-01-01 00:00:00", ts(2000, 1, 1)),
                 ("1999-12-31 23:59:59.999999", ts(1999, 12, 31, 23, 59, 59, 999999)),
                 ("2024-02-29 12:34:56.789012", ts(2024, 2, 29, 12, 34, 56, 789012)),
                 ("1970-01-01", ts(1970, 1, 1)),
                 ("0001-01-01 00:00:01", ts(1, 1, 1, 0, 0, 1)),
                 ("infinity", "infinity"), ("-infinity", "-infinity"),
                 ("4714-11-24 00:00:00 BC", (-4713, 11, 24)),
                 ("294276-12-31 23:59:59.999999", (294276, 12, 31, 23, 59, 59, 999999))):
        V.append(("'%s'::timestamp" % s, "timestamp", v))
    # timestamptz (explicit offsets: independent of the session time zone)
    for s, v in (("2000-01-01 00:00:00+00", tstz(2000, 1, 1)),
                 ("2000-01-01 00:00:00+02", tstz(2000, 1, 1, off=120)),
                 ("2021-03-04 05:06:07.123456+05:30", tstz(2021, 3, 4, 5, 6, 7, 123456, off=330)),
                 ("1969-07-20 20:17:40-04", tstz(1969, 7, 20, 20, 17, 40, off=-240)),
                 ("infinity", "infinity"), ("-infinity", "-infinity")):
        V.append(("'%s'::timestamptz" % s, "timestamptz", v))
    # enum
    for s in ("sad", "ok", "happy", "ünïcødé ☃", ""):
        V.append(("'%s'::ref_mood" % s, "enum", s))
    return V


def record_values():
    R = []
    R.append(("ROW(1,'a'::text)", [("integer", 1), ("text", "a")]))
    R.append(("ROW(NULL::int,'x'::text)", [("integer", None), ("text", "x")]))
    R.append(("ROW(1,'a')::ref_pair", [("integer", 1), ("text", "a")]))
    R.append(("ROW(NULL::int, NULL::text)", [("integer", None), ("text", None)]))
    R.append(("ROW(2,'b')::ref_pair", [("integer", 2), ("text", "b")]))
    R.append(("ROW(''::text)", [("text", "")]))
    R.append(("ROW(1::int8, 2.50::numeric, true, NULL::text)",
              [("integer", 1), ("numeric", D("2.50")), ("boolean", True), ("text", None)]))
    R.append(("ROW('ab  '::char(4), '\\x01ff'::bytea, 'NaN'::float4)",
              [("text", "ab"), ("bytea", b"\x01\xff"), ("float", float("nan"))]))
    R.append(("ROW('-0'::float8, 'ok'::ref_mood, '2000-01-02'::date, "
              "'2000-01-01 00:00:01'::timestamp, '2000-01-01 00:00:00+01'::timestamptz, "
              "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, (-3)::int2, 'z'::name)",
              [("float", 0.0), ("enum", "ok"), ("date", datetime.date(2000, 1, 2)),
               ("timestamp", ts(2000, 1, 1, 0, 0, 1)), ("timestamptz", tstz(2000, 1, 1, off=60)),
               ("uuid", uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")),
               ("integer", -3), ("text", "z")]))
    R.append(("ROW(repeat('é', 300))", [("text", "é" * 300)]))
    return R


# ---------------------------------------------------------------------------
# 2. hashes

def check_hashes():
    V = portable_values()
    R = record_values()
    arms = []
    for si, seed in enumerate(SEEDS):
        for i, (expr, _f, _v) in enumerate(V):
            arms.append("SELECT 'v', %d, %d, bf_hash(%s, %s)" % (si, i, expr, lit_seed(seed)))
        for i, (expr, _v) in enumerate(R):
            arms.append("SELECT 'r', %d, %d, bf_hash(%s, %s)" % (si, i, expr, lit_seed(seed)))
    rows = q("\nUNION ALL\n".join(arms) + ";")
    check(len(rows) == len(arms), "hash: row count", "%d != %d" % (len(rows), len(arms)))
    for kind, si, i, got in rows:
        seed = SEEDS[int(si)]
        if kind == "v":
            expr, fam, val = V[int(i)]
            exp = ref.signed(ref.hash_value(val, fam, seed))
            check(int(got) == exp, "bf_hash(%s, %d)" % (expr[:80], seed),
                  "extension %s, reference %d (canonical bytes %s)"
                  % (got, exp, ref.canonical(val, fam)[:64].hex()))
        else:
            expr, fields = R[int(i)]
            exp = ref.signed(ref.hash_value(fields, "record", seed))
            check(int(got) == exp, "bf_hash(%s, %d)" % (expr[:80], seed),
                  "extension %s, reference %d (record bytes %s)"
                  % (got, exp, ref.record_bytes(fields)[:96].hex()))

    # non-portable values (§3.1): the hash is the type's extended hash with
    # the seed; PostgreSQL core's hashinetextended gives it.
    for seed in SEEDS:
        rows = q("SELECT bf_hash('10.1.2.3/16'::inet, %s), hashinetextended('10.1.2.3/16'::inet, %s);"
                 % (lit_seed(seed), lit_seed(seed)))
        check(rows[0][0] == rows[0][1], "bf_hash(inet, %d) = hashinetextended" % seed,
              "%s vs %s" % tuple(rows[0]))
        # record with a family-13 field: its 8 bytes are the extended hash, seed 0
        (inner,), = q("SELECT hashinetextended('10.0.0.1'::inet, 0);")
        got, = q("SELECT bf_hash(ROW(7, '10.0.0.1'::inet), %s);" % lit_seed(seed))[0]
        exp = ref.signed(ref.hash_value([("integer", 7), ("other", int(inner))], "record", seed))
        check(int(got) == exp, "bf_hash(ROW(7, inet), %d)" % seed,
              "extension %s, reference %d" % (got, exp))


# ---------------------------------------------------------------------------
# 3. filters

class Case:
    def __init__(self, label, empty_sql, family, members, nonmembers=None,
                 add_all=True, detail=None):
        """members/nonmembers: list of (sql expr, python value) or a
        ("series", sql template with {g}, python function of g, lo, hi)."""
        self.label, self.empty_sql, self.family = label, empty_sql, family
        self.members, self.nonmembers = members, nonmembers or []
        self.add_all, self.detail = add_all, detail


def series(tmpl, fn, lo, hi):
    return ("series", tmpl, fn, lo, hi)


def expand(spec):
    if isinstance(spec, tuple) and spec and spec[0] == "series":
        _, _tmpl, fn, lo, hi = spec
        return [fn(g) for g in range(lo, hi + 1)]
    return [v for _e, v in spec]


def sql_array(spec):
    if isinstance(spec, tuple) and spec and spec[0] == "series":
        _, tmpl, _fn, lo, hi = spec
        return "ARRAY(SELECT %s FROM generate_series(%d, %d) g ORDER BY g)" % (
            tmpl.format(g="g"), lo, hi)
    return "ARRAY[%s]" % ", ".join(e for e, _v in spec)


def sql_contains(spec, fexpr):
    """One string of 0/1, in order, of bf_contains(f, value)."""
    if isinstance(spec, tuple) and spec and spec[0] == "series":
        _, tmpl, _fn, lo, hi = spec
        return ("(SELECT string_agg(CASE WHEN bf_contains(%s, %s) THEN '1' ELSE '0' END, '' ORDER BY g) "
                "FROM generate_series(%d, %d) g)" % (fexpr, tmpl.format(g="g"), lo, hi))
    spec = [(e, v) for e, v in spec if v is not None]   # bf_contains is STRICT
    if not spec:
        return "''"
    return "(%s)" % " || ".join("(CASE WHEN bf_contains(%s, %s) THEN '1' ELSE '0' END)"
                                % (fexpr, e) for e, _v in spec)


def build_cases(inet_oid, inet_hash):
    md5u = lambda g: uuid.UUID(hashlib.md5(b"u%d" % g).hexdigest())
    t0 = datetime.datetime(2020, 1, 1, tzinfo=UTC)
    V = portable_values()
    by_family = {}
    for e, f, v in V:
        by_family.setdefault(f, []).append((e, v))
    C = []
    for seed in (0, -1):
        C.append(Case("int8 10k seed %d" % seed, "bf_create(10000, 0.01, %s)" % lit_seed(seed),
                      "integer", series("{g}::int8", lambda g: g, 1, 10000),
                      series("{g}::int8", lambda g: g, 10001, 20000)))
    C.append(Case("text 10k", "bf_create(10000, 0.02, %s)" % lit_seed((1 << 62) + 7),
                  "text", series("'k' || {g}", lambda g: "k%d" % g, 1, 10000),
                  series("'k' || {g}", lambda g: "k%d" % g, 10001, 20000)))
    C.append(Case("utf8 text 10k sized", "bf_create_sized(50000, 4, %s)" % lit_seed(-(1 << 63)),
                  "text", series("'é☃' || {g}", lambda g: "é☃%d" % g, 1, 10000),
                  series("'é☃' || {g}", lambda g: "é☃%d" % g, 10001, 20000)))
    C.append(Case("numeric 10k", "bf_create(10000, 0.001, 1)", "numeric",
                  series("({g}::numeric / 100)", lambda g: D(g).scaleb(-2), 1, 10000),
                  series("({g}::numeric / 100)", lambda g: D(g).scaleb(-2), 10001, 20000)))
    C.append(Case("uuid 10k", "bf_create(10000, 0.05, 7)", "uuid",
                  series("md5('u' || {g})::uuid", md5u, 1, 10000),
                  series("md5('u' || {g})::uuid", md5u, 10001, 20000)))
    C.append(Case("timestamptz 10k", "bf_create(10000, 0.01, 3)", "timestamptz",
                  series("('2020-01-01 00:00:00+00'::timestamptz + {g} * interval '1000003 microseconds')",
                         lambda g: t0 + datetime.timedelta(microseconds=1000003 * g), 1, 10000),
                  series("('2020-01-01 00:00:00+00'::timestamptz + {g} * interval '1000003 microseconds')",
                         lambda g: t0 + datetime.timedelta(microseconds=1000003 * g), 10001, 20000)))
    C.append(Case("float8 10k sized k=1", "bf_create_sized(1000, 1, 42)", "float",
                  series("({g}::float8 / 7)", lambda g: g / 7, 1, 10000),
                  series("({g}::float8 / 7)", lambda g: g / 7, 10001, 20000)))
    C.append(Case("int4 sized 512 k=64 saturated", "bf_create_sized(512, 64, %s)" % lit_seed(-(1 << 63)),
                  "integer", series("{g}::int4", lambda g: g, -50, 50),
                  series("{g}::int4", lambda g: g, 51, 2000)))
    # one filter per portable family from the hash values (int2/int4/int8 mixed)
    fam_order = ["integer", "float", "numeric", "text", "bytea", "uuid", "boolean",
                 "date", "timestamp", "timestamptz", "enum"]
    for i, fam in enumerate(fam_order):
        vals = by_family[fam]
        if fam == "integer":            # an array needs one type
            vals = [("(%s)::int8" % e, v) for e, v in vals]
        elif fam == "float":
            vals = [("(%s)::float8" % e, v) for e, v in vals]
        elif fam == "text":
            # (casting char(n) to text strips its trailing blanks: same value)
            vals = [("(%s)::text" % e, v) for e, v in vals]
        elif fam in ("numeric",):
            vals = [(e, v) for e, v in vals if len(e) < 1000]
        nonm = []
        seed = SEEDS[i % len(SEEDS)]
        C.append(Case("%s values" % fam, "bf_create(100, 0.01, %s)" % lit_seed(seed), fam,
                      vals, nonm))
    # chained bf_add with mixed integer types into an int8-family filter
    C.append(Case("integer mixed bf_add", "bf_create_sized(4096, 9, 5)", "integer",
                  [("1::int2", 1), ("2::int4", 2), ("3::int8", 3), ("(-32768)::int2", -32768)],
                  [("4::int2", 4), ("5::int4", 5), ("(-32767)::int2", -32767)], add_all=False))
    C.append(Case("record (int4,text)", "bf_create(100, 0.01, 9)", "record",
                  [("ROW(1,'a'::text)", [("integer", 1), ("text", "a")]),
                   ("ROW(NULL::int,'x'::text)", [("integer", None), ("text", "x")]),
                   ("ROW(2,NULL::text)", [("integer", 2), ("text", None)]),
                   ("ROW(3,'é'::text)", [("integer", 3), ("text", "é")])],
                  [("ROW(1,'b'::text)", [("integer", 1), ("text", "b")]),
                   ("ROW(NULL::int,NULL::text)", [("integer", None), ("text", None)])],
                  add_all=False))
    C.append(Case("record 10k", "bf_create(10000, 0.01, 11)", "record",
                  series("ROW({g}, 'r' || {g})",
                         lambda g: [("integer", g), ("text", "r%d" % g)], 1, 10000),
                  series("ROW({g}, 'r' || {g})",
                         lambda g: [("integer", g), ("text", "r%d" % g)], 10001, 20000),
                  add_all=False))
    C.append(Case("record with inet (non-portable)", "bf_create(100, 0.01, 13)", "record",
                  [("ROW(7, '10.0.0.1'::inet)", [("integer", 7), ("other", inet_hash[("10.0.0.1", 0)])])],
                  [("ROW(8, '10.0.0.1'::inet)", [("integer", 8), ("other", inet_hash[("10.0.0.1", 0)])])],
                  add_all=False))
    C.append(Case("inet (family other)", "bf_create_sized(2048, 5, 7)", "other",
                  [("'10.0.0.1'::inet", inet_hash[("10.0.0.1", 7)]),
                   ("'::1'::inet", inet_hash[("::1", 7)])],
                  [("'10.0.0.2'::inet", inet_hash[("10.0.0.2", 7)])],
                  detail=inet_oid))
    C.append(Case("int8 array with NULLs", "bf_create(50, 0.1, 2)", "integer",
                  [("NULL::int8", None), ("1::int8", 1), ("NULL", None), ("1::int8", 1),
                   ("2::int8", 2)], [("3::int8", 3)]))
    # fpr values whose text form exercises the float printer
    for fpr in ("0.00001", "0.0001", "0.3", "0.123456789012345678", "(1.0/3)",
                "0.000000123", "0.5", "0.9999999999999999", "1e-20"):
        C.append(Case("fpr %s" % fpr, "bf_create(10, %s::float8, 0)" % fpr, "integer",
                      [("1::int8", 1)], [("2::int8", 2)]))
    return C


def sql_filter(case):
    if case.add_all:
        return "bf_add_all(%s, %s)" % (case.empty_sql, sql_array(case.members))
    if isinstance(case.members, tuple):      # a series: aggregate by chaining
        raise ValueError
    f = case.empty_sql
    for e, _v in case.members:
        f = "bf_add(%s, %s)" % (f, e)
    return f


texts_checked = 0


def check_filters():
    global texts_checked
    (inet_oid,), = q("SELECT 'inet'::regtype::oid;")
    inet_oid = int(inet_oid)
    inet_hash = {}
    for a, seed in (("10.0.0.1", 0), ("10.0.0.1", 7), ("::1", 7), ("10.0.0.2", 7)):
        (h,), = q("SELECT hashinetextended('%s'::inet, %d);" % (a, seed))
        inet_hash[a] = inet_hash[(a, seed)] = int(h)
    ref.type_name_resolver = lambda oid: {inet_oid: "pg_catalog.inet"}[oid]
    for case in build_cases(inet_oid, inet_hash):
        lbl = "filter %s" % case.label
        t0 = time.time()
        if case.add_all or isinstance(case.members, tuple):
            fsql = "bf_add_all(%s, %s)" % (case.empty_sql, sql_array(case.members))
        else:
            fsql = sql_filter(case)
        sql = ("WITH c AS MATERIALIZED (SELECT %s AS f, %s AS e) "
               "SELECT encode(e::bytea, 'hex'), encode(f::bytea, 'hex'), %s, %s, f::text, e::text FROM c;"
               % (fsql, case.empty_sql, sql_contains(case.members, "f"),
                  sql_contains(case.nonmembers, "f")))
        try:
            (ehex, fhex, mans, nans, ftext, etext), = q(sql)
        except Exception as e:
            check(False, lbl, "query failed: %s" % str(e)[:500])
            continue
        ebytes, fbytes = bytes.fromhex(ehex), bytes.fromhex(fhex)
        # (a) Python parses both
        try:
            pe = ref.parse(ebytes)
            pf = ref.parse(fbytes)
            check(True, lbl + ": parse")
        except ValueError as e:
            check(False, lbl + ": parse", str(e))
            continue
        check(pe.family == 0 and pe.inserted == 0 and not any(pe.bits) and pe.flags == 0
              and pe.detail == 0, lbl + ": empty filter is empty", str(pe.header()))
        # (b) build in Python from the empty filter; byte-identical
        mine = pe.copy()
        members = expand(case.members)
        nonmembers = expand(case.nonmembers)
        for v in members:
            mine.add_value(v, case.family, case.detail)     # None: skipped
        members = [v for v in members if v is not None]
        nonmembers = [v for v in nonmembers if v is not None]
        mb = mine.to_bytes()
        if not check(mb == fbytes, lbl + ": bytes identical",
                     "python header %s / extension header %s; first differing byte %s"
                     % (mine.header(), pf.header(),
                        next((i for i in range(min(len(mb), len(fbytes))) if mb[i] != fbytes[i]), None))):
            pass
        # (c) membership answers agree
        exp_m = "".join("1" if pf.contains_value(v, case.family, case.detail) else "0" for v in members)
        exp_n = "".join("1" if pf.contains_value(v, case.family, case.detail) else "0" for v in nonmembers)
        check(exp_m == "1" * len(members), lbl + ": python finds every member",
              "%d missing" % exp_m.count("0"))
        bad = [i for i in range(len(members)) if mans[i:i + 1] != exp_m[i:i + 1]]
        check(len(mans) == len(members) and not bad, lbl + ": bf_contains members agree",
              "%d disagreements, first index %s" % (len(bad), bad[:5]))
        bad = [i for i in range(len(nonmembers)) if nans[i:i + 1] != exp_n[i:i + 1]]
        check(len(nans) == len(nonmembers) and not bad, lbl + ": bf_contains non-members agree",
              "%d disagreements, first index %s (python fp=%d, ext fp=%d)"
              % (len(bad), bad[:5], exp_n.count("1"), nans.count("1")))
        # 4. text form
        for which, pobj, text, raw in (("filter", pf, ftext, fbytes), ("empty", pe, etext, ebytes)):
            texts_checked += 1
            try:
                mytext = pobj.to_text()
            except ValueError as e:
                mytext = "error: %s" % e
            if mytext != text:
                diff = [(a, b) for a, b in zip(mytext.split(" "), text.split(" ")) if a != b]
                check(False, lbl + ": text form (%s) printer" % which,
                      "python vs extension tokens: %s" % [(a[:60], b[:60]) for a, b in diff][:4])
            else:
                check(True, "")
            try:
                back = ref.parse_text(text, lambda n: {"pg_catalog.inet": inet_oid}[n]).to_bytes()
                check(back == raw, lbl + ": text form (%s) python parse = bytes" % which)
            except ValueError as e:
                check(False, lbl + ": text form (%s) python parse" % which, str(e))
            if mytext.startswith("bloomfilter:") and len(mytext) < 200000:
                (h,), = q("SELECT encode('%s'::bloomfilter::bytea, 'hex');" % mytext)
                check(bytes.fromhex(h) == raw, lbl + ": python text form read by bloomfilter_in (%s)" % which)
        if os.environ.get("REF_TIMING"):
            print("#   %s: %.1fs" % (lbl, time.time() - t0))

    # sized-filter headers computed by Python alone (capacity 0, fpr 0)
    for nbits, k, seed in ((1, 1, 0), (512, 7, 1), (513, 64, -1), (1000, 3, (1 << 62) + 7),
                           (512 * 1000, 10, -(1 << 63))):
        (h,), = q("SELECT encode(bf_create_sized(%d, %d, %s)::bytea, 'hex');" % (nbits, k, lit_seed(seed)))
        mine = ref.Filter.empty(-(-nbits // 512), k, seed).to_bytes()
        check(bytes.fromhex(h) == mine, "bf_create_sized(%d, %d, %d) bytes" % (nbits, k, seed),
              "ext %s... python %s..." % (h[:128], mine[:64].hex()))

    # §4 sizing: not part of the format, so a difference is only a note
    for n, p in ((1000, 0.01), (10000, 0.001), (100, 0.5), (1, 0.01), (123457, 0.0001)):
        (nb, k, _b), = q("SELECT nbits, nhashes, bytes FROM bf_estimate(%d, %r);" % (n, p))
        mine = ref.estimate(n, p)
        if (int(nb) // 512, int(k)) != mine:
            note("bf_estimate(%d, %r) = %s blocks, k=%s; FORMAT.md section 4 model gives %s blocks, k=%d"
                 % (n, p, int(nb) // 512, k, mine[0], mine[1]))

    # a filter built only in Python, read by the extension
    pyf = ref.Filter.empty(3, 5, 12345)
    words = ["alpha", "beta", "gamma", "δέλτα", ""]
    for w in words:
        pyf.add_value(w, "text")
    arr = ", ".join("bf_contains(f, '%s'::text)::int::text" % w for w in words + ["omega"])
    (ans,), = q("SELECT concat(%s) FROM (SELECT %s::bloomfilter f) s;" % (arr, hexlit(pyf.to_bytes())))
    exp = "".join("1" if pyf.contains_value(w, "text") else "0" for w in words + ["omega"])
    check(ans == exp, "python-built filter answered by bf_contains", "%s vs %s" % (ans, exp))

    # family mismatch is an error in both
    rc, _o, err = psql("SELECT bf_contains(bf_add(bf_create(10), 1::int8), 'x'::text);", allow_error=True)
    try:
        f = ref.Filter.empty(1, 3)
        f.add_value(1, "integer")
        f.contains_value("x", "text")
        py_rej = False
    except ValueError:
        py_rej = True
    check(rc != 0 and py_rej, "family mismatch rejected", "ext rc %d %s, python rejected %s"
          % (rc, err.strip()[:100], py_rej))
    rc, _o, err = psql("SELECT bf_contains(bf_add(bf_create(10), ROW(1,'a'::text)), ROW(1, 2));", allow_error=True)
    check(rc != 0, "record field families mismatch rejected", "ext rc %d" % rc)
    # ROW(1,'a') with an untyped literal: the field is of type unknown in
    # PostgreSQL; a text-like literal is expected to hash as text
    for expr, fields in (("ROW(1,'a')", [("integer", 1), ("text", "a")]),
                         ("ROW(NULL::int,'x')", [("integer", None), ("text", "x")])):
        for seed in SEEDS:
            rc, out, err = psql("SELECT bf_hash(%s, %s);" % (expr, lit_seed(seed)), allow_error=True)
            exp = ref.signed(ref.hash_value(fields, "record", seed))
            check(rc == 0 and out.strip() == str(exp), "bf_hash(%s, %d) (untyped literal)" % (expr, seed),
                  "extension %s, reference %d" % ((out.strip() or err.strip().splitlines()[0]), exp))
    # empty filter answers false
    (a,), = q("SELECT bf_contains(bf_create(10), 1);")
    check(a == "f", "empty filter contains nothing")


# ---------------------------------------------------------------------------
# 5. corruptions

def check_corruptions():
    (h,), = q("SELECT encode(bf_add_all(bf_create(100, 0.01, 5), ARRAY[1,2,3])::bytea, 'hex');")
    good = bytes.fromhex(h)
    pf = ref.parse(good)

    def patch(off, fmt, val):
        b = bytearray(good)
        struct.pack_into(fmt, b, off, val)
        return bytes(b)

    nbl = pf.nblocks
    corrupt = [
        ("wrong magic", patch(0, "<4s", b"BLMG")),
        ("version 2", patch(4, "<H", 2)),
        ("version 0", patch(4, "<H", 0)),
        ("layout 2", patch(6, "<B", 2)),
        ("hash function 2", patch(7, "<B", 2)),
        ("family 14", patch(8, "<B", 14)),
        ("unknown flag bit", patch(9, "<B", 2)),
        ("non-portable flag on integer", patch(9, "<B", 1)),
        ("nhashes 0", patch(10, "<H", 0)),
        ("nhashes 65", patch(10, "<H", 65)),
        ("nblocks 0", patch(24, "<Q", 0)),
        ("nblocks + 1 (bad length)", patch(24, "<Q", nbl + 1)),
        ("nblocks 2^23+1", patch(24, "<Q", (1 << 23) + 1)),
        ("nblocks 2^63", patch(24, "<Q", 1 << 63)),
        ("truncated by one byte", good[:-1]),
        ("one extra byte", good + b"\0"),
        ("header only", good[:64]),
        ("shorter than header", good[:40]),
        ("empty", b""),
        ("reserved non-zero", patch(56, "<Q", 1)),
        ("reserved high byte", patch(63, "<B", 0x80)),
        ("capacity -1", patch(40, "<q", -1)),
        ("fpr NaN", patch(48, "<d", float("nan"))),
        ("fpr 1.0", patch(48, "<d", 1.0)),
        ("fpr -0.5", patch(48, "<d", -0.5)),
        ("fpr +inf", patch(48, "<d", float("inf"))),
    ]
    b = bytearray(good)
    struct.pack_into("<B", b, 8, 0)
    corrupt.append(("family 0 with inserted 3", bytes(b)))
    b = bytearray(good)
    struct.pack_into("<B", b, 8, 13)
    corrupt.append(("family 13 without non-portable flag", bytes(b)))

    # positive control
    rc, _o, err = psql("SELECT (%s::bloomfilter)::bytea IS NOT NULL;" % hexlit(good), allow_error=True)
    check(rc == 0, "valid filter accepted by extension", err.strip())
    for label, data in corrupt:
        try:
            ref.parse(data)
            py = "accepted"
        except ValueError as e:
            py = "rejected (%s)" % e
        rc, _o, err = psql("SELECT %s::bloomfilter;" % hexlit(data), allow_error=True)
        ext = "rejected (%s)" % err.strip().splitlines()[0][:120] if rc else "accepted"
        check(py.startswith("rejected") and ext.startswith("rejected"),
              "corruption '%s'" % label, "python %s; extension %s" % (py, ext))

    # text-form corruptions
    (t,), = q("SELECT (bf_add_all(bf_create(100, 0.01, 5), ARRAY[1,2,3]))::text;")
    toks = t.split(" ")
    tcor = [
        ("bloomfilter:2", " ".join(["bloomfilter:2"] + toks[1:])),
        ("nbits not multiple of 512", t.replace("nbits=%d" % pf.nbits, "nbits=%d" % (pf.nbits + 8))),
        ("tokens swapped", " ".join(toks[:4] + [toks[5], toks[4]] + toks[6:])),
        ("double space", t.replace(" seed=", "  seed=")),
        ("unknown family", t.replace("family=integer", "family=int")),
        ("layout=flat", t.replace("layout=blocked", "layout=flat")),
        ("hash=xxh64", t.replace("hash=xxh3_64", "hash=xxh64")),
        ("nhashes=0", t.replace("nhashes=%d" % pf.k, "nhashes=0")),
        ("fpr=1", t.replace("fpr=0.01", "fpr=1")),
        ("fpr=NaN", t.replace("fpr=0.01", "fpr=NaN")),
        ("capacity=-1", t.replace("capacity=100", "capacity=-1")),
        ("bits truncated", t[:-8]),
        ("family=none inserted=3", t.replace("family=integer", "family=none")),
        ("family=record()", t.replace("family=integer", "family=record()")),
        ("family=record(record)", t.replace("family=integer", "family=record(record)")),
    ]
    for label, text in tcor:
        if text == t:
            check(False, "text corruption '%s' not applied" % label)
            continue
        try:
            ref.parse_text(text)
            py = "accepted"
        except ValueError as e:
            py = "rejected (%s)" % e
        rc, _o, err = psql("SELECT '%s'::bloomfilter;" % text, allow_error=True)
        ext = "rejected (%s)" % err.strip().splitlines()[0][:120] if rc else "accepted"
        check(py.startswith("rejected") and ext.startswith("rejected"),
              "text corruption '%s'" % label, "python %s; extension %s" % (py, ext))

    # Probes of cases the document does not settle: reported, not counted.
    probes = []
    b = bytearray(good); struct.pack_into("<I", b, 12, 5)
    probes.append(("integer family with family detail 5", bytes(b)))
    (rh,), = q("SELECT encode(bf_add(bf_create(100, 0.01, 5), ROW(1,'a'::text))::bytea, 'hex');")
    rgood = bytes.fromhex(rh)
    for det, what in ((0, "0"), (0x4C, "nested record nibble"), (0x401, "gap nibble"),
                      (0x4, "one field instead of two"), (0xF1, "unknown nibble 15"),
                      (0x1D, "non-portable field but no flag")):
        b = bytearray(rgood); struct.pack_into("<I", b, 12, det & 0xFFFFFFFF)
        probes.append(("record family detail %#x (%s)" % (det & 0xFFFFFFFF, what), bytes(b)))
    b = bytearray(good); struct.pack_into("<q", b, 40, 0)
    probes.append(("capacity 0 with fpr 0.01", bytes(b)))
    b = bytearray(good); struct.pack_into("<d", b, 48, 0.0)
    probes.append(("capacity 100 with fpr 0", bytes(b)))
    (eh,), = q("SELECT encode(bf_create(100, 0.01, 5)::bytea, 'hex');")
    b = bytearray(bytes.fromhex(eh)); b[64] = 1
    probes.append(("family 0, inserted 0, a bit set", bytes(b)))
    b = bytearray(good); struct.pack_into("<d", b, 48, -0.0)
    probes.append(("fpr -0.0", bytes(b)))
    b = bytearray(good); struct.pack_into("<d", b, 48, 5e-324)
    probes.append(("fpr 5e-324 (denormal)", bytes(b)))
    (ih,), = q("SELECT encode(bf_add(bf_create(100, 0.01, 5), '10.0.0.1'::inet)::bytea, 'hex');")
    igood = bytes.fromhex(ih)
    for det, what in ((0, "OID 0"), (4000000000, "OID of no type"), (23, "OID of int4")):
        b = bytearray(igood); struct.pack_into("<I", b, 12, det)
        probes.append(("family other with %s" % what, bytes(b)))
    # fpr -0.0 is inside [0, 1): accepted, and its text form must read back
    # to the same float8, i.e. print as "-0"
    b = bytearray(good); struct.pack_into("<d", b, 48, -0.0)
    rc, out, err = psql("SELECT (%s::bloomfilter)::text;" % hexlit(bytes(b)), allow_error=True)
    try:
        mine = ref.parse(bytes(b)).to_text()
    except ValueError as e:
        mine = "error %s" % e
    check(rc == 0 and out.strip() == mine, "fpr -0.0 text form",
          "python %r / extension %r" % (mine[:120], (out.strip() or err.strip())[:120]))
    if rc == 0:
        back = ref.parse_text(out.strip()).to_bytes()
        check(back == bytes(b), "fpr -0.0 text form reads back to the same bytes (python)")
    for label, data in probes:
        try:
            ref.parse(data)
            py = "accepts"
        except ValueError as e:
            py = "rejects (%s)" % e
        rc, _o, err = psql("SELECT %s::bloomfilter;" % hexlit(data), allow_error=True)
        ext = "rejects (%s)" % err.strip().splitlines()[0][:140] if rc else "accepts"
        if py.split()[0] != ext.split()[0] or os.environ.get("REF_VERBOSE"):
            note("unspecified case '%s': python %s, extension %s" % (label, py, ext))


# ---------------------------------------------------------------------------
# 6. the conformance file (test/conformance/README.md): reference.py must
# give every answer in it, and the server must still give them too

CONFORMANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           "conformance", "conformance.json")


def _date_parts(s):
    """'2000-01-01' or '4714-11-24 BC' -> astronomical (y, m, d), rest."""
    bc = s.endswith(" BC")
    if bc:
        s = s[:-3]
    y, m, rest = s.split("-", 2)
    d, rest = rest[:2], rest[2:]
    y = int(y)
    return (1 - y if bc else y), int(m), int(d), rest


def _time_us(s):
    """'HH:MM:SS[.ffffff]' -> microseconds."""
    hh, mm, ss = s.split(":")
    sec, _, frac = ss.partition(".")
    return ((int(hh) * 60 + int(mm)) * 60 + int(sec)) * 1000000 + int((frac + "000000")[:6])


def key_value(key, types):
    """(family, value for reference.py) of a conformance KEY."""
    t, v = key["type"], key.get("value")
    if t == "record":
        return "record", [key_value(f, types) for f in key["fields"]]
    fam = types[t]
    if v is None:
        return fam, None
    if fam == "integer":
        return fam, int(v)
    if fam == "float":
        x = float(v)
        return fam, (ref_f4(x) if t == "float4" else x)
    if fam == "numeric":
        return fam, D(v)
    if fam == "text":
        return fam, (v.rstrip(" ") if t == "bpchar" else v)
    if fam == "bytea":
        return fam, bytes.fromhex(v[2:])
    if fam == "uuid":
        return fam, uuid.UUID(v)
    if fam == "boolean":
        return fam, {"t": True, "f": False}[v]
    if fam == "enum":
        return fam, v
    if v in ("infinity", "-infinity"):
        return fam, v
    if fam == "date":
        y, m, d, rest = _date_parts(v)
        assert rest == "", v
        return fam, ref.days_from_civil(y, m, d)
    if fam in ("timestamp", "timestamptz"):
        bc = v.endswith(" BC")
        body = v[:-3] if bc else v
        off = 0
        if fam == "timestamptz":     # "+HH", "+HH:MM" or "+HH:MM:SS"
            i = max(body.rfind("+"), body.rfind("-"))
            sign = -1 if body[i] == "-" else 1
            parts = [int(x) for x in body[i + 1:].split(":")] + [0, 0]
            off = sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]) * 1000000
            body = body[:i]
        y, m, d, rest = _date_parts(body + (" BC" if bc else ""))
        return fam, ref.days_from_civil(y, m, d) * 86400000000 + _time_us(rest.strip()) - off
    raise ValueError("unknown type %r" % t)


def ref_f4(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def sql_key(key):
    """The SQL literal of a conformance KEY (records as ROW(...))."""
    if key["type"] == "record":
        return "ROW(%s)" % ", ".join(sql_key(f) for f in key["fields"])
    if key["value"] is None:
        return "NULL::%s" % key["type"]
    return "'%s'::%s" % (key["value"].replace("'", "''"), key["type"])


def _signature(key):
    if key["type"] == "record":
        return ("record",) + tuple(f["type"] for f in key["fields"])
    return (key["type"],)


def _hash_of(fv):
    fam, v = fv
    if fam == "record":
        return lambda seed: ref.hash_value(v, "record", seed)
    return lambda seed: ref.hash_value(v, fam, seed)


def check_filter_entry(f, lbl, parse, parse_text, types):
    """A filter of the conformance file (plain or growing, read by parse and
    parse_text): bytes and text parse to the same filter, every probe and
    error agrees, the fpr of the bits is the file's, and the server reads
    the text to the bytes and still gives the probes' answers."""
    import base64
    import json
    raw = base64.b64decode(f["bytes"])
    try:
        pf = parse(raw)
        pt = parse_text(f["text"])
    except ValueError as e:
        check(False, lbl + ": parse", str(e))
        return
    check(pt.to_bytes() == raw, lbl + ": text form parses to the bytes")
    check(pf.to_text() == f["text"], lbl + ": reference prints the text form")
    bad = []
    for p in f["probes"]:
        fam, v = key_value(p["key"], types)
        try:
            got = pf.contains_value(v, fam) if pf.family else False
        except ValueError as e:
            got = "error %s" % e
        if got != p["expect"]:
            bad.append((p["key"], p["expect"], got))
    check(not bad, lbl + ": %d probes" % len(f["probes"]),
          "%d differ, first %s" % (len(bad), bad[:2]))
    for e in f.get("errors", []):
        fam, v = key_value(e["key"], types)
        try:
            pf.contains_value(v, fam)
            rej = False
        except ValueError:
            rej = True
        check(rej, lbl + ": refuses %s" % json.dumps(e["key"])[:80])
    fpr = pf_fpr(pf)
    check(abs(fpr - float(f["info"]["fpr"])) <= 1e-9 * max(fpr, 1e-300),
          lbl + ": fpr of the bits", "reference %r, file %s" % (fpr, f["info"]["fpr"]))
    # the server reads the text form to the same bytes and gives the same answers
    fl = "'%s'::bloomfilter" % f["text"]
    try:
        (hx,), = q("SELECT encode(%s::bytea, 'hex');" % fl)
    except RuntimeError as e:
        hx = "error: " + str(e).splitlines()[0]
    if not check(hx == raw.hex(), lbl + ": the server reads the text to the bytes", hx[:200]):
        return
    if f["probes"]:
        # one VALUES list per type signature (a VALUES column has one type)
        groups = {}
        for n, p in enumerate(f["probes"]):
            groups.setdefault(_signature(p["key"]), []).append(
                "(%d, %s)" % (n, sql_key(p["key"])))
        arms = ["SELECT n, bf_contains(%s, k)::int FROM (VALUES %s) v(n, k)"
                % (fl, ", ".join(g)) for g in groups.values()]
        got = dict((int(n), a) for n, a in q("\nUNION ALL\n".join(arms) + ";"))
        exp = ["1" if p["expect"] else "0" for p in f["probes"]]
        diff = [i for i in range(len(exp)) if got.get(i) != exp[i]]
        check(not diff, lbl + ": the server still gives the probes' answers",
              "%d differ, first %s" % (len(diff), [f["probes"][i] for i in diff[:2]]))


def check_conformance():
    import base64
    import json
    with open(CONFORMANCE, encoding="utf-8") as fh:
        doc = json.load(fh)
    check(doc.get("format") == 1, "conformance: format 1")
    types = doc["types"]
    psql("CREATE TYPE conf_mood AS ENUM ('sad', 'ok', 'happy', 'ünïcødé ☃', '');")

    # hashes: reference.py from the printed value, and the server still agrees
    bad = 0
    for h in doc["hashes"]:
        got = ref.signed(_hash_of(key_value(h["key"], types))(int(h["seed"])))
        if got != int(h["hash"]):
            bad += 1
            if bad <= 5:
                check(False, "conformance hash %s seed %s" % (json.dumps(h["key"])[:100], h["seed"]),
                      "reference %d, file %s" % (got, h["hash"]))
    check(bad == 0, "conformance: %d hashes by reference.py" % len(doc["hashes"]),
          "%d differ" % bad)
    arms = ["SELECT bf_hash(%s, %s)::text" % (sql_key(h["key"]), lit_seed(int(h["seed"])))
            for h in doc["hashes"]]
    rows = q("\nUNION ALL\n".join(arms) + ";")
    bad = [i for i, r in enumerate(rows) if r[0] != doc["hashes"][i]["hash"]]
    check(len(rows) == len(arms) and not bad,
          "conformance: the server still gives the file's hashes",
          "%d differ, first %s" % (len(bad), [doc["hashes"][i]["key"] for i in bad[:2]]))

    # filters: bytes and text parse to the same filter; every probe agrees
    for f in doc["filters"]:
        check_filter_entry(f, "conformance filter '%s'" % f["name"], ref.parse, ref.parse_text,
                           types)

    for m in doc["malformed_bytes"]:
        check(rejects(ref.parse, base64.b64decode(m["bytes"])),
              "conformance malformed bytes '%s' rejected by reference.py" % m["name"])
    for m in doc["malformed_text"]:
        check(rejects(ref.parse_text, m["text"]),
              "conformance malformed text '%s' rejected by reference.py" % m["name"])
    for m in doc["nonportable_filters"]:
        pf = ref.parse(base64.b64decode(m["bytes"]))
        check(pf.nonportable, "conformance '%s' is non-portable" % m["name"])
    check_conformance_windows(doc, types)
    check_conformance_growing(doc, types)
    check_conformance_unions(doc, types)


def rejects(parse, data):
    """Does parse(data) refuse data (ValueError)?"""
    try:
        parse(data)
    except ValueError:
        return True
    return False


def check_conformance_windows(doc, types):
    """The windows of the conformance file: window_reference.py reads their
    bytes and prints their text form, answers every probe at its time as
    the file says, and rejects every malformed window; the server still
    gives the answers."""
    import base64
    import window_reference as wref
    psql("CREATE OR REPLACE FUNCTION conf_sqlstate(q text) RETURNS text LANGUAGE plpgsql AS "
         "$$ BEGIN EXECUTE q; RETURN NULL; EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;")
    for w in doc.get("windows", []):
        lbl = "conformance window '%s'" % w["name"]
        raw = base64.b64decode(w["bytes"])
        try:
            pw = wref.parse(raw)
        except ValueError as e:
            check(False, lbl + ": parse", str(e))
            continue
        check(pw.to_text() == w["text"], lbl + ": reference prints the text form")
        bad = []
        for p in w["probes"]:
            fam, v = key_value(p["key"], types)
            got = pw.contains_value(v, fam, int(p["at"]))
            if got != p["expect"]:
                bad.append((p["key"], p["at"], p["expect"], got))
        check(not bad, lbl + ": %d probes" % len(w["probes"]),
              "%d differ, first %s" % (len(bad), bad[:2]))
        wl = "'\\x%s'::bytea::bloomwindow" % raw.hex()
        arms = ["SELECT %d, bf_window_contains(%s, %s, timestamptz '2000-01-01 00:00:00+00' "
                "+ %s * interval '1 microsecond')::int" % (n, wl, sql_key(p["key"]), p["at"])
                for n, p in enumerate(w["probes"])]
        got = dict((int(n), a) for n, a in q("\nUNION ALL\n".join(arms) + ";")) if arms else {}
        diff = [i for i, p in enumerate(w["probes"]) if got.get(i) != ("1" if p["expect"] else "0")]
        check(not diff, lbl + ": the server still gives the probes' answers",
              "%d differ, first %s" % (len(diff), [w["probes"][i] for i in diff[:2]]))
    for m in doc.get("malformed_windows", []):
        check(rejects(wref.parse, base64.b64decode(m["bytes"])),
              "conformance malformed window '%s' rejected by window_reference.py" % m["name"])
        (st,), = q("SELECT conf_sqlstate('SELECT ''\\x%s''::bytea::bloomwindow');"
                   % base64.b64decode(m["bytes"]).hex())
        check(st == m["sqlstate"], "conformance malformed window '%s': the server rejects it with %s"
              % (m["name"], m["sqlstate"]), "got %s" % st)


def check_layered(doc, types, section, what, form, layout):
    """The entries of a section of layered values (growing filters or
    unions): grow_reference.py reads them as the plain ones
    (check_filter_entry), as values of its class form, and finds their
    layers; the server's bf_info names their layout; it and the server
    reject every malformed one (section malformed_<section>)."""
    import base64
    import grow_reference as gref
    for f in doc.get(section, []):
        lbl = "conformance %s '%s'" % (what, f["name"])
        check_filter_entry(f, lbl, gref.parse, gref.parse_text, types)
        g = gref.parse(base64.b64decode(f["bytes"]))
        check(type(g) is form and len(g.layers) == f["layers"], lbl + ": %d layers" % f["layers"],
              "reference reads a %s of %d" % (type(g).__name__, len(g.layers)))
        (lay,), = q("SELECT (bf_info('\\x%s'::bytea::bloomfilter)).layout;"
                    % base64.b64decode(f["bytes"]).hex())
        check(lay == layout, lbl + ": bf_info's layout is %s" % layout, "got %s" % lay)
    for m in doc.get("malformed_" + section, []):
        check(rejects(gref.parse, base64.b64decode(m["bytes"])),
              "conformance malformed %s '%s' rejected by grow_reference.py" % (what, m["name"]))
        (st,), = q("SELECT conf_sqlstate('SELECT ''\\x%s''::bytea::bloomfilter');"
                   % base64.b64decode(m["bytes"]).hex())
        check(st == m["sqlstate"], "conformance malformed %s '%s': the server rejects it with %s"
              % (what, m["name"], m["sqlstate"]), "got %s" % st)


def check_conformance_growing(doc, types):
    """The growing filters of the conformance file (check_layered); the
    first is rebuilt from its keys with the sizing of §4 to the same bytes."""
    import base64
    import grow_reference as gref
    check_layered(doc, types, "growing", "growing filter", gref.Growing, "growing")
    # §9.2: the first entry is 1..1000 (int8) added to bf_create_growing(20, 0.01, 2, 11)
    first = doc.get("growing", [None])[0]
    if first is not None and first["name"].startswith("int8 keys, capacity 20, growth 2"):
        h0 = gref.parse(base64.b64decode(first["bytes"]))
        t0 = gref.layer_target(20, 0.01, 0.9, 2, 0)
        layer0 = ref.Filter.empty(*ref.estimate(*t0), 11, *t0)
        layer0.family = ref.FAMILIES["integer"]
        g = gref.Growing(20, 0.01, 0.9, 2, [layer0])
        for v in range(1, 1001):
            g.add(ref.hash_value(v, "integer", 11), ref.estimate)
        check(g.to_bytes() == h0.to_bytes(),
              "conformance growing filter '%s': grow_reference.py's adds give the server's bytes"
              % first["name"])


def check_conformance_unions(doc, types):
    """The unions of the conformance file (§10, check_layered): read-only,
    grow_reference.py refuses to add to them and the server does too
    (0A000)."""
    import base64
    import grow_reference as gref
    check_layered(doc, types, "unions", "union", gref.Union, "union")
    for f in doc.get("unions", []):
        lbl = "conformance union '%s'" % f["name"]
        raw = base64.b64decode(f["bytes"])
        u = gref.parse(raw)
        check(rejects(lambda h: u.add(h, ref.estimate), 1), lbl + ": grow_reference.py refuses an add")
        (st,), = q("SELECT conf_sqlstate('SELECT bf_add(''\\x%s''::bytea::bloomfilter, 1)');" % raw.hex())
        check(st == "0A000", lbl + ": the server refuses bf_add (0A000)", "got %s" % st)


def pf_fpr(pf):
    """FORMAT.md §6.2: the false-positive rate of the bits; of a growing
    filter or a union (§9.5, §10.5), that of any of its layers answering."""
    if hasattr(pf, "layers"):
        total = 0.0
        for layer in pf.layers:
            f = pf_fpr(layer)
            total = total + f - total * f
        return total
    total = 0.0
    for b in range(pf.nblocks):
        c = sum(bin(x).count("1") for x in pf.bits[64 * b:64 * b + 64])
        total += (c / 512.0) ** pf.k
    return total / pf.nblocks


# ---------------------------------------------------------------------------

def main():
    setup()
    sections = [check_hashes, check_filters, check_corruptions, check_conformance]
    for s in sections:
        t0 = time.time()
        try:
            s()
            if os.environ.get("REF_TIMING"):
                print("# %s: %.1fs" % (s.__name__, time.time() - t0))
        except Exception as e:          # a broken section is one failed check
            import traceback
            traceback.print_exc()
            check(False, s.__name__, "crashed: %s" % e)
    try:
        psql("DROP DATABASE IF EXISTS %s;" % DB, db="postgres")
    except Exception:
        pass
    print("reference: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
