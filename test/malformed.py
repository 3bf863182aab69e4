#!/usr/bin/env python3
"""Malformed bloomfilter values through every input path.

Mutates valid filters of every family (bit flips, byte changes,
truncation, extension, header fields set to edge values, edits of the
text form) and feeds them through the bytea cast, text input and the
binary input function (bloomfilter_recv: each value as a binary parameter,
and those accepted through binary COPY); every value accepted then goes
through every function of the type.  Fails on any internal error (SQLSTATE class XX), a
lost connection (a crash), or an accepted value that does not round-trip
through text and bytea.

Needs psycopg 3 and the libpq environment of a scratch database
(test/suites/35-malformed.sh runs it under pg_virtualenv).
Usage: malformed.py [N]   (N mutants in all, default 20 000)
"""
import random
import struct
import sys

import psycopg
from psycopg import pq

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
rng = random.Random(20261123)

SEEDS = """
SELECT f::bytea, f::text FROM (VALUES
  (bf_create(10)),
  (bf_add_all(bf_create(50), ARRAY[1, 2, 3])),
  (bf_add(bf_create(50), 1.5::float8)),
  (bf_add(bf_create(50), 1.5::numeric)),
  (bf_add(bf_create(50, 0.001), 'abc'::text)),
  (bf_add(bf_create(50), '\\x00ff'::bytea)),
  (bf_add(bf_create(50), '00000000-0000-0000-0000-000000000001'::uuid)),
  (bf_add(bf_create(50), true)),
  (bf_add(bf_create(50), '2024-01-01'::date)),
  (bf_add(bf_create(50), '2024-01-01 00:00'::timestamp)),
  (bf_add(bf_create(50), '2024-01-01 00:00+00'::timestamptz)),
  (bf_add(bf_create(50), ROW(1, 'x'::text))),
  (bf_add(bf_create(50), '10.0.0.1'::inet)),
  (bf_add(bf_create(50), '12:00'::time)),
  (bf_add(bf_create(50), ARRAY[1.5]::float8[])),
  (bf_add(bf_create_sized(512, 3, 7), 42::int8)),
  (bf_create_growing(5)),
  (bf_add_all(bf_create_growing(3, 0.01, 2, 5), ARRAY[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])),
  (bf_add_all(bf_create_growing(2, 0.05, 3), ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'g']))
) v(f)
"""

# Every function of the type, on an accepted value $1, results printed
# (their output functions run too).  They run in one
# round trip (mal_calls below) but each in a subtransaction of its own: an
# error in one must not hide the others.  Errors of a class other than XX
# (a family mismatch, say) are answers, not findings.
CALLS = [
    "SELECT bf_info($1)::text",
    "SELECT array_agg(l::text) FROM bf_layers($1) l",
    "SELECT $1::text",
    "SELECT $1::bytea",
    "SELECT bf_cardinality($1)",
    "SELECT bf_fpr($1)",
    "SELECT bf_contains($1, 1)",
    "SELECT bf_contains($1, 'a'::text)",
    "SELECT bf_contains($1, '10.0.0.1'::inet)",
    "SELECT bf_contains_all($1, ARRAY[1, 2])",
    "SELECT bf_contains_any($1, ARRAY['a', 'b'])",
    "SELECT bf_add($1, 7)::text",
    "SELECT bf_add_all($1, ARRAY['x', 'y'])::text",
    "SELECT bf_clear($1)::text",
    "SELECT ($1 | $1)::text",
    "SELECT ($1 & $1)::text",
    "SELECT $1 = $1",
    "SELECT bf_union_agg(f)::text, bf_intersect_agg(f)::text FROM (VALUES ($1), ($1)) v(f)",
]

# runs CALLS on one value and returns the SQLSTATE and message of each
# call that failed, with its number
MAL_CALLS = """
CREATE FUNCTION pg_temp.mal_calls(f bloomfilter, calls text[])
RETURNS TABLE (n int, state text, msg text) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1 .. cardinality(calls) LOOP
        BEGIN
            EXECUTE calls[i] USING f;
        EXCEPTION WHEN OTHERS THEN
            n := i; state := SQLSTATE; msg := SQLERRM;
            RETURN NEXT;
        END;
    END LOOP;
END $$
"""

# the bytea cast and the text input of a batch of mutants, each in a
# subtransaction of its own: the value read back as text, or the error
MAL_INPUT = """
CREATE FUNCTION pg_temp.mal_input(bs bytea[], ts text[])
RETURNS TABLE (via text, i int, value text, state text, msg text) LANGUAGE plpgsql AS $$
DECLARE
    b bytea;
    t text;
BEGIN
    FOR via, i, b, t IN
        SELECT 'bytea', o, x, NULL FROM unnest(bs) WITH ORDINALITY AS u(x, o)
        UNION ALL
        SELECT 'text', o, NULL, x FROM unnest(ts) WITH ORDINALITY AS u(x, o)
    LOOP
        value := NULL; state := NULL; msg := NULL;
        BEGIN
            value := CASE WHEN via = 'bytea' THEN b::bloomfilter ELSE t::bloomfilter END::text;
        EXCEPTION WHEN OTHERS THEN
            state := SQLSTATE; msg := SQLERRM;
        END;
        RETURN NEXT;
    END LOOP;
END $$
"""
BATCH = 200

stats = {"mutants": 0, "accepted": 0, "statements": 0}
findings = []


def failed(conn, e, where):
    """An error: a finding if internal (class XX) or if the server is gone."""
    state = e.sqlstate or ""
    if conn.closed or conn.broken or not state:
        findings.append(f"connection lost: {where}")
        raise SystemExit(report())
    if state.startswith("XX"):
        findings.append(f"{state} {e}: {where}")


def run(conn, sql, params=(), what=""):
    """Run one statement; return (ok, rows)."""
    stats["statements"] += 1
    try:
        return True, conn.execute(sql, params).fetchall()
    except psycopg.errors.Error as e:
        failed(conn, e, f"({what}) {sql} {params!r:.200}")
        return False, None


def copy_binary(conn, rows):
    """Rows through binary COPY, i.e. bloomfilter_recv; True if accepted."""
    stream = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
    for data in rows:
        stream += struct.pack("!hi", 1, len(data)) + data
    stream += struct.pack("!h", -1)
    stats["statements"] += 1
    try:
        with conn.cursor().copy("COPY mal (f) FROM STDIN (FORMAT binary)") as cp:
            cp.write(stream)
        return True
    except psycopg.errors.Error as e:
        failed(conn, e, f"(binary COPY) {rows[0][:64].hex() if rows else ''}")
        return False


def recv_each(conn, oid, datas):
    """bloomfilter_recv on each value (a parameter in binary format), in one
    pipeline of one statement and sync each: per value None if accepted,
    else (SQLSTATE, message)."""
    pg = conn.pgconn
    out = []
    blocking = pg.nonblocking
    pg.nonblocking = 0
    pg.enter_pipeline_mode()
    try:
        for d in datas:
            pg.send_query_params(b"SELECT $1 IS NOT NULL", [d], param_types=[oid],
                                 param_formats=[1])
            pg.pipeline_sync()
        status = None
        while len(out) < len(datas):
            res = pg.get_result()
            if res is None:
                if pg.status != pq.ConnStatus.OK:
                    break               # the server is gone (reported below)
                continue
            if res.status == pq.ExecStatus.PIPELINE_SYNC:
                out.append(status)
                status = None
            elif res.status == pq.ExecStatus.FATAL_ERROR:
                status = ((res.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode(),
                          (res.error_message or b"").decode("utf-8", "replace").strip())
    finally:
        if pg.status == pq.ConnStatus.OK:
            pg.exit_pipeline_mode()
            pg.nonblocking = blocking
    if pg.status != pq.ConnStatus.OK or len(out) < len(datas):
        findings.append("connection lost: binary input")
        raise SystemExit(report())
    stats["statements"] += len(datas)
    return out


def mutate_bytes(b):
    b = bytearray(b)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(6)
        if op == 0 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 2:
            del b[rng.randrange(len(b) + 1):]
        elif op == 3:
            b += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        else:
            # a header field (64 bytes: see docs/FORMAT.md) set to an edge value
            off, fmt = rng.choice([(4, "<H"), (6, "<B"), (7, "<B"), (8, "<B"), (9, "<B"),
                                   (10, "<H"), (12, "<I"), (16, "<q"), (24, "<Q"),
                                   (32, "<Q"), (40, "<q"), (48, "<d"), (56, "<Q")])
            size = struct.calcsize(fmt)
            if fmt == "<d":
                val = rng.choice([0.0, -0.01, 1.0, 5e-324, 2.2250738585072014e-308,
                                  float("nan"), float("inf"), 1e-300, 0.5])
            else:
                val = rng.choice([0, 1, 2, 255, 2**(8 * size - 1) - 1, 2**(8 * size - 1),
                                  2**(8 * size) - 1, rng.randrange(2**(8 * size))])
                if fmt[1].islower() and val >= 2**(8 * size - 1):
                    val -= 2**(8 * size)
            if len(b) >= off + size:
                b[off:off + size] = struct.pack(fmt, val)
    return bytes(b)


TEXT_EDITS = ["00", "0", "-1", "+1", "1e3", "18446744073709551615", "9223372036854775808",
              "5e-324", "nan", "inf", " ", ",", "(", ")", "=", "other(", "record(integer,)",
              "integer", "text", "bytea", "none", "time without time zone", "\"", "=="]


def mutate_text(t):
    s = t
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(5)
        i = rng.randrange(len(s) + 1)
        if op == 0:
            s = s[:i] + rng.choice(TEXT_EDITS) + s[i:]
        elif op == 1 and s:
            s = s[:i] + s[i + rng.randint(1, 8):]
        elif op == 2:
            # a field's value replaced
            fields = [k for k in ("family=", "nhashes=", "nbits=", "seed=", "capacity=",
                                  "fpr=", "inserted=", "bits=", "ratio=", "growth=",
                                  "layer=") if k in s]
            if fields:
                k = rng.choice(fields)
                a = s.index(k) + len(k)
                e = s.find(" ", a)
                e = len(s) if e < 0 or k == "bits=" and rng.random() < 0.5 else e
                s = s[:a] + rng.choice(TEXT_EDITS) + s[e:]
        elif op == 3:
            s = s[:i]
        else:
            s = s + rng.choice(["A", "AAAA", "=", " x=1", "\x01"])
    return s.replace("\x00", "")


def check_accepted(conn, shown):
    """Every function on an accepted value; the value round-trips."""
    stats["accepted"] += 1
    ok, rows = run(conn, "SELECT %(f)s::bloomfilter::text::bloomfilter::bytea = %(f)s::bloomfilter::bytea,"
                         " %(f)s::bloomfilter::bytea::bloomfilter::text = %(f)s::bloomfilter::text",
                   {"f": shown}, "round trip")
    if ok and rows != [(True, True)]:
        findings.append(f"no round trip: {shown[:200]!r}")
    ok, rows = run(conn, "SELECT * FROM pg_temp.mal_calls(%s::bloomfilter, %s)", (shown, CALLS),
                   "functions")
    for n, state, msg in rows or []:
        stats["statements"] += 1
        if state.startswith("XX"):
            findings.append(f"{state} {msg}: {CALLS[n - 1]} on {shown[:200]!r}")
    stats["statements"] += len(CALLS) - len(rows or [])


def report():
    print(f"malformed: {stats['mutants']} mutants, {stats['accepted']} accepted, "
          f"{stats['statements']} statements, {len(findings)} findings")
    for f in findings[:20]:
        print("  " + f)
    return 1 if findings else 0


def main():
    # text as str even in a SQL_ASCII database (psycopg gives bytes there)
    conn = psycopg.connect(autocommit=True, client_encoding="UTF8")
    conn.execute("SET client_min_messages = warning")
    conn.execute("CREATE EXTENSION IF NOT EXISTS bloomfilter")
    conn.execute("DROP TABLE IF EXISTS mal")
    conn.execute("CREATE TABLE mal (f bloomfilter)")
    conn.execute(MAL_CALLS)
    conn.execute(MAL_INPUT)
    oid = conn.execute("SELECT 'bloomfilter'::regtype::oid").fetchone()[0]
    seeds = conn.execute(SEEDS).fetchall()
    raw = [bytes(r[0]) for r in seeds]
    txt = [r[1] for r in seeds]
    for start in range(0, N, BATCH):
        bs, ts = [], []
        for i in range(start, min(N, start + BATCH)):
            stats["mutants"] += 1
            if i % 2 == 0:
                bs.append(mutate_bytes(rng.choice(raw)))
            else:
                ts.append(mutate_text(rng.choice(txt)))
        stats["statements"] += len(bs) + len(ts) - 1
        ok, rows = run(conn, "SELECT * FROM pg_temp.mal_input(%s, %s)", (bs, ts), "inputs")
        # the same bytes through the binary input function, one by one, and
        # those accepted through binary COPY together
        recv = recv_each(conn, oid, bs)
        for data, r in zip(bs, recv):
            if r is not None and r[0].startswith("XX"):
                findings.append(f"{r[0]} {r[1]}: binary input of {data[:64].hex()}")
        accepted = [d for d, r in zip(bs, recv) if r is None]
        if accepted and not copy_binary(conn, accepted):
            findings.append("binary COPY refused values the binary input accepts")
        for via, i, value, state, msg in rows or []:
            if state is not None and state.startswith("XX"):
                shown = bs[i - 1][:64].hex() if via == "bytea" else repr(ts[i - 1][:200])
                findings.append(f"{state} {msg}: {via} input of {shown}")
            if via == "bytea":
                if (state is None) != (recv[i - 1] is None):
                    findings.append(f"bytea cast and recv disagree ({state is None}, "
                                    f"{recv[i - 1] is None}): {bs[i - 1][:64].hex()}")
            elif state is None and value != ts[i - 1]:
                findings.append(f"accepted text is not canonical: {ts[i - 1][:200]!r}")
            if state is None:
                check_accepted(conn, value)
    conn.execute("DROP TABLE mal")
    return report()


if __name__ == "__main__":
    sys.exit(main())
