#!/usr/bin/python3
"""Generate test/conformance/conformance.json from a running server.

    pg_virtualenv python3 test/conformance/generate.py [OUTPUT]

The file is what every client (clients/*) and test/reference.py are
checked against: every answer in it comes from the extension (bf_hash,
bf_contains, the filter's bytes and text form, the SQLSTATE of a rejected
value), never from a reader.  test/conformance/README.md describes the
layout.

Keys are written as the server prints them ({"type": typname, "value":
output text}); a client maps the type name to its native value, so the
file also checks each client's reading of PostgreSQL's text output.  The
session runs with TimeZone UTC and DateStyle ISO in a UTF8 database, so
the output does not depend on the machine.  The generator is
deterministic: run twice on the same server it writes the same file.

Needs psycopg 3 (Debian python3-psycopg).
"""

import base64
import json
import os
import struct
import sys

import psycopg
from psycopg import pq
from psycopg.adapt import Dumper

DB = "bf_conformance"
SEEDS = [0, 1, -1, (1 << 62) + 7, -(1 << 63)]
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "conformance.json")


def lit_seed(s):
    return "(%d)::bigint" % s


# ---------------------------------------------------------------------------
# the values of every portable family, as SQL expressions

def scalar_values():
    V = []
    for t, lo, hi in (("int2", -32768, 32767), ("int4", -2**31, 2**31 - 1),
                      ("int8", -2**63, 2**63 - 1)):
        for v in (0, 1, -1, 42, lo, hi, lo + 1, hi - 1):
            V.append("(%d)::%s" % (v, t))
    floats = ["0", "-0", "1.5", "-2.25", "0.1", "1e30", "-1e-30", "NaN",
              "Infinity", "-Infinity", "3.4028235e38", "1.4e-45", "1e-40",
              "16777217", "2.5e-8"]
    for s in floats:
        V.append("'%s'::float4" % s)
    for s in floats + ["1.7976931348623157e308", "5e-324",
                       "-2.2250738585072014e-308", "2.2250738585072014e-308",
                       "0.30000000000000004", "9007199254740993", "-1e300"]:
        V.append("'%s'::float8" % s)
    for s in ("1.0", "1.00", "1", "-2.50", "0.000", "-0.000", "NaN", "Infinity",
              "-Infinity", "0.5", "-0.0010", "100", "100.00", "1e100", "1e-30",
              "123456789012345678901234567890.123456789000", "12.3400e5",
              "0.1", "-7", "-0.5", "1000000", "0.00000000000000000001"):
        V.append("'%s'::numeric" % s)
    V.append("(10::numeric / 4)")
    V.append("(1::numeric / 3)")
    V.append("(repeat('9', 1000) || '.' || repeat('0', 30))::numeric")
    V.append("('-' || repeat('1', 500) || 'e-600')::numeric")
    for s in ("", "a", "abc", "ab  ", "  lead", "héllo wörld", "日本語テキスト",
              "emoji 😀🎉", "tab\there", "line1\nline2", "quote ' and \\ backslash",
              "ß", "\u00e9", "e\u0301"):
        V.append("E'%s'::text" % s.replace("\\", "\\\\").replace("'", "''")
                 .replace("\t", "\\t").replace("\n", "\\n"))
    V.append("repeat('x', 300)::text")
    V += ["'x y '::varchar", "'ab'::varchar(10)", "''::varchar",
          "'a_name'::name", "'ñame'::name",
          "'ab  '::char(5)", "'ab'::char(5)", "'  a'::char(3)", "'   '::char(3)",
          "'é  '::bpchar", "'x'::char", "'  '::bpchar"]
    for h in ("", "00", "00ff10", "deadbeef", "".join("%02x" % i for i in range(256))):
        V.append("'\\x%s'::bytea" % h)
    V += ["'00000000-0000-0000-0000-000000000000'::uuid",
          "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
          "'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'::uuid"]
    V += ["true", "false"]
    for s in ("2000-01-01", "1999-12-31", "2024-02-29", "1970-01-01",
              "0001-01-01", "9999-12-31", "infinity", "-infinity",
              "4714-11-24 BC", "0001-12-31 BC", "0044-03-15 BC", "5874897-12-31",
              "1900-02-28", "2100-03-01"):
        V.append("'%s'::date" % s)
    for s in ("2000-01-01 00:00:00", "1999-12-31 23:59:59.999999",
              "2024-02-29 12:34:56.789012", "1970-01-01", "0001-01-01 00:00:01",
              "infinity", "-infinity", "4714-11-24 00:00:00 BC",
              "0001-12-31 23:59:59.5 BC", "294276-12-31 23:59:59.999999",
              "2000-01-01 00:00:00.000001", "1999-12-31 23:59:59.999999"):
        V.append("'%s'::timestamp" % s)
    for s in ("2000-01-01 00:00:00+00", "2000-01-01 00:00:00+02",
              "2021-03-04 05:06:07.123456+05:30", "1969-07-20 20:17:40-04",
              "infinity", "-infinity", "4714-11-24 00:00:00+00 BC",
              "294276-12-31 23:59:59.999999+00", "1900-01-01 00:00:00+00:19:32"):
        V.append("'%s'::timestamptz" % s)
    for s in ("sad", "ok", "happy", "ünïcødé ☃", ""):
        V.append("'%s'::conf_mood" % s)
    return V


# Composite keys: each a list of field expressions (NULL fields typed).
RECORDS = [
    ["(1)::int8", "'color'::text"],               # user x attribute
    ["(42)::int4", "'size'::text"],
    ["NULL::int8", "'x'::text"],
    ["(7)::int8", "NULL::text"],
    ["NULL::int4", "NULL::text"],
    ["''::text"],
    ["(1)::int8", "(2.50)::numeric", "true", "NULL::text"],
    ["'ab  '::char(4)", "'\\x01ff'::bytea", "'NaN'::float4"],
    ["'-0'::float8", "'ok'::conf_mood", "'2000-01-02'::date",
     "'2000-01-01 00:00:01'::timestamp", "'2000-01-01 00:00:00+01'::timestamptz",
     "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "(-3)::int2", "'z'::name"],
    ["repeat('é', 300)"],
    ["'infinity'::date", "'-infinity'::timestamptz"],
    ["(-9223372036854775808)::int8", "'9223372036854775807'::int8"],
]


def row_expr(fields):
    return "ROW(%s)" % ", ".join(fields)


# ---------------------------------------------------------------------------
# filters: (name, constructor, members query, [probe queries], record?)
#
# A query yields columns c0, c1, ...; the key is c0 or ROW(c0, c1, ...).
# Members are added in the query's order (that order fixes `inserted`).

def gs(expr, lo, hi, step=1):
    return "SELECT %s AS c0 FROM generate_series(%d, %d, %d) g" % (expr, lo, hi, step)


def lst(*exprs):
    """One query per key: a UNION would convert every key to one type."""
    return ["SELECT %s AS c0" % e for e in exprs]


def gs_rec(exprs, lo, hi, step=1):
    cols = ", ".join("%s AS c%d" % (e, i) for i, e in enumerate(exprs))
    return "SELECT %s FROM generate_series(%d, %d, %d) g" % (cols, lo, hi, step)


def lst_rec(*rows):
    return ["SELECT " + ", ".join("%s AS c%d" % (e, i) for i, e in enumerate(r))
            for r in rows]


def union(*queries):
    """One query of keys of the same types."""
    return " UNION ALL ".join(q for x in queries for q in ([x] if isinstance(x, str) else x))


def flat(queries):
    return [q for x in queries for q in ([x] if isinstance(x, str) else x)]


ATTRS = "(ARRAY['color','size','lang','plan','région'])[1 + mod(g, 5)]"
ATTRS_ABSENT = "(ARRAY['colour','Size','lang ','','région2'])[1 + mod(g, 5)]"


def filters():
    F = []
    F.append(("int8 10000 at 1% seed 0", "bf_create(10000, 0.01, 0)",
              gs("g::int8", 1, 10000),
              [gs("g::int8", 1, 10000, 17), gs("g::int8", 10001, 11000),
               gs("g::int4", 1, 300, 7), gs("g::int2", -40, 40, 3),
               gs("(g * 1000003)::int8", -300, 300, 5),
               lst("(-9223372036854775808)::int8", "(9223372036854775807)::int8",
                   "(-2147483648)::int4", "(32767)::int2")], False))
    F.append(("int8 10000 at 1% seed -1", "bf_create(10000, 0.01, -1)",
              gs("g::int8", 1, 10000),
              [gs("g::int8", 1, 10000, 29), gs("g::int8", 10001, 10700)], False))
    F.append(("int4 one block k=1 seed -2^63",
              "bf_create_sized(512, 1, %s)" % lit_seed(-(1 << 63)),
              gs("g::int4", 1, 20), [gs("g::int4", -20, 120)], False))
    F.append(("int2 one block k=64 saturated",
              "bf_create_sized(512, 64, %s)" % lit_seed((1 << 62) + 7),
              gs("g::int2", -50, 50), [gs("g::int2", -300, 300, 3)], False))
    F.append(("int8 1031 blocks k=3 sparse seed 11", "bf_create_sized(512 * 1031, 3, 11)",
              gs("(g * 7919)::int8", 1, 3000),
              [gs("(g * 7919)::int8", 1, 3000, 11), gs("(g * 7919 + 1)::int8", 1, 600)], False))
    F.append(("text 5000 at 2% seed 2^62+7", "bf_create(5000, 0.02, %s)" % lit_seed((1 << 62) + 7),
              gs("'k' || g", 1, 5000),
              [gs("'k' || g", 1, 5000, 13), gs("'k' || g", 5001, 5800),
               gs("('k' || g)::varchar", 1, 60, 3), gs("('k' || g)::name", 1, 60, 5),
               gs("('k' || g)::char(8)", 1, 60, 7), gs("('k' || g || '  ')::bpchar", 1, 30, 3),
               gs("('k' || g || ' ')::text", 1, 30, 3), gs("('K' || g)", 1, 30, 3)], False))
    F.append(("text non-ASCII sized k=4 seed -2^63",
              "bf_create_sized(50000, 4, %s)" % lit_seed(-(1 << 63)),
              "SELECT 'é☃' || g AS c0 FROM generate_series(1, 3000) g "
              "UNION ALL SELECT E'😀\\t' || g FROM generate_series(1, 100) g "
              "UNION ALL SELECT ''",
              [gs("'é☃' || g", 1, 3000, 11), gs("'é☃' || g", 3001, 3400),
               gs("E'😀\\t' || g", 1, 120), gs("'e☃' || g", 1, 40),
               lst("''::text", "' '::text", "''::varchar", "'  '::char(2)")], False))
    F.append(("numeric 3000 at 0.1% seed 1", "bf_create(3000, 0.001, 1)",
              "SELECT g::numeric / 100 AS c0 FROM generate_series(1, 3000) g "
              "UNION ALL SELECT x::numeric FROM unnest(ARRAY['NaN','Infinity','-Infinity',"
              "'1e100','-0.000','123456789012345678901234567890.1234567890']) x",
              [gs("g::numeric / 100", 1, 3000, 9), gs("g::numeric / 100", 3001, 3600),
               gs("(g * 10)::numeric / 1000", 1, 300, 7),
               gs("round(g::numeric / 100, 2)", 1, 200, 3),
               gs("round(g::numeric / 100, 5)", 1, 200, 3),
               gs("(-g)::numeric / 100", 1, 100, 3),
               gs("g::numeric", 1, 60),
               lst("'NaN'::numeric", "'Infinity'::numeric", "'-Infinity'::numeric",
                   "'1e100'::numeric", "'1e101'::numeric", "'0'::numeric", "'-0.0'::numeric",
                   "'123456789012345678901234567890.12345678900000'::numeric",
                   "'0.01'::numeric", "'0.010'::numeric", "'1.5'::numeric")], False))
    F.append(("float8 3000 at 1% seed 5", "bf_create(3000, 0.01, 5)",
              "SELECT g::float8 / 4 AS c0 FROM generate_series(-1500, 1500) g "
              "UNION ALL SELECT x::float8 FROM unnest(ARRAY['NaN','Infinity','-Infinity',"
              "'5e-324','1e-310','1.7976931348623157e308','0.1']) x",
              [gs("g::float8 / 4", -1500, 1500, 7), gs("g::float8 / 4 + 0.125", -300, 300, 3),
               gs("g::float4 / 4", -400, 400, 5), gs("g::float8 / 3", 1, 200, 3),
               lst("'-0'::float8", "'-0'::float4", "'0'::float4", "'NaN'::float8",
                   "'NaN'::float4", "'-NaN'::float8", "'Infinity'::float4",
                   "'-Infinity'::float8", "'5e-324'::float8", "'1e-310'::float8",
                   "'1e-45'::float4", "'0.1'::float8", "'0.1'::float4",
                   "'1.7976931348623157e308'::float8", "'3.4028235e38'::float4")], False))
    F.append(("bytea 2000 at 1% seed 6", "bf_create(2000, 0.01, 6)",
              "SELECT decode(md5(g::text), 'hex') AS c0 FROM generate_series(1, 2000) g "
              "UNION ALL SELECT '\\x'::bytea UNION ALL SELECT '\\x00'::bytea",
              [gs("decode(md5(g::text), 'hex')", 1, 2000, 9),
               gs("decode(md5(g::text), 'hex')", 2001, 2400),
               gs("substring(decode(md5(g::text), 'hex') from 1 for 15)", 1, 40),
               lst("'\\x'::bytea", "'\\x00'::bytea", "'\\x0000'::bytea")], False))
    F.append(("uuid 3000 at 5% seed 7", "bf_create(3000, 0.05, 7)",
              gs("md5('u' || g)::uuid", 1, 3000),
              [gs("md5('u' || g)::uuid", 1, 3000, 11), gs("md5('u' || g)::uuid", 3001, 3400),
               lst("'00000000-0000-0000-0000-000000000000'::uuid")], False))
    F.append(("bool true only", "bf_create(10, 0.01, 0)", lst("true"),
              [lst("true", "false")], False))
    F.append(("bool both seed -1", "bf_create_sized(512, 2, -1)", lst("false", "true"),
              [lst("true", "false")], False))
    F.append(("date 2000 at 1% seed 8", "bf_create(2000, 0.01, 8)",
              "SELECT '1999-06-01'::date + g AS c0 FROM generate_series(1, 2000) g "
              "UNION ALL SELECT x::date FROM unnest(ARRAY['infinity','-infinity',"
              "'4714-11-24 BC','0001-12-31 BC','5874897-12-31']) x",
              [gs("'1999-06-01'::date + g", 1, 2000, 7), gs("'1999-06-01'::date + g", 2001, 2400),
               gs("'1999-06-01'::date - g", 0, 200, 3),
               lst("'infinity'::date", "'-infinity'::date", "'4714-11-24 BC'::date",
                   "'4714-11-25 BC'::date", "'0001-12-31 BC'::date", "'0001-01-01'::date",
                   "'5874897-12-31'::date")], False))
    F.append(("timestamp 2000 at 1% seed 9", "bf_create(2000, 0.01, 9)",
              "SELECT '1999-12-31 23:00:00'::timestamp + g * interval '1000003 microseconds' AS c0 "
              "FROM generate_series(1, 2000) g "
              "UNION ALL SELECT x::timestamp FROM unnest(ARRAY['infinity','-infinity',"
              "'4714-11-24 00:00:00 BC','294276-12-31 23:59:59.999999']) x",
              [gs("'1999-12-31 23:00:00'::timestamp + g * interval '1000003 microseconds'", 1, 2000, 7),
               gs("'1999-12-31 23:00:00'::timestamp + g * interval '1000003 microseconds'", 2001, 2400),
               gs("'1999-12-31 23:00:00'::timestamp + g * interval '1 second'", 1, 200, 3),
               lst("'infinity'::timestamp", "'-infinity'::timestamp",
                   "'4714-11-24 00:00:00 BC'::timestamp", "'294276-12-31 23:59:59.999999'::timestamp",
                   "'294276-12-31 23:59:59.999998'::timestamp")], False))
    F.append(("timestamptz 2000 at 1% seed 3", "bf_create(2000, 0.01, 3)",
              "SELECT '2020-01-01 00:00:00+00'::timestamptz + g * interval '1000003 microseconds' AS c0 "
              "FROM generate_series(1, 2000) g "
              "UNION ALL SELECT x::timestamptz FROM unnest(ARRAY['infinity','-infinity',"
              "'1900-01-01 00:00:00+00:19:32']) x",
              [gs("'2020-01-01 00:00:00+00'::timestamptz + g * interval '1000003 microseconds'", 1, 2000, 7),
               gs("'2020-01-01 00:00:00+00'::timestamptz + g * interval '1000003 microseconds'", 2001, 2400),
               lst("'infinity'::timestamptz", "'-infinity'::timestamptz",
                   "'1900-01-01 00:00:00+00:19:32'::timestamptz",
                   "'1899-12-31 23:40:28+00'::timestamptz")], False))
    F.append(("enum seed 4", "bf_create(10, 0.01, 4)",
              lst("'sad'::conf_mood", "'ünïcødé ☃'::conf_mood"),
              [lst("'sad'::conf_mood", "'ok'::conf_mood", "'happy'::conf_mood",
                   "'ünïcødé ☃'::conf_mood", "''::conf_mood")], False))
    # the user x attribute case: (user_id, attribute) pairs
    F.append(("record (int8,text) user x attribute 5000 at 1% seed 0",
              "bf_create(5000, 0.01, 0)",
              union(gs_rec(["(g / 5 + 1)::int8", ATTRS], 0, 4999), lst_rec(["NULL::int8", "'x'::text"], ["(7)::int8", "NULL::text"],
                                      ["NULL::int8", "NULL::text"])),
              [gs_rec(["(g / 5 + 1)::int8", ATTRS], 0, 4999, 11),
               gs_rec(["(g / 5 + 1)::int8", ATTRS_ABSENT], 0, 999, 2),
               gs_rec(["(g / 5 + 1001)::int8", ATTRS], 0, 999, 2),
               gs_rec(["(g / 5 + 1)::int4", ATTRS], 0, 200, 3),
               gs_rec(["(g / 5 + 1)::int2", ATTRS + "::varchar"], 0, 200, 7),
               lst_rec(["NULL::int8", "'x'::text"], ["(7)::int8", "NULL::text"],
                       ["NULL::int8", "NULL::text"], ["NULL::int8", "'y'::text"],
                       ["(8)::int8", "NULL::text"], ["(0)::int8", "''::text"])], True))
    F.append(("record (text,uuid,timestamptz) 1000 seed -1",
              "bf_create(1000, 0.01, -1)",
              gs_rec(["'t' || g", "md5(g::text)::uuid",
                      "'2000-01-01 00:00:00+00'::timestamptz + g * interval '1 hour'"], 1, 1000),
              [gs_rec(["'t' || g", "md5(g::text)::uuid",
                       "'2000-01-01 00:00:00+00'::timestamptz + g * interval '1 hour'"], 1, 1400, 3),
               gs_rec(["'t' || g", "md5(g::text)::uuid",
                       "'2000-01-01 00:00:00+00'::timestamptz + g * interval '1 hour 1 second'"], 1, 300, 3)],
              True))
    F.append(("record 8 fields seed 2^62+7", "bf_create(100, 0.01, %s)" % lit_seed((1 << 62) + 7),
              lst_rec(RECORDS[8], ["'0'::float8", "'sad'::conf_mood", "'-infinity'::date",
                                   "'infinity'::timestamp", "NULL::timestamptz", "NULL::uuid",
                                   "(1)::int2", "''::name"]),
              [lst_rec(RECORDS[8],
                       ["'0'::float4", "'ok'::conf_mood", "'2000-01-02'::date",
                        "'2000-01-01 00:00:01'::timestamp", "'2000-01-01 00:00:00+01'::timestamptz",
                        "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid", "(-3)::int8", "'z'::text"],
                       ["'0'::float8", "'sad'::conf_mood", "'-infinity'::date",
                        "'infinity'::timestamp", "NULL::timestamptz", "NULL::uuid",
                        "(1)::int2", "''::name"],
                       ["'0'::float8", "'sad'::conf_mood", "'-infinity'::date",
                        "'infinity'::timestamp", "'infinity'::timestamptz", "NULL::uuid",
                        "(1)::int2", "''::name"])], True))
    F.append(("record (numeric,bool,bytea,char) seed 12", "bf_create(200, 0.01, 12)",
              gs_rec(["g::numeric / 8", "mod(g, 2) = 0", "int4send(g)", "('c' || g)::char(6)"], 1, 200),
              [gs_rec(["g::numeric / 8", "mod(g, 2) = 0", "int4send(g)", "('c' || g)::char(6)"], 1, 260, 3),
               gs_rec(["round(g::numeric / 8, 4)", "mod(g, 2) = 0", "int4send(g)", "('c' || g)::text"], 1, 60, 3),
               gs_rec(["g::numeric / 8", "mod(g, 2) = 1", "int4send(g)", "('c' || g)::char(6)"], 1, 60, 3)],
              True))
    F.append(("record one field (text) seed 0", "bf_create(50, 0.01, 0)",
              gs_rec(["'r' || g"], 1, 50), [gs_rec(["'r' || g"], 1, 80, 2)], True))
    F.append(("empty (family none)", "bf_create(100, 0.01, 0)", None,
              [lst("(1)::int4", "'x'::text", "(0)::int8")], False))
    return F


# filters that need tables: a bloomfilter index and tracked columns
TABLE_FILTERS = [
    ("index on int8 column (bf_index_filter)",
     "CREATE TABLE conf_ix (id int8); "
     "INSERT INTO conf_ix SELECT g * 3 FROM generate_series(1, 3000) g; "
     "CREATE INDEX conf_ix_i ON conf_ix USING bloomfilter (id) WITH (capacity = 3000, fpr = 0.01);",
     "bf_index_filter('conf_ix_i')",
     [gs("(g * 3)::int8", 1, 3000, 7), gs("(g * 3 + 1)::int8", 1, 600), gs("(g * 3)::int4", 1, 90, 3)],
     False),
    ("index on (int8,text) (bf_index_filter)",
     "CREATE TABLE conf_ix2 (u int8, a text); "
     "INSERT INTO conf_ix2 SELECT g / 5 + 1, (ARRAY['color','size','lang','plan','région'])[1 + mod(g, 5)] "
     "FROM generate_series(0, 2999) g; INSERT INTO conf_ix2 VALUES (NULL, 'n'), (5000, NULL); "
     "CREATE INDEX conf_ix2_i ON conf_ix2 USING bloomfilter (u, a) WITH (capacity = 3000, fpr = 0.02);",
     "bf_index_filter('conf_ix2_i')",
     [gs_rec(["(g / 5 + 1)::int8", ATTRS], 0, 2999, 7),
      gs_rec(["(g / 5 + 1)::int8", ATTRS_ABSENT], 0, 999, 2),
      lst_rec(["NULL::int8", "'n'::text"], ["(5000)::int8", "NULL::text"], ["NULL::int8", "NULL::text"])],
     True),
    ("tracked text column, trigger method (bf_tracked_filter)",
     "CREATE TABLE conf_tr (k text); "
     "INSERT INTO conf_tr SELECT 'key-' || g FROM generate_series(1, 2000) g; "
     "SELECT bf_track('conf_tr', 'k', 2000, 0.01, 'trigger');",
     "bf_tracked_filter('conf_tr', 'k')",
     [gs("'key-' || g", 1, 2000, 7), gs("'key-' || g", 2001, 2500)], False),
]


# ---------------------------------------------------------------------------
# server access

class Server:
    def __init__(self):
        admin = psycopg.connect("dbname=postgres", autocommit=True)
        admin.execute("DROP DATABASE IF EXISTS %s" % DB)
        admin.execute("CREATE DATABASE %s ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C' "
                      "TEMPLATE template0" % DB)
        admin.close()
        self.conn = psycopg.connect("dbname=%s" % DB, autocommit=True,
                                    options="-c TimeZone=UTC -c DateStyle=ISO,YMD "
                                            "-c extra_float_digits=1 -c bytea_output=hex "
                                            "-c client_encoding=UTF8")
        self.conn.execute("""
            CREATE EXTENSION bloomfilter;
            CREATE TYPE conf_mood AS ENUM ('sad', 'ok', 'happy', 'ünïcødé ☃', '');
            CREATE TEMP TABLE conf_filters (name text PRIMARY KEY, f bloomfilter);
            CREATE TEMP TABLE conf_windows (w bloomwindow);
            CREATE FUNCTION conf_sqlstate(q text) RETURNS text LANGUAGE plpgsql AS $$
            BEGIN EXECUTE q; RETURN NULL;
            EXCEPTION WHEN OTHERS THEN RETURN SQLSTATE; END $$;
        """)
        self.typnames = {}
        self.bf_oid = self.one("SELECT 'bloomfilter'::regtype::oid")[0]

    def close(self):
        self.conn.close()
        admin = psycopg.connect("dbname=postgres", autocommit=True)
        admin.execute("DROP DATABASE IF EXISTS %s" % DB)
        admin.close()

    def one(self, sql, params=None):
        return self.conn.execute(sql, params).fetchone()

    def raw(self, sql, params=None):
        """Rows of the text-format result as the server printed them (str
        or None), with the type name of each column."""
        cur = self.conn.execute(sql, params)
        res = cur.pgresult
        types = [self.typname(d.type_code) for d in cur.description]
        rows = []
        for i in range(res.ntuples):
            rows.append([None if res.get_value(i, j) is None
                         else res.get_value(i, j).decode("utf-8")
                         for j in range(res.nfields)])
        return types, rows

    def typname(self, oid):
        if oid not in self.typnames:
            self.typnames[oid] = self.one("SELECT typname FROM pg_type WHERE oid = %s", (oid,))[0]
        return self.typnames[oid]

    def sqlstate(self, sql):
        return self.one("SELECT conf_sqlstate(%s)", (sql,))[0]

    def recv_sqlstate(self, data):
        """SQLSTATE of the binary input function (bloomfilter_recv) on data."""
        class Raw(bytes):
            pass

        bf_oid = self.bf_oid

        class RawDumper(Dumper):
            format = pq.Format.BINARY
            oid = bf_oid

            def dump(self, obj):
                return bytes(obj)

        cur = self.conn.cursor()
        cur.adapters.register_dumper(Raw, RawDumper)
        try:
            cur.execute("SELECT %b IS NOT NULL", (Raw(data),))
            return None
        except psycopg.Error as e:
            return e.sqlstate


def key_of(types, row, record):
    if record:
        return {"type": "record",
                "fields": [{"type": t, "value": v} for t, v in zip(types, row)]}
    return {"type": types[0], "value": row[0]}


def b64(b):
    return base64.b64encode(b).decode("ascii")


# ---------------------------------------------------------------------------
# sections

def gen_hashes(srv, families):
    out = []
    for expr in scalar_values():
        for seed in SEEDS:
            types, rows = srv.raw("SELECT %s, bf_hash(%s, %s)" % (expr, expr, lit_seed(seed)))
            out.append({"key": {"type": types[0], "value": rows[0][0]}, "seed": str(seed),
                        "hash": rows[0][1], "family": families(expr)})
    for fields in RECORDS:
        for seed in SEEDS:
            types, rows = srv.raw("SELECT %s, bf_hash(%s, %s)"
                                  % (", ".join(fields), row_expr(fields), lit_seed(seed)))
            out.append({"key": key_of(types[:-1], rows[0][:-1], True), "seed": str(seed),
                        "hash": rows[0][-1], "family": "record"})
    return out


def filter_entry(srv, name, fexpr, probes, record):
    """fexpr: SQL of the filter; probes: queries of keys."""
    srv.conn.execute("INSERT INTO conf_filters VALUES (%s, %s)" % (quote(name), fexpr))
    b, text, fpr, card, sat, bits_set = srv.one(
        "SELECT f::bytea, f::text, bf_fpr(f)::text, bf_cardinality(f)::text, "
        "(bf_info(f)).saturated, (bf_info(f)).bits_set FROM conf_filters WHERE name = %s" % quote(name))
    back, = srv.one("SELECT %s::bloomfilter::bytea" % quote(text)) \
        if srv.sqlstate("SELECT %s::bloomfilter" % quote(text)) is None else (None,)
    if back != b:
        print("generate: the server cannot read back the text form of '%s'; left out"
              % name, file=sys.stderr)
        return None
    entry = {"name": name, "bytes": b64(b), "text": text, "probes": [],
             "info": {"fpr": fpr, "cardinality": card, "saturated": sat, "bits_set": bits_set}}
    for pq_ in flat(probes):
        cols = "ROW(%s)" if record else "%s"
        types, rows = srv.raw(
            "SELECT s.*, bf_contains((SELECT f FROM conf_filters WHERE name = %s), %s) FROM (%s) s"
            % (quote(name), cols % ", ".join("s.c%d" % i for i in range(
                len(srv.conn.execute("SELECT * FROM (%s) s LIMIT 0" % pq_).description))), pq_))
        for r in rows:
            if r[-1] is None:       # a NULL scalar: bf_contains is STRICT
                continue
            entry["probes"].append({"key": key_of(types[:-1], r[:-1], record),
                                    "expect": r[-1] == "t"})
    return entry


def add_all(srv, create, members, record):
    """SQL of the filter create with the keys of the query members added
    (none if members is None), in the query's order."""
    if members is None:
        return create
    ncols = len(srv.conn.execute("SELECT * FROM (%s) s LIMIT 0" % members).description)
    key = ("ROW(%s)" if record else "%s") % ", ".join("s.c%d" % i for i in range(ncols))
    return "(SELECT bf_add_all(%s, ARRAY(SELECT %s FROM (%s) s)))" % (create, key, members)


def gen_filters(srv):
    out = []
    for name, create, members, probes, record in filters():
        if members is None:
            fexpr = create
        elif isinstance(members, list):        # keys of different types
            fexpr = create
            for m in members:
                fexpr = "bf_add(%s, (SELECT %s FROM (%s) s))" % (
                    fexpr, "ROW(s.*)" if record else "s.c0", m)
        else:
            fexpr = add_all(srv, create, members, record)
        out.append(filter_entry(srv, name, fexpr, probes, record))
    for name, setup, fexpr, probes, record in TABLE_FILTERS:
        srv.conn.execute(setup)
        out.append(filter_entry(srv, name, fexpr, probes, record))
    # valid values that a strict-looking reader might wrongly reject
    good, = srv.one("SELECT bf_add_all(bf_create(100, 0.01, 5), ARRAY[1, 2, 3])::bytea")
    empty, = srv.one("SELECT bf_create(100, 0.01, 5)::bytea")
    ints = [gs("g::int4", 0, 6)]
    for name, data, probes in (
            ("fpr -0.0 (accepted, printed -0)", patch(good, 48, "<d", -0.0), ints),
            ("fpr 5e-324 (accepted)", patch(good, 48, "<d", 5e-324), ints),
            ("capacity 0 with fpr 0.01 (accepted)", patch(good, 40, "<q", 0), ints),
            ("capacity 100 with fpr 0 (accepted)", patch(good, 48, "<d", 0.0), ints),
            ("inserted at its largest, more than the bits say (accepted)",
             patch(good, 32, "<Q", (1 << 63) - 1), ints),
            ("family none with a bit set (accepted, answers false)", patch(empty, 64, "<B", 1),
             [lst("(1)::int4", "'x'::text")])):
        out.append(filter_entry(srv, name, "'\\x%s'::bytea::bloomfilter" % data.hex(), probes, False))
    return [e for e in out if e is not None]


def gen_errors(srv, entries):
    """Probes the server refuses: a key of another family than the filter's."""
    cases = {
        "int8 10000 at 1% seed 0": ["'1'::text", "'1'::numeric", "(1)::float8", "true",
                                    "ROW(1::int8)", "'2000-01-01'::date"],
        "text 5000 at 2% seed 2^62+7": ["(1)::int4", "'\\x6b31'::bytea", "'sad'::conf_mood"],
        "record (int8,text) user x attribute 5000 at 1% seed 0":
            ["ROW(1::int8, 2::int8)", "ROW('color'::text, 1::int8)", "ROW(1::int8)",
             "ROW(1::int8, 'color'::text, true)", "(1)::int8"],
        "float8 3000 at 1% seed 5": ["(1)::int4", "'1'::numeric"],
        "timestamp 2000 at 1% seed 9": ["'2000-01-01 00:00:00+00'::timestamptz", "'2000-01-01'::date"],
    }
    for e in entries:
        for expr in cases.get(e["name"], []):
            st = srv.sqlstate("SELECT bf_contains((SELECT f FROM conf_filters WHERE name = %s), %s)"
                              % (quote(e["name"]), expr))
            assert st, "server accepted %s for %s" % (expr, e["name"])
            if expr.startswith("ROW("):
                inner = split_row(expr)
                types, rows = srv.raw("SELECT %s" % ", ".join(inner))
                key = key_of(types, rows[0], True)
            else:
                types, rows = srv.raw("SELECT %s" % expr)
                key = key_of(types, rows[0], False)
            e.setdefault("errors", []).append({"key": key, "sqlstate": st})


def split_row(expr):
    inner = expr[4:-1]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur.strip())
    return parts


def quote(s):
    return "'" + s.replace("'", "''") + "'"


def gen_setops(srv):
    srv.conn.execute("""
        INSERT INTO conf_filters VALUES
          ('setop a', bf_add_all(bf_create(1000, 0.01, 5), ARRAY(SELECT g::int8 FROM generate_series(1, 600) g))),
          ('setop b', bf_add_all(bf_create(1000, 0.01, 5), ARRAY(SELECT g::int8 FROM generate_series(400, 1000) g))),
          ('setop empty', bf_create(1000, 0.01, 5)),
          ('setop other seed', bf_add_all(bf_create(1000, 0.01, 6), ARRAY[1::int8])),
          ('setop text', bf_add_all(bf_create(1000, 0.01, 5), ARRAY['x'::text]))""")
    out = []
    for op, a, b in (("union", "setop a", "setop b"), ("intersect", "setop a", "setop b"),
                     ("union", "setop a", "setop empty"), ("union", "setop empty", "setop a"),
                     ("intersect", "setop empty", "setop b"),
                     ("union", "setop a", "setop other seed"), ("union", "setop a", "setop text")):
        sql = ("SELECT bf_%s((SELECT f FROM conf_filters WHERE name = %s), "
               "(SELECT f FROM conf_filters WHERE name = %s))" % (op, quote(a), quote(b)))
        st = srv.sqlstate(sql)
        ent = {"op": op}
        for side, n in (("left", a), ("right", b)):
            ent[side], = srv.one("SELECT f::bytea FROM conf_filters WHERE name = %s" % quote(n))
            ent[side] = b64(ent[side])
        if st:
            ent["sqlstate"] = st
        else:
            ent["result"] = b64(srv.one(sql.replace("SELECT bf_", "SELECT (bf_", 1) + ")::bytea")[0])
        ent["name"] = "%s(%s, %s)" % (op, a, b)
        out.append(ent)
    return out


def gen_nonportable(srv):
    out = []
    for name, expr in (("inet (family other)",
                        "bf_add_all(bf_create(100, 0.01), ARRAY['10.0.0.1'::inet, '10.0.0.2'])"),
                       ("record (int4, inet)", "bf_add(bf_create(100, 0.01), ROW(1, '10.0.0.1'::inet))")):
        b, t = srv.one("SELECT f::bytea, f::text FROM (SELECT %s AS f) s" % expr)
        out.append({"name": name, "bytes": b64(b), "text": t})
    return out


def patch(data, off, fmt, val):
    b = bytearray(data)
    struct.pack_into(fmt, b, off, val)
    return bytes(b)


# §3.1: the built-in OIDs of the types of a portable family (and unknown),
# which no value of family other may name
PORTABLE_TYPE_OIDS = [("bool", 16), ("bytea", 17), ("name", 19), ("int8", 20), ("int2", 21),
                      ("int4", 23), ("text", 25), ("float4", 700), ("float8", 701),
                      ("unknown", 705), ("bpchar", 1042), ("varchar", 1043), ("date", 1082),
                      ("timestamp", 1114), ("timestamptz", 1184), ("numeric", 1700),
                      ("uuid", 2950)]


def part_starts(data, first=64):
    """The offsets of the parts of a value (a window's slots, the layers of
    a growing filter or a union: plain filters one after the other from
    offset first), each part's length read from its nblocks."""
    out, off = [], first
    while off < len(data):
        out.append(off)
        off += 64 + 64 * struct.unpack_from("<Q", data, off + 24)[0]
    return out


def patch_parts(data, first, oid):
    """The family detail of every part (see part_starts) that has family
    other set to oid."""
    b = bytearray(data)
    for off in part_starts(data, first):
        if b[off + 8] == 13:
            struct.pack_into("<I", b, off + 12, oid)
    return bytes(b)


def gen_malformed_bytes(srv):
    good, = srv.one("SELECT bf_add_all(bf_create(100, 0.01, 5), ARRAY[1, 2, 3])::bytea")
    rec, = srv.one("SELECT bf_add(bf_create(100, 0.01, 5), ROW(1, 'a'::text))::bytea")
    oth, = srv.one("SELECT bf_add(bf_create(100, 0.01, 5), '10.0.0.1'::inet)::bytea")
    empty, = srv.one("SELECT bf_create(100, 0.01, 5)::bytea")
    nbl = struct.unpack_from("<Q", good, 24)[0]
    cases = [
        ("wrong magic", patch(good, 0, "<4s", b"BLMG")),
        ("magic of a patch (BLMP)", patch(good, 0, "<4s", b"BLMP")),
        ("version 2", patch(good, 4, "<H", 2)),
        ("version 0", patch(good, 4, "<H", 0)),
        ("version 256", patch(good, 4, "<H", 256)),
        ("layout 0", patch(good, 6, "<B", 0)),
        ("layout 2", patch(good, 6, "<B", 2)),
        ("hash function 0", patch(good, 7, "<B", 0)),
        ("hash function 2", patch(good, 7, "<B", 2)),
        ("family 14", patch(good, 8, "<B", 14)),
        ("family 255", patch(good, 8, "<B", 255)),
        ("unknown flag bit 1", patch(good, 9, "<B", 2)),
        ("unknown flag bit 7", patch(good, 9, "<B", 0x80)),
        ("non-portable flag on integer", patch(good, 9, "<B", 1)),
        ("nhashes 0", patch(good, 10, "<H", 0)),
        ("nhashes 65", patch(good, 10, "<H", 65)),
        ("nhashes 65535", patch(good, 10, "<H", 65535)),
        ("family detail 5 on integer", patch(good, 12, "<I", 5)),
        ("nblocks 0", patch(good, 24, "<Q", 0)),
        ("nblocks + 1 (length disagrees)", patch(good, 24, "<Q", nbl + 1)),
        ("nblocks - 1 (length disagrees)", patch(good, 24, "<Q", nbl - 1)),
        ("nblocks 2^23 + 1", patch(good, 24, "<Q", (1 << 23) + 1)),
        ("nblocks 2^32 + nblocks", patch(good, 24, "<Q", (1 << 32) + nbl)),
        ("nblocks 2^63", patch(good, 24, "<Q", 1 << 63)),
        ("nblocks 2^64 - 1", patch(good, 24, "<Q", (1 << 64) - 1)),
        ("truncated by one byte", good[:-1]),
        ("one extra byte", good + b"\0"),
        ("one extra block", good + bytes(64)),
        ("header only", good[:64]),
        ("shorter than the header", good[:40]),
        ("63 bytes", good[:63]),
        ("empty", b""),
        ("reserved 1", patch(good, 56, "<Q", 1)),
        ("reserved high byte", patch(good, 63, "<B", 0x80)),
        ("capacity -1", patch(good, 40, "<q", -1)),
        ("capacity int64 min", patch(good, 40, "<q", -(1 << 63))),
        ("fpr NaN", patch(good, 48, "<d", float("nan"))),
        ("fpr negative NaN", patch(good, 48, "<Q", 0xFFF8000000000000)),
        ("fpr 1.0", patch(good, 48, "<d", 1.0)),
        ("fpr 1.5", patch(good, 48, "<d", 1.5)),
        ("fpr -0.5", patch(good, 48, "<d", -0.5)),
        ("fpr -5e-324", patch(good, 48, "<d", -5e-324)),
        ("fpr +Infinity", patch(good, 48, "<d", float("inf"))),
        ("fpr -Infinity", patch(good, 48, "<d", float("-inf"))),
        ("inserted 2^63", patch(good, 32, "<Q", 1 << 63)),
        ("inserted 2^64-1", patch(good, 32, "<Q", (1 << 64) - 1)),
        ("family 0 with inserted 3", patch(good, 8, "<B", 0)),
        ("family 0 with inserted 1 and no bits", patch(empty, 32, "<Q", 1)),
        ("family 13 without the non-portable flag", patch(good, 8, "<B", 13)),
        ("family other with OID 0", patch(oth, 12, "<I", 0)),
        ("family other without the non-portable flag", patch(oth, 9, "<B", 0)),
        ("record detail 0", patch(rec, 12, "<I", 0)),
        ("record detail with a nested record", patch(rec, 12, "<I", 0x4C)),
        ("record detail with a gap", patch(rec, 12, "<I", 0x401)),
        ("record detail with family 15", patch(rec, 12, "<I", 0xF1)),
        ("record detail with family 14", patch(rec, 12, "<I", 0xE1)),
        ("record with an other field but no flag", patch(rec, 12, "<I", 0x1D)),
        ("record without other field but flagged", patch(rec, 9, "<B", 1)),
        ("record detail first nibble 0", patch(rec, 12, "<I", 0x40)),
    ]
    # family other naming a type of a portable family (§3.1)
    for typ, oid in PORTABLE_TYPE_OIDS:
        cases.append(("family other with the OID of %s (%d)" % (typ, oid), patch(oth, 12, "<I", oid)))
    out = []
    for name, data in cases:
        st = srv.sqlstate("SELECT '\\x%s'::bytea::bloomfilter" % data.hex())
        if st is None:
            if name.startswith("family other with the OID of "):
                raise SystemExit("generate: the server accepts '%s' (FORMAT.md §3.1)" % name)
            print("generate: malformed bytes '%s' accepted by the server; left out" % name,
                  file=sys.stderr)
            continue
        rst = srv.recv_sqlstate(data)
        assert rst == st, "%s: cast %s, recv %s" % (name, st, rst)
        out.append({"name": name, "bytes": b64(data), "sqlstate": st})
    return out


def gen_malformed_text(srv):
    t, = srv.one("SELECT bf_add_all(bf_create(100, 0.01, 5), ARRAY[1, 2, 3])::text")
    t3, = srv.one("SELECT bf_add_all(bf_create_sized(512 * 3, 3, 5), ARRAY[1, 2, 3])::text")
    t1, = srv.one("SELECT bf_add_all(bf_create_sized(512, 3, 5), ARRAY[1, 2, 3])::text")
    toks = t.split(" ")
    bits = toks[-1][5:]
    nbits = int(toks[5][6:])
    k = toks[4]
    b3 = t3.split(" ")[-1][5:]        # 192 bytes: no padding
    b1 = t1.split(" ")[-1][5:]        # 64 bytes: "==" padding

    def tok(i, new):
        return " ".join(toks[:i] + [new] + toks[i + 1:])

    def last_char(s, c):
        return s[:-1] + c

    cases = [
        ("empty", ""),
        ("bloomfilter:2", tok(0, "bloomfilter:2")),
        ("bloomfilter:0", tok(0, "bloomfilter:0")),
        ("prefix only", "bloomfilter:1"),
        ("uppercase prefix", tok(0, "BLOOMFILTER:1")),
        ("leading space", " " + t),
        ("trailing space", t + " "),
        ("trailing newline", t + "\n"),
        ("double space", t.replace(" seed=", "  seed=")),
        ("tab separator", t.replace(" seed=", "\tseed=")),
        ("tokens swapped", " ".join(toks[:4] + [toks[5], toks[4]] + toks[6:])),
        ("token missing (seed)", " ".join(toks[:6] + toks[7:])),
        ("token repeated", " ".join(toks[:7] + [toks[6]] + toks[7:])),
        ("extra token", t + " extra=1"),
        ("layout=flat", tok(1, "layout=flat")),
        ("layout=Blocked", tok(1, "layout=Blocked")),
        ("hash=xxh64", tok(2, "hash=xxh64")),
        ("key without =", tok(2, "hashxxh3_64")),
        ("unknown family", tok(3, "family=int")),
        ("family uppercase", tok(3, "family=Integer")),
        ("family=none with inserted 3", tok(3, "family=none")),
        ("family=record", tok(3, "family=record")),
        ("family=record()", tok(3, "family=record()")),
        ("family=record(record)", tok(3, "family=record(record)")),
        ("family=record(none)", tok(3, "family=record(none)")),
        ("family=record(integer,)", tok(3, "family=record(integer,)")),
        ("family=record(,integer)", tok(3, "family=record(,integer)")),
        ("family=record(integer", tok(3, "family=record(integer")),
        ("family=record with 9 fields", tok(3, "family=record(%s)" % ",".join(["integer"] * 9))),
        ("family=integer()", tok(3, "family=integer()")),
        ("family=other()", tok(3, "family=other()")),
        ("family=other(no_such_schema.no_such_type)", tok(3, "family=other(no_such_schema.no_such_type)")),
        # a type of a portable family (§3.1), by its name and its SQL name
        ("family=other(pg_catalog.int4)", tok(3, "family=other(pg_catalog.int4)")),
        ("family=other(integer)", tok(3, "family=other(integer)")),
        ("family=other(pg_catalog.text)", tok(3, "family=other(pg_catalog.text)")),
        ("family=other(timestamp with time zone)", tok(3, "family=other(timestamp with time zone)")),
        ("nhashes=0", tok(4, "nhashes=0")),
        ("nhashes=65", tok(4, "nhashes=65")),
        ("nhashes=-1", tok(4, "nhashes=-1")),
        ("nhashes=+5", tok(4, "nhashes=+" + k[8:])),
        ("nhashes empty", tok(4, "nhashes=")),
        ("nhashes=5.0", tok(4, "nhashes=%s.0" % k[8:])),
        # one text per filter: other spellings of a valid number are refused
        ("nhashes with a leading zero", tok(4, "nhashes=0" + k[8:])),
        ("nbits with a leading zero", tok(5, "nbits=0%d" % nbits)),
        ("seed with a leading zero", tok(6, "seed=05")),
        ("seed=-0", tok(6, "seed=-0")),
        ("capacity with a leading zero", tok(7, "capacity=0100")),
        ("fpr=1e-2", tok(8, "fpr=1e-2")),
        ("fpr=.01", tok(8, "fpr=.01")),
        ("fpr=0.010", tok(8, "fpr=0.010")),
        ("fpr=+0.01", tok(8, "fpr=+0.01")),
        ("fpr as a hex float", tok(8, "fpr=0x1.47ae147ae147bp-7")),
        ("fpr after a tab", tok(8, "fpr=\t0.01")),
        ("inserted with a leading zero", tok(9, "inserted=03")),
        ("nbits not a multiple of 512", tok(5, "nbits=%d" % (nbits + 8))),
        ("nbits=0", tok(5, "nbits=0")),
        ("nbits disagrees with bits", tok(5, "nbits=%d" % (nbits + 512))),
        ("nbits 2^32 + 512", tok(5, "nbits=%d" % ((1 << 32) + 512))),
        ("nbits 20 digits", tok(5, "nbits=99999999999999999999")),
        ("seed=9223372036854775808", tok(6, "seed=9223372036854775808")),
        ("seed=-9223372036854775809", tok(6, "seed=-9223372036854775809")),
        ("seed=+5", tok(6, "seed=+5")),
        ("seed=--5", tok(6, "seed=--5")),
        ("seed=-", tok(6, "seed=-")),
        ("seed=0x5", tok(6, "seed=0x5")),
        ("capacity=-1", tok(7, "capacity=-1")),
        ("capacity=1e3", tok(7, "capacity=1e3")),
        ("fpr=1", tok(8, "fpr=1")),
        ("fpr=1.5", tok(8, "fpr=1.5")),
        ("fpr=-0.5", tok(8, "fpr=-0.5")),
        ("fpr=NaN", tok(8, "fpr=NaN")),
        ("fpr=Infinity", tok(8, "fpr=Infinity")),
        ("fpr empty", tok(8, "fpr=")),
        ("fpr=0.01x", tok(8, "fpr=0.01x")),
        ("fpr=1e999", tok(8, "fpr=1e999")),
        ("inserted=-1", tok(9, "inserted=-1")),
        ("inserted=9223372036854775808", tok(9, "inserted=9223372036854775808")),
        ("inserted=18446744073709551615", tok(9, "inserted=18446744073709551615")),
        ("inserted=18446744073709551616", tok(9, "inserted=18446744073709551616")),
        ("bits truncated", t[:-8]),
        ("bits one character short", t[:-1]),
        ("bits one character extra", t + "A"),
        ("bits empty", tok(10, "bits=")),
        ("bits missing", " ".join(toks[:10])),
        ("bits with url-safe alphabet", tok(10, "bits=" + "-" + bits[1:])),
        ("bits with an invalid character", tok(10, "bits=" + "*" + bits[1:])),
        ("bits with an inner space", tok(10, "bits=" + bits[:8] + " " + bits[9:])),
        ("bits with a line break", tok(10, "bits=" + bits[:8] + "\n" + bits[9:])),
        ("bits: padding in the middle", " ".join(t3.split(" ")[:-1] + ["bits=" + b3[:4] + "==" + b3[6:]])),
        ("bits: padding missing", " ".join(t1.split(" ")[:-1] + ["bits=" + b1[:-2] + "AA"])),
        ("bits: one '=' where two are due", " ".join(t1.split(" ")[:-1] + ["bits=" + b1[:-2] + "A="])),
        ("bits: non-zero trailing bits before ==", " ".join(t1.split(" ")[:-1] + ["bits=" + b1[:-3] + "B=="])),
    ]
    out = []
    for name, text in cases:
        assert text != t, name
        st = srv.sqlstate("SELECT %s::bloomfilter" % quote(text))
        if st is None:
            print("generate: malformed text '%s' accepted by the server; left out" % name,
                  file=sys.stderr)
            continue
        out.append({"name": name, "text": text, "sqlstate": st})
    return out


# ---------------------------------------------------------------------------
# sliding windows (docs/FORMAT.md §7): values built by adds at given times,
# and the server's answer for keys asked at times around their slices.
# Times in the file are microseconds since 2000-01-01 00:00:00 UTC, as
# decimal strings (§7.2).

T0 = "'2026-01-05 00:00:00+00'::timestamptz"
US = "(extract(epoch FROM %s) * 1000000)::numeric(30, 0) - 946684800000000"

# name, create, adds: [(key SQL, time offset SQL)], probe keys, probe times
WINDOWS = [
    ("4 hours in 4 slices, int8 keys, spread over the window",
     "bf_window_create('4 hours', 1000, 0.01, 4, 7)",
     [("%d::int8" % k, "'%d minutes'" % (k * 7)) for k in range(1, 41)],
     ["%d::int8" % k for k in (1, 2, 9, 17, 25, 33, 40, 41, 1000, -5)],
     ["'0 minutes'", "'10 minutes'", "'4 hours'", "'4 hours 7 minutes'",
      "'5 hours'", "'5 hours 10 minutes'", "'7 hours'", "'8 hours 40 minutes'",
      "'-1 hour'", "'30 days'"]),
    ("7 days in 7 slices, text keys, an idle gap and an ignored add",
     "bf_window_create('7 days', 500, 0.02, 7)",
     [("'seen-%d'::text" % k, "'%d hours'" % (k * 5)) for k in range(1, 21)]
     + [("'late'::text", "'100 days'"), ("'too-old'::text", "'1 day'")],
     ["'seen-%d'::text" % k for k in (1, 10, 20)] + ["'late'::text", "'too-old'::text", "'never'::text"],
     ["'1 day'", "'4 days'", "'8 days'", "'99 days'", "'100 days'", "'106 days 23 hours'",
      "'107 days'", "'108 days'"]),
    ("30 days in 6 slices, user x attribute keys",
     "bf_window_create('30 days', 2000, 0.01, 6, -3)",
     [("ROW(%d::int8, 'attr-%d'::text)" % (u, a), "'%d days'" % (u + a))
      for u in range(1, 6) for a in range(1, 4)],
     ["ROW(%d::int8, 'attr-%d'::text)" % (u, a) for u in (1, 3, 5, 9) for a in (1, 3, 4)],
     ["'2 days'", "'9 days'", "'33 days'", "'40 days'", "'45 days'"]),
    ("1 minute in 1 slice, times before 2000",
     "bf_window_create('1 minute', 100, 0.05, 1)",
     [("%d::int4" % k, "'-9000 days %d seconds'" % (k * 3)) for k in range(1, 11)],
     ["%d::int8" % k for k in (1, 5, 10, 11)],
     ["'-9000 days'", "'-9000 days 30 seconds'", "'-9000 days 59 seconds'",
      "'-9000 days 60 seconds'", "'-9000 days 119 seconds'", "'-9000 days 120 seconds'"]),
    ("empty window", "bf_window_create('1 hour', 100)", [],
     ["1::int8", "'x'::text"], ["'0 seconds'", "'1 hour'"]),
]


def gen_windows(srv):
    out = []
    for name, create, adds, keys, times in WINDOWS:
        w = create
        for key, off in adds:
            w = "bf_window_add(%s, %s, %s + interval %s)" % (w, key, T0, off)
        srv.conn.execute("DELETE FROM conf_windows")
        srv.conn.execute("INSERT INTO conf_windows SELECT %s" % w)
        b, text = srv.one("SELECT w::bytea, w::text FROM conf_windows")
        back, = srv.one("SELECT %s::bloomwindow::bytea" % quote(text))
        if back != b:
            raise SystemExit("generate: the server cannot read back the text form of window '%s'"
                             % name)
        entry = {"name": name, "bytes": b64(b), "text": text, "probes": []}
        record = keys[0].startswith("ROW(")
        for key in keys:
            for off in times:
                at = "%s + interval %s" % (T0, off)
                cols = key[4:-1] if record else key
                types, rows = srv.raw(
                    "SELECT %s, (%s)::text, bf_window_contains(w, %s, %s) FROM conf_windows"
                    % (cols, US % at, key, at))
                r = rows[0]
                entry["probes"].append({"key": key_of(types[:-2], r[:-2], record),
                                        "at": r[-2], "expect": r[-1] == "t"})
        out.append(entry)
    return out


def gen_malformed_windows(srv):
    good, = srv.one("SELECT bf_window_add(bf_window_create('1 hour', 100, 0.01, 2), 1::int8, %s)::bytea"
                    % T0)
    empty, = srv.one("SELECT bf_window_create('1 hour', 100, 0.01, 2)::bytea")
    oth, = srv.one("SELECT bf_window_add(bf_window_create('1 hour', 100, 0.01, 2), "
                   "'10.0.0.1'::inet, %s)::bytea" % T0)
    slot = 64 + 64 * struct.unpack_from("<Q", good, 64 + 24)[0]
    cases = [
        ("wrong magic", patch(good, 0, "<4s", b"BLMF")),
        ("version 2", patch(good, 4, "<H", 2)),
        ("0 slices", patch(good, 6, "<H", 0)),
        ("1025 slices", patch(good, 6, "<H", 1025)),
        ("slices disagree with the length", patch(good, 6, "<H", 3)),
        ("slice width 0", patch(good, 8, "<q", 0)),
        ("slice width -1", patch(good, 8, "<q", -1)),
        ("ignored 2^63", patch(good, 24, "<Q", 1 << 63)),
        ("capacity 0", patch(good, 32, "<q", 0)),
        ("fpr 0", patch(good, 40, "<d", 0.0)),
        ("fpr 1", patch(good, 40, "<d", 1.0)),
        ("fpr NaN", patch(good, 40, "<d", float("nan"))),
        ("reserved byte 48", patch(good, 48, "<B", 1)),
        ("reserved byte 63", patch(good, 63, "<B", 1)),
        ("newest beyond timestamptz", patch(good, 16, "<q", (1 << 62))),
        ("newest set in an empty window", patch(empty, 16, "<q", 0)),
        ("ignored in an empty window", patch(empty, 24, "<Q", 1)),
        ("a slot with another seed", patch(good, 64 + slot + 16, "<q", 99)),
        ("a slot with another nhashes", patch(good, 64 + slot + 10, "<H", 3)),
        ("slot 0 with another capacity", patch(good, 64 + 40, "<q", 101)),
        ("a slot with bad magic", patch(good, 64 + slot, "<4s", b"BLMW")),
        ("truncated by one byte", good[:-1]),
        ("one byte too many", good + b"\0"),
        ("header only", good[:64]),
        # §3.1: slots of family other naming a type of a portable family
        ("slots of family other with the OID of int4 (23)", patch_parts(oth, 64, 23)),
        ("slots of family other with the OID of text (25)", patch_parts(oth, 64, 25)),
    ]
    out = []
    for name, data in cases:
        st = srv.sqlstate("SELECT '\\x%s'::bytea::bloomwindow" % data.hex())
        if st is None:
            raise SystemExit("generate: the server accepts the malformed window '%s'" % name)
        out.append({"name": name, "bytes": b64(data), "sqlstate": st})
    return out


# ---------------------------------------------------------------------------
# growing filters (docs/FORMAT.md §9): values that grew through several
# layers, with probes of members (of every layer) and of absent keys

GROWING = [
    ("int8 keys, capacity 20, growth 2: 1000 keys in 6 layers",
     "bf_create_growing(20, 0.01, 2, 11)", gs("g::int8", 1, 1000),
     [gs("g::int8", 1, 1000, 37), gs("g::int8", 5001, 5400)], False),
    ("text keys, capacity 50, growth 3, fpr 0.05",
     "bf_create_growing(50, 0.05, 3)", gs("'k-' || g", 1, 700),
     [gs("'k-' || g", 1, 700, 23), gs("'absent-' || g", 1, 300)], False),
    ("user x attribute records, capacity 10, growth 4",
     "bf_create_growing(10, 0.01, 4, -2)", gs_rec(["g::int8", "'attr-' || mod(g, 7)"], 1, 200),
     [gs_rec(["g::int8", "'attr-' || mod(g, 7)"], 1, 200, 9),
      gs_rec(["g::int8", "'attr-' || (mod(g, 7) + 1)"], 1, 120)], True),
    ("one layer, not yet grown", "bf_create_growing(1000, 0.01)", gs("g::int4", 1, 100),
     [gs("g::int4", 1, 200)], False),
    ("empty growing filter", "bf_create_growing(100, 0.01)", None,
     [lst("(1)::int8", "'x'::text")], False),
]


def gen_growing(srv):
    out = []
    for name, create, members, probes, record in GROWING:
        out.append(layered_entry(srv, name, add_all(srv, create, members, record), probes, record))
    return out


def layered_entry(srv, name, fexpr, probes, record):
    """filter_entry of a growing filter or a union, with its bf_layers count."""
    e = filter_entry(srv, name, fexpr, probes, record)
    if e is None:
        raise SystemExit("generate: the server cannot read back the layered filter '%s'" % name)
    e["layers"], = srv.one("SELECT count(*) FROM conf_filters, bf_layers(f) WHERE name = %s"
                           % quote(name))
    return e


def gen_malformed_growing(srv):
    good, = srv.one("SELECT bf_add_all(bf_create_growing(5, 0.01, 2, 3), "
                    "ARRAY(SELECT g FROM generate_series(1, 20) g))::bytea")
    one, = srv.one("SELECT bf_add(bf_create_growing(5, 0.01, 2, 3), 1)::bytea")
    oth, = srv.one("SELECT bf_add_all(bf_create_growing(5, 0.01, 2, 3), "
                   "ARRAY(SELECT ('10.0.0.' || g)::inet FROM generate_series(1, 20) g))::bytea")
    l1 = part_starts(good)[1]
    assert struct.unpack_from("<H", good, 6)[0] >= 3, "the sample must have grown"
    cases = [
        ("version 2", patch(good, 4, "<H", 2)),
        ("0 layers", patch(good, 6, "<H", 0)),
        ("65 layers", patch(good, 6, "<H", 65)),
        ("more layers than the value holds", patch(good, 6, "<H", 9)),
        ("fewer layers than the value holds", patch(good, 6, "<H", 1)),
        ("growth 1", patch(good, 8, "<I", 1)),
        ("growth 17", patch(good, 8, "<I", 17)),
        ("reserved bytes 12-15", patch(good, 12, "<I", 1)),
        ("capacity 0", patch(good, 16, "<q", 0)),
        ("capacity of the header differs from layer 0's", patch(good, 16, "<q", 6)),
        ("fpr 0", patch(good, 24, "<d", 0.0)),
        ("fpr 1", patch(good, 24, "<d", 1.0)),
        ("fpr NaN", patch(good, 24, "<d", float("nan"))),
        ("fpr differs from the layers' chain", patch(good, 24, "<d", 0.02)),
        ("ratio 0", patch(good, 32, "<d", 0.0)),
        ("ratio 1", patch(good, 32, "<d", 1.0)),
        ("ratio differs from the layers' chain", patch(good, 32, "<d", 0.8)),
        ("reserved byte 40", patch(good, 40, "<B", 1)),
        ("reserved byte 63", patch(good, 63, "<B", 1)),
        ("layer 1 with another seed", patch(good, l1 + 16, "<q", 4)),
        ("layer 1 with another family", patch(good, l1 + 8, "<B", 4)),
        ("layer 1 with another capacity", patch(good, l1 + 40, "<q", 11)),
        ("layer 1 with another fpr", patch(good, l1 + 48, "<d", 0.001)),
        ("layer 1 with a plain magic error", patch(good, l1, "<4s", b"BLMG")),
        ("layer 1 with 0 hashes", patch(good, l1 + 10, "<H", 0)),
        ("layer 0 with an nblocks past the end", patch(one, 64 + 24, "<Q", 1000)),
        ("truncated by one byte", good[:-1]),
        ("one byte too many", good + b"\0"),
        ("header only", good[:64]),
        # §3.1: layers of family other naming a type of a portable family
        ("layers of family other with the OID of int4 (23)", patch_parts(oth, 64, 23)),
        ("layers of family other with the OID of text (25)", patch_parts(oth, 64, 25)),
    ]
    return rejected(srv, "growing filter", cases)


def rejected(srv, what, cases):
    """The entries of malformed layered values: each must be rejected by
    the server, whose SQLSTATE they record."""
    out = []
    for name, data in cases:
        st = srv.sqlstate("SELECT '\\x%s'::bytea::bloomfilter" % data.hex())
        if st is None:
            raise SystemExit("generate: the server accepts the malformed %s '%s'" % (what, name))
        out.append({"name": name, "bytes": b64(data), "sqlstate": st})
    return out


# ---------------------------------------------------------------------------
# unions (docs/FORMAT.md §10): bf_union_layered of filters of any sizes,
# one layer per plain input and every layer of a growing one; probes of
# each input's members and of absent keys.  Each input: (constructor,
# members query or None).

REC_KEYS = ["g::int8", "'attr-' || mod(g, 7)"]
UNIONS = [
    ("int8 keys: plain filters of 100 and 5000 keys",
     [("bf_create(100, 0.01, 7)", gs("g::int8", 1, 100)),
      ("bf_create(5000, 0.001, 7)", gs("g::int8", 101, 5100))],
     [gs("g::int8", 1, 5100, 13), gs("g::int8", 10001, 10600)], False),
    ("int8 keys: a growing filter (flattened into its layers) and a plain one",
     [("bf_create_growing(20, 0.01, 2, 3)", gs("g::int8", 1, 300)),
      ("bf_create(1000, 0.01, 3)", gs("g::int8", 1001, 1500))],
     [gs("g::int8", 1, 1500, 7), gs("g::int8", 3001, 3600)], False),
    ("text keys, with an empty layer (family none in the input)",
     [("bf_create(50, 0.01)", None), ("bf_create(500, 0.02)", gs("'t-' || g", 1, 500)),
      ("bf_create(20, 0.05)", gs("'u-' || g", 1, 20))],
     [gs("'t-' || g", 1, 500, 7), gs("'u-' || g", 1, 20), gs("'absent-' || g", 1, 400)], False),
    ("user x attribute records: three shards",
     [("bf_create(100, 0.01, -2)", gs_rec(REC_KEYS, 1, 100)),
      ("bf_create(300, 0.01, -2)", gs_rec(REC_KEYS, 101, 400)),
      ("bf_create(50, 0.01, -2)", gs_rec(REC_KEYS, 401, 450))],
     [gs_rec(REC_KEYS, 1, 450, 3), gs_rec(["g::int8", "'attr-' || (mod(g, 7) + 1)"], 1, 300)],
     True),
    ("layers sized explicitly (capacity 0, fpr 0)",
     [("bf_create_sized(1024, 3)", gs("g::int4", 1, 40)),
      ("bf_create_sized(4096, 5)", gs("g::int4", 41, 300))],
     [gs("g::int4", 1, 600)], False),
    ("one layer", [("bf_create(1000, 0.01)", gs("g::int4", 1, 100))],
     [gs("g::int4", 1, 200)], False),
    ("only empty layers (family none)", [("bf_create(100, 0.01)", None),
                                         ("bf_create_growing(100, 0.01)", None)],
     [lst("(1)::int8", "'x'::text")], False),
]


def union_of(srv, inputs, record):
    return "bf_union_layered(%s)" % ", ".join(add_all(srv, c, m, record) for c, m in inputs)


def gen_unions(srv):
    out = []
    for name, inputs, probes, record in UNIONS:
        out.append(layered_entry(srv, name, union_of(srv, inputs, record), probes, record))
    # valid headers a strict reader might wrongly reject: only the range of
    # the rate is checked, and the capacities may add up to the largest bigint
    good, = srv.one("SELECT bf_union_layered(bf_add_all(bf_create(10, 0.01, 7), "
                    "ARRAY(SELECT g FROM generate_series(1, 10) g)), bf_add_all(bf_create(100, 0.01, 7), "
                    "ARRAY(SELECT g FROM generate_series(11, 110) g)))::bytea")
    l1 = part_starts(good)[1]
    top = patch(patch(patch(good, 64 + 40, "<q", 1 << 62), l1 + 40, "<q", (1 << 62) - 1),
                16, "<q", (1 << 63) - 1)
    ints = [gs("g::int8", 1, 120, 7), gs("g::int8", 5001, 5030)]
    for name, data in (("header fpr 1 (accepted)", patch(good, 24, "<d", 1.0)),
                       ("header fpr 0 with layers that have targets (accepted)",
                        patch(good, 24, "<d", 0.0)),
                       ("header fpr -0 (accepted, printed -0)", patch(good, 24, "<d", -0.0)),
                       ("capacities that add up to the largest bigint (accepted)", top)):
        out.append(layered_entry(srv, name, "'\\x%s'::bytea::bloomfilter" % data.hex(), ints, False))
    return out


def gen_malformed_unions(srv):
    good, = srv.one("SELECT %s::bytea" % union_of(srv, [
        ("bf_create(10, 0.01, 3)", gs("g::int8", 1, 10)),
        ("bf_create(100, 0.01, 3)", gs("g::int8", 11, 110)),
        ("bf_create(30, 0.05, 3)", gs("g::int8", 111, 140))], False))
    one, = srv.one("SELECT bf_union_layered(bf_add(bf_create(5, 0.01, 3), 1))::bytea")
    oth, = srv.one("SELECT bf_union_layered(bf_add(bf_create(5, 0.01), '10.0.0.1'::inet), "
                   "bf_add(bf_create(50, 0.01), '10.0.0.2'::inet))::bytea")
    grown, = srv.one("SELECT bf_add_all(bf_create_growing(5, 0.01, 2, 3), "
                     "ARRAY(SELECT g FROM generate_series(1, 20) g))::bytea")
    starts = part_starts(good)
    assert len(starts) == 3
    l1 = starts[1]
    caps = [struct.unpack_from("<q", good, o + 40)[0] for o in starts]
    total = sum(caps)
    # capacities 2^62, 2^62 and c2: a sum past the largest bigint, and the
    # header holds what it wraps to in an i64
    wrapped = patch(patch(good, starts[0] + 40, "<q", 1 << 62), l1 + 40, "<q", 1 << 62)
    wrapped = patch(wrapped, 16, "<q", (1 << 63) + caps[2] - (1 << 64))
    # layer 0 emptied to family none, the others integer
    none0 = patch(patch(good, 64 + 8, "<B", 0), 64 + 32, "<Q", 0)
    cases = [
        ("version 0", patch(good, 4, "<H", 0)),
        ("version 2", patch(good, 4, "<H", 2)),
        ("0 layers", patch(good, 6, "<H", 0)),
        ("65 layers", patch(good, 6, "<H", 65)),
        ("more layers than the value holds", patch(good, 6, "<H", 4)),
        ("fewer layers than the value holds", patch(good, 6, "<H", 2)),
        ("reserved bytes 8-11 (a growth of section 9)", patch(good, 8, "<I", 2)),
        ("reserved byte 15", patch(good, 15, "<B", 1)),
        ("capacity one more than the layers' sum", patch(good, 16, "<q", total + 1)),
        ("capacity one less than the layers' sum", patch(good, 16, "<q", total - 1)),
        ("capacity 0", patch(good, 16, "<q", 0)),
        ("capacity -1", patch(good, 16, "<q", -1)),
        ("capacity of layer 0 only", patch(good, 16, "<q", caps[0])),
        ("capacities past the largest bigint (the header holds the wrapped sum)", wrapped),
        ("fpr -0.01", patch(good, 24, "<d", -0.01)),
        ("fpr -5e-324", patch(good, 24, "<d", -5e-324)),
        ("fpr 1.0000000000000002", patch(good, 24, "<d", 1.0000000000000002)),
        ("fpr NaN", patch(good, 24, "<d", float("nan"))),
        ("fpr +Infinity", patch(good, 24, "<d", float("inf"))),
        ("fpr -Infinity", patch(good, 24, "<d", float("-inf"))),
        ("reserved bytes 32-39 (a ratio of section 9)", patch(good, 32, "<d", 0.9)),
        ("reserved byte 40", patch(good, 40, "<B", 1)),
        ("reserved byte 63", patch(good, 63, "<B", 1)),
        ("layer 1 with another seed", patch(good, l1 + 16, "<q", 4)),
        ("layer 1 with another family", patch(good, l1 + 8, "<B", 4)),
        ("layer 1 with the non-portable flag", patch(good, l1 + 9, "<B", 1)),
        ("layer 0 of family none, the others integer", none0),
        ("layer 1 with another version", patch(good, l1 + 4, "<H", 2)),
        ("layer 1 with the magic of a union", patch(good, l1, "<4s", b"BLMU")),
        ("layer 1 with the magic of a growing filter", patch(good, l1, "<4s", b"BLMG")),
        ("layer 1 with 0 hashes", patch(good, l1 + 10, "<H", 0)),
        ("layer 1 with a negative capacity", patch(good, l1 + 40, "<q", -1)),
        ("layer 0 with an nblocks past the end", patch(one, 64 + 24, "<Q", 1000)),
        ("truncated by one byte", good[:-1]),
        ("one byte too many", good + b"\0"),
        ("one block too many", good + bytes(64)),
        ("header only", good[:64]),
        ("shorter than the header", good[:63]),
        ("the union's bytes under the magic of a growing filter", patch(good, 0, "<4s", b"BLMG")),
        ("a growing filter's bytes under the magic of a union", patch(grown, 0, "<4s", b"BLMU")),
        # §3.1: layers of family other naming a type of a portable family
        ("layers of family other with the OID of int4 (23)", patch_parts(oth, 64, 23)),
        ("layers of family other with the OID of text (25)", patch_parts(oth, 64, 25)),
    ]
    return rejected(srv, "union", cases)


# ---------------------------------------------------------------------------
# output: one entry per line, so that a diff of the file is readable

def dump(doc, path):
    def j(v):
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))

    lines = ["{"]
    items = list(doc.items())
    for n, (k, v) in enumerate(items):
        comma = "," if n + 1 < len(items) else ""
        if isinstance(v, list) and k in ("filters", "windows", "growing", "unions"):
            lines.append('  "%s": [' % k)
            for i, f in enumerate(v):
                lines.append("    {")
                fitems = list(f.items())
                for m, (fk, fv) in enumerate(fitems):
                    c = "," if m + 1 < len(fitems) else ""
                    if isinstance(fv, list):
                        lines.append('      "%s": [' % fk)
                        for p, x in enumerate(fv):
                            lines.append("        " + j(x) + ("," if p + 1 < len(fv) else ""))
                        lines.append("      ]" + c)
                    else:
                        lines.append('      "%s": %s%s' % (fk, j(fv), c))
                lines.append("    }" + ("," if i + 1 < len(v) else ""))
            lines.append("  ]" + comma)
        elif isinstance(v, list):
            lines.append('  "%s": [' % k)
            for i, x in enumerate(v):
                lines.append("    " + j(x) + ("," if i + 1 < len(v) else ""))
            lines.append("  ]" + comma)
        else:
            lines.append('  "%s": %s%s' % (k, j(v), comma))
    lines.append("}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    path = argv[0] if argv else OUT
    srv = Server()
    try:
        ver, = srv.one("SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")
        pgv, = srv.one("SHOW server_version")
        fam_cache = {}

        def families(expr):
            if expr not in fam_cache:
                t, = srv.one("SELECT bf_add(bf_create_sized(512, 1), %s)::text" % expr)
                fam_cache[expr] = t.split(" ")[3][len("family="):]
            return fam_cache[expr]

        filt = gen_filters(srv)
        gen_errors(srv, filt)
        doc = {
            "format": 1,
            "generated_by": "bloomfilter %s on PostgreSQL %s" % (ver, pgv.split()[0]),
            "types": {},
            "hashes": gen_hashes(srv, families),
            "filters": filt,
            "setops": gen_setops(srv),
            "nonportable_filters": gen_nonportable(srv),
            "malformed_bytes": gen_malformed_bytes(srv),
            "malformed_text": gen_malformed_text(srv),
            "windows": gen_windows(srv),
            "malformed_windows": gen_malformed_windows(srv),
            "growing": gen_growing(srv),
            "malformed_growing": gen_malformed_growing(srv),
            "unions": gen_unions(srv),
            "malformed_unions": gen_malformed_unions(srv),
        }
        # the family of every type name that occurs in a key
        for typ in sorted({k["key"]["type"] for k in doc["hashes"]} - {"record"}):
            expr = next(h for h in scalar_values() if srv.raw("SELECT %s" % h)[0][0] == typ)
            doc["types"][typ] = families(expr)
    finally:
        srv.close()
    dump(doc, path)
    size = os.path.getsize(path)
    print("generate: wrote %s (%d bytes: %d hashes, %d filters with %d probes, "
          "%d malformed bytes, %d malformed texts, %d growing filters, %d unions)"
          % (path, size, len(doc["hashes"]), len(doc["filters"]),
             sum(len(f["probes"]) for f in doc["filters"]),
             len(doc["malformed_bytes"]), len(doc["malformed_text"]),
             len(doc["growing"]), len(doc["unions"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
