#!/usr/bin/env python3
"""Cancel latency of the extension's long loops over user-sized input.

For each case, session A builds a large array in a PL/pgSQL variable (not
timed, not cancelled) and then calls one function on it; session B waits
until A has released an advisory lock just before that call, sleeps a third
of the call's uncancelled duration and cancels A: SIGINT sent directly when
the script runs as the server's user on its machine (what pg_cancel_backend
does, without the seconds a query can take on a loaded machine), else
pg_cancel_backend.  Either sets the flag statement_timeout sets.

The call runs with a generic plan.  A custom plan would fold the PL/pgSQL
array into a constant (a flat copy of the whole array, made by the planner
and not interruptible) and then run the IMMUTABLE call at plan time; that
copy is PostgreSQL's, proportional to the array, and not what is measured.

Prints, per case, the median of three times from the cancel to A's error,
the time the call takes when not cancelled, and the three times:
"name<TAB>latency_ms<TAB>full_ms<TAB>each latency".

Needs psycopg 3 and the libpq environment of the target database
(bench/run-inner.sh, pg_virtualenv).  Usage: cancel_latency.py [N]
"""
import os
import signal
import sys
import threading
import time

import psycopg

N = int(sys.argv[1]) if len(sys.argv) > 1 else 60_000_000
LOCK = 4242

CASES = {
    # every element is hashed and added
    "bf_add_all": "bf_add_all(bf_create({n}), a)",
    # a filter with every bit set holds every element: the loop runs to the end
    "bf_contains_all": "bf_contains_all(bf_add_all(bf_create_sized(512, 1), "
                       "ARRAY(SELECT generate_series(1::bigint, 10000))), a)",
    # an integer filter with no bit set holds no element: the loop runs to the end
    "bf_contains_any": "bf_contains_any(bf_clear(bf_add(bf_create(10), 0::bigint)), a)",
}


def statement(expr):
    # the array first (held in a PL/pgSQL variable, so that no detoasting
    # happens in the call), then release the lock, then the call measured
    return f"""
        DO $$
        DECLARE a bigint[] := ARRAY(SELECT generate_series(1::bigint, {N}));
        BEGIN
            PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
            PERFORM pg_advisory_unlock({LOCK});
            PERFORM {expr};
        END $$"""


def run(expr, cancel, delay):
    a = psycopg.connect(autocommit=True)
    b = psycopg.connect(autocommit=True)
    pid = a.info.backend_pid
    a.execute(f"SELECT pg_advisory_lock({LOCK})")
    result = {}

    def canceller():
        b.execute(f"SELECT pg_advisory_lock({LOCK})")  # A is about to call
        result["start"] = time.monotonic()
        if cancel:
            time.sleep(delay)
            result["cancel"] = time.monotonic()
            try:
                # what pg_cancel_backend does, without the latency of a
                # query on a busy machine
                os.kill(pid, signal.SIGINT)
            except (PermissionError, ProcessLookupError):
                b.execute(f"SELECT pg_cancel_backend({pid})")
        b.execute(f"SELECT pg_advisory_unlock({LOCK})")

    t = threading.Thread(target=canceller)
    t.start()
    try:
        a.execute(statement(expr.format(n=N)))
        result["error"] = None
    except psycopg.errors.QueryCanceled as e:
        result["error"] = e
    end = time.monotonic()
    t.join()
    a.close()
    b.close()
    if cancel:
        if result["error"] is None:
            return None  # finished before the cancel came
        return end - result["cancel"]
    return end - result["start"]


def main():
    for name, expr in CASES.items():
        full = run(expr, cancel=False, delay=0)
        # cancel in the middle of the call, whatever the machine's load
        lats = [run(expr, cancel=True, delay=full / 3) for _ in range(3)]
        lats = sorted(x for x in lats if x is not None)
        lat = lats[len(lats) // 2] if lats else None
        each = ",".join(str(round(x * 1000)) for x in lats)
        print(f"{name}\t{'' if lat is None else round(lat * 1000)}\t{round(full * 1000)}\t{each}", flush=True)


if __name__ == "__main__":
    main()
