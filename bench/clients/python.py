#!/usr/bin/python3
"""Local lookups of the Python client next to a server round trip.

    pg_virtualenv python3 bench/clients/python.py [NKEYS]      (default 10 000 000)

Tracks a table of NKEYS int8 keys at 1 % (a 12 MB filter for 10 M keys),
reads its filter through psycopg, then measures in the same run:

  - BloomFilter.contains of an absent 8-byte key (CPython, per lookup,
    CPU time of the process)
  - the same for present keys
  - a server round trip of bf_might_contain (psycopg, prepared, local socket)

Each figure is the best of 30 runs (local lookups: of 20 000 keys each);
the median of the runs is printed too.
Output: one line per figure, "name<TAB>value<TAB>unit<TAB>spread".
Needs the extension installed, psycopg 3 and clients/python on PYTHONPATH.
"""

import os
import random
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "clients", "python", "src"))
import psycopg  # noqa: E402

from pgbloomfilter import BloomFilter  # noqa: E402

# many short runs, the best kept: on a shared machine a short run is the
# likelier to go by without interruption
RUNS = 30
LOCAL = 20_000


def best(fn, n, clock=time.perf_counter_ns):
    """Per-call nanoseconds of fn over n calls: (best, median) of RUNS runs.

    Local lookups are timed with the process's CPU time: they are pure
    computation, and on a shared machine wall-clock time also counts the
    time the process waited for a CPU.  Round trips wait for the server,
    so they are timed by the wall clock."""
    per = []
    for _ in range(RUNS):
        t0 = clock()
        fn()
        per.append((clock() - t0) / n)
    return min(per), statistics.median(per)


def main(argv):
    nkeys = int(argv[0]) if argv else 10_000_000
    conn = psycopg.connect("", autocommit=True)
    conn.execute("SET client_min_messages = warning")
    conn.execute("CREATE EXTENSION IF NOT EXISTS bloomfilter")
    conn.execute("DROP TABLE IF EXISTS bench_client_py")
    conn.execute("CREATE TABLE bench_client_py (id int8)")
    conn.execute("INSERT INTO bench_client_py SELECT g FROM generate_series(1, %d) g" % nkeys)
    conn.execute("SELECT bf_track('bench_client_py', 'id', %d, 0.01)" % nkeys)
    t0 = time.perf_counter()
    raw = conn.cursor(binary=True).execute(
        "SELECT bf_tracked_filter('bench_client_py', 'id')::bytea").fetchone()[0]
    fetch_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    f = BloomFilter(raw)
    parse_ms = (time.perf_counter() - t0) * 1000

    rng = random.Random(1)
    absent = [rng.randrange(nkeys + 1, 1 << 62) for _ in range(200_000)]
    present = [rng.randrange(1, nkeys + 1) for _ in range(200_000)]
    contains = f.contains

    def look(keys):
        def run():
            for k in keys:
                contains(k)
        return run

    a_best, a_med = best(look(absent[:LOCAL]), LOCAL, time.process_time_ns)
    p_best, p_med = best(look(present[:LOCAL]), LOCAL, time.process_time_ns)
    a_wall, _ = best(look(absent[:LOCAL]), LOCAL)
    fp = sum(contains(k) for k in absent) / len(absent)

    ncalls = 2000
    cur = conn.cursor()
    q = "SELECT bf_might_contain('bench_client_py', 'id', %s::int8)"
    keys = absent[:ncalls]
    cur.execute(q, (keys[0],), prepare=True)

    def rt():
        for k in keys:
            cur.execute(q, (k,), prepare=True)
            cur.fetchone()

    r_best, r_med = best(rt, ncalls)
    conn.execute("DROP TABLE bench_client_py")

    print("filter\t%.1f\tMB\t%d keys, fetched in %.0f ms, parsed in %.0f ms, measured fpr %.4f"
          % (len(raw) / 1e6, nkeys, fetch_ms, parse_ms, fp))
    print("python contains, absent 8-byte key\t%.0f\tns\tCPU time, median %.0f; wall clock best %.0f"
          % (a_best, a_med, a_wall))
    print("python contains, present key\t%.0f\tns\tmedian %.0f" % (p_best, p_med))
    print("server round trip bf_might_contain\t%.0f\tns\tmedian %.0f" % (r_best, r_med))
    print("round trip / local absent lookup\t%.0f\tx\t" % (r_best / a_best))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
