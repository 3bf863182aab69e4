#!/usr/bin/python3
"""TPC-H queries with the join filters off, on and auto (bench/tpch.sh).

For each query (qgen's output, made PostgreSQL's: intervals, row limits),
each timed round runs it once untimed (its tables in the caches as for
the runs that follow), then once per mode, the modes in a rotated order, and
reads the backend's CPU time (utime + stime of /proc/<pid>/stat) before
and after: the query's CPU, independent of the machine's other load.  The
results of every mode must equal those of "off" (as sorted rows).  Then
one EXPLAIN (ANALYZE, TIMING OFF) per query and mode gives the rows the
filters removed: the filters are added to the finished plan, so each scan
of "off" is there with them (the same alias); a scan with a filter qual
removed the difference of its rows to the same scan of "off", or, where
its other quals went to a Bloom Rest node above it, the rows its own
filter removed.  --reps 0: that EXPLAIN only.  Prints a Markdown
table: the least CPU of the rounds per mode, the ratios to "off", the
rows removed, and the geometric means: of the ratios measured, and of the
ratios with a query whose plan in that mode is the plan of "off" (EXPLAIN
(COSTS OFF), no filter placed) counted 1.00, as it is but for the noise.
"""

import argparse
import math
import os
import re
import sys

import psycopg

MODES = {
    "off": ("off", "off"),
    "on": ("on", "on"),
    "auto": ("auto", "auto"),
}
FILTER_FUNCS = ("bf_runtime_filter", "bf_join_prefilter", "bf_join_tracked_prefilter")


def statements(path):
    """the query's statements, in PostgreSQL's dialect"""
    text = open(path).read()
    text = "\n".join(l for l in text.splitlines() if not l.startswith("--"))
    text = re.sub(r"interval '(\d+)' (day|month|year)( \(\d+\))?", r"interval '\1 \2'", text)
    m = re.search(r";\s*where rownum <= (-?\d+);\s*$", text)
    if m:
        limit = int(m.group(1))
        text = text[: m.start()] + (" limit %d;" % limit if limit > 0 else ";")
    return [s.strip() for s in text.split(";") if s.strip()]


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def set_mode(cur, mode):
    jf, rf = MODES[mode]
    cur.execute("SET bloomfilter.join_filter = %s" % jf)
    cur.execute("SET bloomfilter.runtime_join_filter = %s" % rf)


def run(conn, pid, stmts, mode):
    """(CPU seconds, rows of the statement that returns them)"""
    cur = conn.cursor()
    set_mode(cur, mode)
    rows = None
    t0 = cpu_ticks(pid)
    for s in stmts:
        cur.execute(s)
        if cur.description is not None:
            rows = cur.fetchall()
    t1 = cpu_ticks(pid)
    return (t1 - t0) / os.sysconf("SC_CLK_TCK"), rows


def scans(plan, out, stmt, parent=None):
    """each scan's (rows * loops, filter text, rows its filters removed
    where they are its only quals), by statement and alias"""
    rows = plan.get("Actual Rows", 0) * plan.get("Actual Loops", 0)
    if "Alias" in plan:
        text = plan.get("Filter", "")
        own = None
        if parent is not None and parent.get("Custom Plan Provider") == "Bloom Rest":
            rows = parent.get("Actual Rows", 0) * parent.get("Actual Loops", 0)
            own = plan.get("Rows Removed by Filter", 0)
        out[(stmt, plan["Alias"])] = (rows, text, own)
    for child in plan.get("Plans", []):
        scans(child, out, stmt, plan)
    return out


def explain(conn, stmts, mode):
    cur = conn.cursor()
    set_mode(cur, mode)
    nodes = {}
    for i, s in enumerate(stmts):
        if not s.lower().startswith(("select", "with")):
            cur.execute(s)
            continue
        cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + s)
        scans(cur.fetchone()[0][0]["Plan"], nodes, i)
    return nodes


def plan_text(conn, stmts, mode):
    """the query's plans without costs: equal where no filter was placed"""
    cur = conn.cursor()
    set_mode(cur, mode)
    out = []
    for s in stmts:
        if not s.lower().startswith(("select", "with")):
            cur.execute(s)
            continue
        cur.execute("EXPLAIN (COSTS OFF) " + s)
        out.extend(r[0] for r in cur.fetchall())
    return "\n".join(out)


def removed(off, on):
    n = 0
    kinds = set()
    for k, (rows, text, own) in on.items():
        for f, short in zip(FILTER_FUNCS, ("rt", "ix", "tr")):
            if f in text:
                kinds.add(short)
        if not any(f in text for f in FILTER_FUNCS):
            continue
        if own is not None:
            n += own
        elif k in off:
            n += max(0, off[k][0] - rows)
    return n, "+".join(sorted(kinds)) or "-"


def gmean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default="tpch")
    ap.add_argument("--queries", required=True)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--modes", default="off on auto")
    ap.add_argument("--only", default=" ".join(str(i) for i in range(1, 23)))
    args = ap.parse_args()
    modes = args.modes.split()
    qs = [int(q) for q in args.only.split()]
    conn = psycopg.connect(dbname=args.db, autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT pg_backend_pid(), current_setting('work_mem'), "
                "current_setting('max_parallel_workers_per_gather'), current_setting('shared_buffers'), "
                "(SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                " JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'bloomfilter')")
    pid, wm, mpw, sb, nbf = cur.fetchone()
    cur.execute("LOAD 'bloomfilter'")
    cpu = {(q, m): [] for q in qs for m in modes}
    mismatches = 0
    for rep in range(args.reps):
        for q in qs:
            stmts = statements(os.path.join(args.queries, "%d.sql" % q))
            order = modes[rep % len(modes):] + modes[: rep % len(modes)]
            results = {}
            run(conn, pid, stmts, modes[0])
            for m in order:
                secs, rows = run(conn, pid, stmts, m)
                cpu[(q, m)].append(secs)
                results[m] = sorted(map(repr, rows or []))
            for m in modes:
                if results[m] != results[modes[0]]:
                    mismatches += 1
                    print("MISMATCH q%d %s: %d rows against %d" % (q, m, len(results[m]), len(results[modes[0]])),
                          file=sys.stderr)
            print("rep %d q%d: %s" % (rep + 1, q, " ".join("%s %.2f" % (m, cpu[(q, m)][-1]) for m in modes)),
                  file=sys.stderr)
    rem = {}
    same = {}
    for q in qs:
        stmts = statements(os.path.join(args.queries, "%d.sql" % q))
        plans = {m: explain(conn, stmts, m) for m in modes}
        texts = {m: plan_text(conn, stmts, m) for m in modes}
        for m in modes:
            rem[(q, m)] = removed(plans[modes[0]], plans[m])
            same[(q, m)] = texts[m] == texts[modes[0]]
    print("work_mem %s, max_parallel_workers_per_gather %s, shared_buffers %s, bloomfilter indexes %d, "
          "least CPU of %d rounds, modes interleaved; %d result mismatches\n" % (wm, mpw, sb, nbf, args.reps, mismatches))
    others = [m for m in modes if m != modes[0]]
    print("| query | " + " | ".join("%s CPU s" % m for m in modes) + " | " +
          " | ".join("%s ÷ %s" % (m, modes[0]) for m in others) + " | " +
          " | ".join("%s removed (filters)" % m for m in others) + " | plan of off |")
    print("|---" * (2 + len(modes) + 2 * len(others)) + "|")
    ratios = {m: [] for m in others}
    adjusted = {m: [] for m in others}
    least = {k: min(v) if v else float("nan") for k, v in cpu.items()}
    for q in qs:
        base = least[(q, modes[0])]
        cells = ["q%d" % q] + ["%.2f" % least[(q, m)] for m in modes]
        for m in others:
            r = least[(q, m)] / base if base > 0 else float("nan")
            ratios[m].append(r)
            adjusted[m].append(1.0 if same[(q, m)] else r)
            cells.append("%.2f" % r)
        for m in others:
            n, kinds = rem[(q, m)]
            cells.append("%s (%s)" % (format(n, ","), kinds))
        cells.append(" ".join(m for m in others if same[(q, m)]) or "-")
        print("| " + " | ".join(cells) + " |")
    blanks = " | ".join("" for _ in modes)
    print("| geometric mean | " + blanks + " | " +
          " | ".join("%.3f" % gmean(ratios[m]) for m in others) + " | " +
          " | ".join("" for _ in others) + " | |")
    print("| the same, a plan of off counted 1.00 | " + blanks + " | " +
          " | ".join("%.3f" % gmean(adjusted[m]) for m in others) + " | " +
          " | ".join("" for _ in others) + " | |")
    print("\nfilters: rt run-time, ix index pre-filter, tr tracked pre-filter; "
          "plan of off: the modes whose plan is the plan of off")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
