#!/usr/bin/python3
"""Property test of sliding-window filters (bloomwindow) against exact models.

Needs a running server reachable through the libpq environment and `psql`:

    pg_virtualenv /usr/bin/python3 test/window_property.py [RUNS]

Each run draws window parameters and a sequence of adds at random times
(small steps, idle gaps of up to 20 windows, adds at older times, some
older than every slice kept), replays it in the server in one psql
session, and after every add asks about every key of the pool at several
times.  Two models judge every answer:

- an exact model of which keys the window remembers (the set of keys per
  slice) and of the guarantee of docs/FORMAT.md section 7.3: a key added at
  t is found at every t' with t <= t' < t + W (while nothing was added
  later than t + W), and is not found from t + W + W/N on unless by a false
  positive;
- an independent implementation of the format (test/window_reference.py),
  whose answers and bytes must equal the server's exactly; it also tells
  a false positive from a key wrongly kept.

At the end of each run: the text form equals the reference's, the
aggregate over the same adds equals the one-by-one window, and the union
of two windows built from a random split of the adds equals it too.
Prints one line per failure and a summary; exits 1 on any failure.
"""

import datetime
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402
import window_reference as wref  # noqa: E402

DB = "bf_window_property"
EPOCH = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
POOL = 120
STEPS = 200

failures = 0
stats = dict(probes=0, inside=0, expired=0, fp=0, empty=0)


def fail(msg):
    global failures
    failures += 1
    if failures <= 30:
        print("FAIL " + msg)


def psql(sql, db=DB):
    env = dict(os.environ, PGCLIENTENCODING="UTF8", PGOPTIONS="-c TimeZone=UTC")
    p = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-d", db, "-f", "-"], input=sql.encode(), capture_output=True,
                       env=env)
    if p.returncode != 0:
        raise RuntimeError("psql failed: %s" % p.stderr.decode()[-2000:])
    return p.stdout.decode()


def ts(us):
    """microseconds since 2000-01-01 UTC as a timestamptz literal"""
    return "'%s'" % (EPOCH + datetime.timedelta(microseconds=us)).isoformat()


class Run:
    """The random parameters of one run; its rng then draws the adds."""

    def __init__(self, seed):
        rng = self.rng = random.Random(seed)
        self.seed = seed
        self.n = rng.choice([1, 2, 3, 4, 5, 7, 8])
        self.s = rng.choice([1, 7, 1000, 1000000, 3600000000])
        self.w_us = self.n * self.s
        self.fpr = rng.choice([0.01, 0.001, 0.05])
        self.kseed = rng.randrange(-(1 << 63), 1 << 63)
        self.capacity = 200              # > POOL: each window holds <= capacity keys
        # around the epoch, so that slices of negative times are covered too
        self.start = rng.choice([0, -3 * self.w_us, 24 * 365 * 86400 * 1000000])
        self.create = "bf_window_create(interval '%d microseconds', %d, %r, %d, %d)" % (
            self.w_us, self.capacity, self.fpr, self.n, self.kseed)
        # the aggregate makes windows of seed 0: window 3 is its one-by-one twin
        self.create0 = "bf_window_create(interval '%d microseconds', %d, %r, %d)" % (
            self.w_us, self.capacity, self.fpr, self.n)

    def info_sql(self):
        return ("SELECT 'I|%d|' || nbits_per_slice / 512 || '|' || nhashes || '|' || slices "
                "|| '|' || extract(epoch FROM slice_width) * 1000000 FROM bf_window_info(%s);"
                % (self.seed, self.create))


def plan(run, nblocks, k):
    """The SQL of one run and what each of its answers must be."""
    rng, seed, n, s, w_us = run.rng, run.seed, run.n, run.s, run.w_us
    fpr, kseed, capacity, create, create0 = run.fpr, run.kseed, run.capacity, run.create, run.create0
    model = wref.Window.empty(n, s, capacity, fpr, nblocks, k, kseed)
    sql = ["DROP TABLE IF EXISTS s; CREATE TEMP TABLE s (id int, w bloomwindow);",
           "INSERT INTO s VALUES (0, %s), (1, %s), (2, %s), (3, %s);"
           % (create, create, create, create0)]
    adds = []          # (key, t, stored)
    times = {}         # key -> [(t, stored)]
    per_slice = {}     # slice -> set of keys the window must remember
    expected = {}      # (step, probe) -> what the models say
    now = run.start
    max_stored = None
    newest = None
    for step in range(STEPS):
        r = rng.random()
        if r < 0.6:
            now += rng.randrange(0, s + 1)
        elif r < 0.7:
            now += rng.randrange(w_us, 20 * w_us + 1)      # idle for up to 20 windows
        else:
            now += rng.randrange(0, 3 * s + 1)
        t = now
        r = rng.random()
        if r < 0.15:
            t = now - rng.randrange(0, w_us + 2 * s + 1)   # back in time, often kept
        elif r < 0.22:
            t = now - rng.randrange(w_us, 6 * w_us + 1)    # often older than every slice
        keys = [rng.randrange(POOL) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        half = rng.randrange(2) + 1
        if len(keys) == 1:
            sql.append("UPDATE s SET w = bf_window_add(w, %d, %s) WHERE id IN (0, 3, %d);"
                       % (keys[0], ts(t), half))
        else:
            sql.append("UPDATE s SET w = bf_window_add_all(w, ARRAY%r, %s) WHERE id IN (0, 3, %d);"
                       % (keys, ts(t), half))
        for key in keys:
            # the set model: a key is kept in its slice while that slice is
            # one of the N + 1 newest; older adds are ignored
            i = t // s
            stored = newest is None or i >= newest - n
            if stored:
                newest = i if newest is None else max(newest, i)
                for old in [x for x in per_slice if x < newest - n]:
                    del per_slice[old]
                per_slice.setdefault(i, set()).add(key)
                max_stored = t if max_stored is None else max(max_stored, t)
            if model.add_value(key, "integer", t) != stored:
                fail("run %d step %d: the reference model and the set model disagree"
                     % (seed, step))
            adds.append((key, t, stored))
            times.setdefault(key, []).append((t, stored))

        head = max_stored if max_stored is not None else now
        probes = [head, head + rng.randrange(-w_us - 2 * s, 2 * s + 1)]
        if rng.random() < 0.1:
            probes.append(head + rng.randrange(w_us, 20 * w_us + 1))
        for j, tp in enumerate(probes):
            sql.append("SELECT 'P|%d|%d|%d|' || string_agg(bf_window_contains(w, k, %s)::int::text, '' "
                       "ORDER BY k) FROM s, generate_series(0, %d) k WHERE id = 0;"
                       % (seed, step, j, ts(tp), POOL - 1))
            expected[(step, j)] = expectations(model, kseed, tp, times, per_slice,
                                               max_stored, n, s, w_us)
        if step % 25 == 24:
            sql.append("SELECT 'B|%d|%d|' || encode(w::bytea, 'hex') FROM s WHERE id = 0;"
                       % (seed, step))
            expected[("bytes", step)] = model.to_bytes().hex()

    rows = ", ".join("(%d, %s)" % (key, ts(t)) for key, t, _ in adds)
    sql.append("SELECT 'T|%d|' || w::text FROM s WHERE id = 0;" % seed)
    sql.append("SELECT 'A|%d|' || (bf_window_agg(k, t::timestamptz, interval '%d microseconds', "
               "%d, %r, %d) = (SELECT w FROM s WHERE id = 3))::text FROM (VALUES %s) v(k, t);"
               % (seed, w_us, capacity, fpr, n, rows))
    sql.append("SELECT 'U|%d|' || (((SELECT w FROM s WHERE id = 1) | (SELECT w FROM s WHERE id = 2)) = "
               "(SELECT w FROM s WHERE id = 0))::text;" % seed)
    return sql, expected, model


def check_output(seed, lines, expected, model):
    seen = set()
    for kind, rest in lines:
        if kind == "P":
            step, j, bits = rest.split("|")
            step, j = int(step), int(j)
            seen.add((step, j))
            check_probe(seed, step, j, bits, expected[(step, j)])
        elif kind == "B":
            step, hexbytes = rest.split("|")
            want = expected[("bytes", int(step))]
            if hexbytes != want:
                fail("run %d step %s: bytes differ from the reference model" % (seed, step))
            else:
                wref.parse(bytes.fromhex(hexbytes))    # and they pass the reader's checks
        elif kind == "T":
            if rest != model.to_text():
                fail("run %d: text form differs from the reference model" % seed)
        elif kind == "A":
            if rest != "true":
                fail("run %d: aggregate differs from one-by-one adds" % seed)
        elif kind == "U":
            if rest != "true":
                fail("run %d: union of the two halves differs from the whole" % seed)
    missing = set(k for k in expected if k[0] != "bytes") - seen
    if missing:
        fail("run %d: %d probes without an answer" % (seed, len(missing)))


# what a probe's answer must be, per key: the reference model's answer,
# and what the guarantee says of it
MUST_FIND, EXPIRED, NOTHING_NEAR = 1, 2, 4


def expectations(model, kseed, tp, times, per_slice, max_stored, n, s, w_us):
    i_now = tp // s
    live_keys = set()
    for i, keys in per_slice.items():
        if i_now - n <= i <= i_now:
            live_keys |= keys
    near = any(tp - w_us - s < t < tp + s and stored
               for ts_ in times.values() for t, stored in ts_)
    out = []
    for key in range(POOL):
        mine = times.get(key, [])
        flags = 0
        # no false negative inside the window (while nothing was added
        # later than t + W)
        if any(stored and t <= tp < t + w_us and max_stored <= t + w_us for t, stored in mine):
            flags |= MUST_FIND
        # gone from t + W + W/N on: found only as a false positive
        if all(t + w_us + s <= tp for t, _ in mine):
            flags |= EXPIRED
            if key in live_keys:
                flags |= 8      # the set model keeps an expired key: a bug
        if not near:
            flags |= NOTHING_NEAR
        out.append((model.contains(ref.hash_value(key, "integer", kseed), tp), flags))
    return tp, out


def check_probe(seed, step, j, bits, exp):
    tp, per_key = exp
    for key, (want, flags) in enumerate(per_key):
        got = bits[key] == "1"
        stats["probes"] += 1
        where = "run %d step %d probe %d key %d at %d" % (seed, step, j, key, tp)
        # the reference implementation of the format answers exactly as the server
        if got != want:
            fail("%s: server %s, reference model %s" % (where, got, want))
        if flags & MUST_FIND:
            stats["inside"] += 1
            if not got:
                fail("%s: added within the window but not found" % where)
        if flags & EXPIRED:
            stats["expired"] += 1
            stats["fp"] += got
        if flags & 8:
            fail("%s: expired but kept by the set model" % where)
        if flags & NOTHING_NEAR:
            stats["empty"] += 1
            if got:
                fail("%s: found with nothing stored near that time" % where)


def main():
    nruns = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    runs = [Run(seed) for seed in range(1, nruns + 1)]
    psql("DROP DATABASE IF EXISTS %s" % DB, db="postgres")
    psql("CREATE DATABASE %s" % DB, db="postgres")
    # the slots' size is the server's choice (not part of the format): ask it
    sizes = {}
    for line in psql("CREATE EXTENSION bloomfilter;\n" +
                     "\n".join(r.info_sql() for r in runs)).splitlines():
        _, seed, nblocks, k, n, s = line.split("|")
        sizes[int(seed)] = (int(nblocks), int(k), int(n), int(float(s)))
    plans = {}
    sql = []
    for r in runs:
        nblocks, k, n, s = sizes[r.seed]
        if (n, s) != (r.n, r.s):
            fail("run %d: server made %d slices of %d us, asked %d of %d" % (r.seed, n, s, r.n, r.s))
            continue
        rsql, expected, model = plan(r, nblocks, k)
        sql += rsql
        plans[r.seed] = (expected, model)
    # one session for every run: starting psql is slow on a busy machine
    out = {}
    for line in psql("\n".join(sql)).splitlines():
        kind, seed, rest = line.split("|", 2)
        out.setdefault(int(seed), []).append((kind, rest))
    for seed, (expected, model) in plans.items():
        check_output(seed, out.get(seed, []), expected, model)
    psql("DROP DATABASE %s" % DB, db="postgres")
    rate = stats["fp"] / stats["expired"] if stats["expired"] else 0.0
    print("window property: %d runs, %d answers checked against the reference model; "
          "%d inside the window (all found), %d expired (%d false positives, rate %.5f), "
          "%d with nothing stored near them (none found); %d failures"
          % (nruns, stats["probes"], stats["inside"], stats["expired"], stats["fp"], rate,
             stats["empty"], failures))
    # each window holds at most POOL < capacity keys: every run's rate is under its target
    if rate > 0.01:
        fail("false-positive rate %.4f of expired keys over the target" % rate)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
