"""A Refresher of one tracked column driven over stdin, for
test/lib/citus_clients.sh (the clients against a table distributed by
Citus, test/suites/92-citus.sh).  One process keeps one Refresher, so the
refreshes after the first are incremental as an application's are.

    PYTHONPATH=src python3 tests/citus_client.py TABLE COLUMN [CONNINFO]

(CONNINFO default: the libpq environment, PGHOST, PGPORT, ...)

Commands, one a line on stdin; one answer a line on stdout:

    check KEYFILE   refresh, then test every key of KEYFILE (one a line;
                    an int for a filter of integers, else text); answers
                      ok MODE NKEYS BYTES MD5 LAYOUT LSN
                    MODE full or patch (how the refresh reached the copy),
                    BYTES received by it, MD5 of the copy's bytes, LAYOUT
                    blocked, growing or union, LSN the position it got; or
                      fail REASON
    quit            (or end of input) exit

Not a test module (pytest collects test_*.py only).
"""

import hashlib
import sys

from pgbloomfilter import PostgresSource, Refresher


def one_line(s: object) -> str:
    return str(s).replace("\n", " ")


def check(ref: Refresher, keyfile: str) -> str:
    before = ref.status()
    try:
        ref.refresh()
    except Exception as e:  # recorded by the Refresher; the old copy stays
        return "fail refresh: %s: %s" % (type(e).__name__, one_line(e))
    st = ref.status()
    mode = "full" if st.full_refreshes > before.full_refreshes else "patch"
    f = ref.filter
    integer = f.family == "integer"
    n = 0
    with open(keyfile, encoding="utf-8") as keys:
        for line in keys:
            key = line[:-1] if line.endswith("\n") else line
            v: object = key
            if integer:
                try:
                    v = int(key)
                except ValueError:
                    return "fail key %r is not an integer (the filter's family)" % key
            if not f.contains(v):
                return "fail key %r reported absent (%d keys tested before it)" % (key, n)
            n += 1
    layout = "union" if f.is_union else "growing" if f.is_growing else "blocked"
    return "ok %s %d %d %s %s %s" % (mode, n, st.bytes_received - before.bytes_received,
                                     hashlib.md5(f.to_bytes()).hexdigest(), layout, st.lsn or "-")


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print("usage: citus_client.py TABLE COLUMN [CONNINFO]", file=sys.stderr)
        return 2
    table, column = sys.argv[1], sys.argv[2]
    conninfo = sys.argv[3] if len(sys.argv) == 4 else ""
    ref = Refresher(PostgresSource(conninfo, table=table, column=column))
    try:
        for line in sys.stdin:
            cmd, _, arg = line.rstrip("\n").partition(" ")
            if cmd == "quit":
                break
            if cmd == "":
                continue
            try:
                answer = check(ref, arg) if cmd == "check" else "fail unknown command %r" % cmd
            except Exception as e:
                answer = "fail %s: %s" % (type(e).__name__, one_line(e))
            print(answer, flush=True)
    finally:
        ref.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
