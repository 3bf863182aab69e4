#!/usr/bin/env python3
"""Randomized stress of the filters kept in sync with tables: concurrent
writers of every kind, online rebuilds started at random moments (and by
the rebuild worker), lookups and change-set readers, optionally an
immediate shutdown in the middle; then every row of every table is checked
against its filter, on the server and by the clients: no false negative.

    python3 test/stress.py [--seed N] [--seconds S] [--writers W] [--crash]

The seed (printed; BF_STRESS_SEED) fixes every random choice of every
thread; the interleaving is the machine's.  Runs its own cluster (initdb in
a temporary directory, the extension preloaded for its rebuild worker), so
it must not run as root.  --tape FILE writes what the change-set readers
received and the keys to check, for the Go and JavaScript clients
(clients/go/stress_tape_test.go, clients/js/test/e2e/stress-tape.test.js).  Exits 1 on any false negative.

What runs, on tables of three kinds of filter kept by the trigger method
(plain, growing, a partitioned table), two kept by bloomfilter indexes
(plain, growing) and a bf_sync_into target:

- writers: single rows, batches, COPY, UPDATE of the key, DELETE, several
  statements in one transaction; each transaction committed, rolled back,
  with savepoints rolled back or released, or prepared (two-phase) and
  later committed or rolled back by another session;
- a rebuilder: bf_rebuild(..., concurrently => true) at the same size,
  into a new capacity, of the growing filter (compacted), REINDEX INDEX
  CONCURRENTLY, now and then an offline bf_rebuild; the rebuild worker
  (bloomfilter.auto_rebuild, naptime 1 s) rebuilds what falls due;
- readers: every row of a table checked against its filter while all this
  goes on (a committed row must be found at once);
- change-set readers: a copy of each filter kept with bf_tracked_changes.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "clients", "python", "src"))

import psycopg  # noqa: E402
from pgbloomfilter import BloomFilter  # noqa: E402
from pgbloomfilter.errors import PatchError  # noqa: E402
from pgbloomfilter.patch import apply_patch  # noqa: E402

# table -> how its filter is kept
TRACKED = ["s_plain", "s_grow", "s_part", "s_idx", "s_gidx"]
TRIGGER = ["s_plain", "s_grow", "s_part"]
INDEXED = {"s_idx": "s_idx_k_bf", "s_gidx": "s_gidx_k_bf"}
GROUPS = 20

SETUP = """
CREATE EXTENSION bloomfilter;
CREATE TABLE s_plain (id bigserial PRIMARY KEY, k text);
CREATE TABLE s_grow (id bigserial PRIMARY KEY, k text);
CREATE TABLE s_part (id bigserial, k text) PARTITION BY HASH (id);
CREATE TABLE s_part_0 PARTITION OF s_part FOR VALUES WITH (MODULUS 3, REMAINDER 0);
CREATE TABLE s_part_1 PARTITION OF s_part FOR VALUES WITH (MODULUS 3, REMAINDER 1);
CREATE TABLE s_part_2 PARTITION OF s_part FOR VALUES WITH (MODULUS 3, REMAINDER 2);
CREATE TABLE s_idx (id bigserial PRIMARY KEY, k text);
CREATE TABLE s_gidx (id bigserial PRIMARY KEY, k text);
INSERT INTO s_plain (k) SELECT 'pre-' || g FROM generate_series(1, %(big)d) g;
INSERT INTO s_part (k) SELECT 'pre-' || g FROM generate_series(1, %(pre)d) g;
INSERT INTO s_idx (k) SELECT 'pre-' || g FROM generate_series(1, %(pre)d) g;
SELECT bf_track('s_plain', 'k', %(big)d, 0.05, 'trigger');
SELECT bf_track('s_grow', 'k', NULL, 0.01, 'trigger');
SELECT bf_track('s_part', 'k', %(cap)d, 0.05, 'trigger');
SELECT bf_track('s_idx', 'k', %(cap)d, 0.05, 'index');
DELETE FROM s_plain WHERE id %% 6 <> 0;
DELETE FROM s_part WHERE id %% 3 = 0;
DELETE FROM s_idx WHERE id %% 3 = 0;
CREATE INDEX s_gidx_k_bf ON s_gidx USING bloomfilter (k) WITH (capacity = 1000, growth = 2);
SELECT bf_track('s_gidx', 'k', NULL, 0.01, 'index');
CREATE TABLE s_grp (grp int PRIMARY KEY, f bloomfilter);
INSERT INTO s_grp SELECT g, NULL FROM generate_series(1, %(groups)d) g;
CREATE TABLE s_src (id bigserial PRIMARY KEY, grp int, v text);
CREATE TRIGGER s_src_sync AFTER INSERT ON s_src REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into('s_grp', 'grp', 'f', 'grp', 'v', 2000, 0.01);
"""


def log(msg):
    print("stress: [%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class Cluster:
    """A cluster of our own in a temporary directory, on a Unix socket."""

    def __init__(self, bindir, workdir):
        self.bindir = bindir
        self.data = os.path.join(workdir, "data")
        self.sock = workdir
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.logfile = os.path.join(workdir, "server.log")
        self.conninfo = "host=%s port=%d dbname=postgres" % (self.sock, self.port)

    def run(self, *args):
        subprocess.run([os.path.join(self.bindir, args[0])] + list(args[1:]),
                       check=True, stdout=subprocess.DEVNULL)

    def init(self):
        self.run("initdb", "-D", self.data, "-A", "trust", "-N", "--locale=C", "-E", "UTF8")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("listen_addresses = ''\n"
                    "unix_socket_directories = '%s'\n"
                    "port = %d\n"
                    "fsync = off\n"
                    "max_connections = 60\n"
                    "max_prepared_transactions = 30\n"
                    "shared_preload_libraries = 'bloomfilter'\n"
                    "bloomfilter.auto_rebuild = on\n"
                    "bloomfilter.auto_rebuild_naptime = 1\n"
                    "bloomfilter.auto_rebuild_database = 'postgres'\n"
                    "deadlock_timeout = 100ms\n"
                    "log_min_messages = log\n" % (self.sock, self.port))

    def start(self):
        self.run("pg_ctl", "-D", self.data, "-l", self.logfile, "-w", "-t", "600", "start")

    def stop(self, mode="fast"):
        self.run("pg_ctl", "-D", self.data, "-m", mode, "-w", "-t", "600", "stop")

    def connect(self):
        return psycopg.connect(self.conninfo, autocommit=True)


class Stop(Exception):
    pass


class Run:
    """What every thread shares: the cluster, the clock, the tallies."""

    def __init__(self, args, cluster):
        self.args = args
        self.cluster = cluster
        self.deadline = time.time() + args.seconds
        self.stopping = threading.Event()
        self.down = threading.Event()       # the server is being crashed
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = []
        self.writers_done = threading.Event()
        self.gid = 0

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, what):
        with self.lock:
            self.failures.append(what)
        log("FAILURE: " + what)

    def connect(self):
        """A connection, waiting out a crash of the server."""
        while True:
            if self.stopping.is_set() and self.down.is_set():
                raise Stop()
            try:
                return self.cluster.connect()
            except psycopg.OperationalError:
                time.sleep(0.2)


class Worker(threading.Thread):
    """A thread with its own random stream and connection, reconnecting
    after a crash; step() does one unit of work."""

    def __init__(self, run, name, seed):
        super().__init__(name=name, daemon=True)
        self.run_ = run
        self.rnd = random.Random(seed)
        self.conn = None

    def step(self):
        raise NotImplementedError

    def until(self):
        return time.time() < self.run_.deadline

    def run(self):
        try:
            while self.until():
                if self.conn is None or self.conn.closed or self.conn.broken:
                    self.conn = self.run_.connect()
                try:
                    self.step()
                except psycopg.Error as e:
                    if self.conn.broken or self.conn.closed:
                        self.run_.count("connections lost")
                        self.conn.close()
                        self.conn = None
                        continue
                    self.error(e)
                    try:
                        self.conn.execute("ROLLBACK")
                    except psycopg.Error:
                        self.conn = None
        except Stop:
            pass
        except Exception:
            self.run_.fail("%s crashed:\n%s" % (self.name, traceback.format_exc()))
        finally:
            if self.conn is not None:
                self.conn.close()

    def error(self, e):
        # a serialization failure or a deadlock is the writer's to retry
        state = e.sqlstate or ""
        if state in ("40001", "40P01", "55P03"):
            self.run_.count("retryable errors (%s)" % state)
        else:
            self.run_.fail("%s: unexpected error %s: %s" % (self.name, state, e))


class Writer(Worker):
    """Random transactions of random statements on random tables."""

    def __init__(self, run, n, seed):
        super().__init__(run, "writer-%d" % n, seed)
        self.n = n
        self.seq = 0

    def key(self):
        self.seq += 1
        return "w%d-%d-%d" % (self.n, self.seq, self.rnd.randrange(1 << 40))

    def statement(self):
        r = self.rnd
        c = self.conn
        table = r.choice(TRACKED + ["s_src"])
        op = r.choices(["single", "batch", "copy", "update", "delete"], [40, 20, 10, 15, 15])[0]
        if table == "s_src":
            if op in ("update", "delete"):
                op = "batch"
            rows = [(r.randint(1, GROUPS), self.key()) for _ in range(1 if op == "single" else r.randint(2, 40))]
            if op == "copy":
                with c.cursor().copy("COPY s_src (grp, v) FROM STDIN") as cp:
                    for row in rows:
                        cp.write_row(row)
            else:
                c.execute("INSERT INTO s_src (grp, v) SELECT * FROM unnest(%s::int[], %s::text[])",
                          ([g for g, _ in rows], [v for _, v in rows]))
        elif op == "single":
            c.execute("INSERT INTO %s (k) VALUES (%%s)" % table, (self.key(),))
        elif op == "batch":
            c.execute("INSERT INTO %s (k) SELECT unnest(%%s::text[])" % table,
                      ([self.key() for _ in range(r.randint(2, 50))],))
        elif op == "copy":
            with c.cursor().copy("COPY %s (k) FROM STDIN" % table) as cp:
                for _ in range(r.randint(10, 300)):
                    cp.write_row((self.key(),))
        elif op == "update":
            # a new key for a few recent rows (the old key's bits stay)
            c.execute("UPDATE %s SET k = k || '-u' || %%s WHERE id IN "
                      "(SELECT id FROM %s ORDER BY id DESC OFFSET %%s LIMIT %%s)" % (table, table),
                      (r.randrange(1000), r.randrange(200), r.randint(1, 5)))
        else:
            c.execute("DELETE FROM %s WHERE id IN (SELECT id FROM %s ORDER BY id DESC "
                      "OFFSET %%s LIMIT %%s)" % (table, table),
                      (r.randrange(3000), r.randint(1, 30)))
        self.run_.count("statements")

    def step(self):
        r = self.rnd
        c = self.conn
        how = r.choices(["commit", "rollback", "savepoint", "2pc"], [70, 10, 12, 8])[0]
        level = r.choices(["READ COMMITTED", "REPEATABLE READ"], [85, 15])[0]
        c.execute("BEGIN ISOLATION LEVEL " + level)
        for i in range(r.choices([1, 2, 3, 4], [60, 20, 10, 10])[0]):
            if how == "savepoint" and i == 0:
                self.statement()
                c.execute("SAVEPOINT a")
                self.statement()
                c.execute(r.choice(["ROLLBACK TO SAVEPOINT a", "RELEASE SAVEPOINT a"]))
            self.statement()
            if r.random() < 0.3:
                time.sleep(r.random() * 0.05)
        if how == "rollback":
            c.execute("ROLLBACK")
            self.run_.count("rolled back")
        elif how == "2pc":
            with self.run_.lock:
                self.run_.gid += 1
                gid = "stress-%d" % self.run_.gid
            c.execute("PREPARE TRANSACTION '%s'" % gid)
            self.run_.count("prepared")
        else:
            c.execute("COMMIT")
            self.run_.count("committed")


class Hammer(Writer):
    """Single rows and batches of 20 in transactions of their own, as fast
    as they go (as pgbench would): the writes that land while a rebuild
    reads the table."""

    def step(self):
        table = self.rnd.choice(TRACKED)
        n = 20 if self.rnd.random() < 0.1 else 1
        self.conn.execute("INSERT INTO %s (k) SELECT unnest(%%s::text[])" % table,
                          ([self.key() for _ in range(n)],))
        self.run_.count("statements in transactions of their own")


class Resolver(Worker):
    """Commits or rolls back the prepared transactions, each some time
    after its PREPARE, from its own session.  It goes by what the server
    lists, not by what writers were told: a PREPARE whose answer a crash
    cut off is prepared all the same, and until it is resolved its locks
    hold up every online rebuild.  It stops once every writer has."""

    def until(self):
        return not self.run_.writers_done.is_set() or self.left > 0

    left = 0

    def step(self):
        rows = self.conn.execute(
            "SELECT gid, extract(epoch FROM now() - prepared) FROM pg_prepared_xacts "
            "WHERE gid LIKE 'stress-%'").fetchall()
        self.left = len(rows)
        for gid, age in rows:
            # each its own delay and outcome, from the seed and its name
            r = random.Random("%d %s" % (self.run_.args.seed, gid))
            if float(age) < r.random() * 0.3 and not self.run_.writers_done.is_set():
                continue
            commit = r.random() < 0.8
            try:
                self.conn.execute("%s PREPARED '%s'" % ("COMMIT" if commit else "ROLLBACK", gid))
                self.run_.count("prepared and %s" % ("committed" if commit else "rolled back"))
            except psycopg.errors.UndefinedObject:
                pass
        time.sleep(0.05)


class Rebuilder(Worker):
    """Online rebuilds of a random filter at random moments."""

    def step(self):
        r = self.rnd
        time.sleep(r.uniform(0.1, 1.5))
        table = r.choice(TRACKED)
        if table in INDEXED:
            what = "REINDEX INDEX CONCURRENTLY"
            self.conn.execute("REINDEX INDEX CONCURRENTLY %s" % INDEXED[table])
        elif r.random() < 0.08:
            what = "bf_rebuild offline"
            self.conn.execute("SELECT bf_rebuild(%s, 'k')", (table,))
        elif table == "s_grow":
            what = "bf_rebuild concurrently, growing (compacted)"
            self.conn.execute("SELECT bf_rebuild(%s, 'k', concurrently => true)", (table,))
        elif r.random() < 0.6:
            what = "bf_rebuild concurrently, same size"
            self.conn.execute("SELECT bf_rebuild(%s, 'k', concurrently => true)", (table,))
        else:
            # about as full as before: the catch-up is tested where keys collide
            what = "bf_rebuild concurrently, new capacity"
            pre = self.run_.args.pre * (6 if table == "s_plain" else 1)
            self.conn.execute("SELECT bf_rebuild(%s, 'k', %s, concurrently => true)",
                              (table, r.choice([pre * 9 // 10, pre, pre * 11 // 10])))
        self.run_.count(what)
        # at once, before a later rebuild could mend what this one lost
        missing = [row[0] for row in self.conn.execute(membership_sql(table))]
        if missing:
            self.run_.fail("after %s: %d rows of %s not in its filter: %s"
                           % (what, len(missing), table, missing[:10]))

    def error(self, e):
        # replaced by another rebuild, TRUNCATE or DDL meanwhile: try again later
        if e.sqlstate in ("40001", "40P01", "55P03"):
            self.run_.count("rebuilds that gave way (%s)" % e.sqlstate)
        else:
            super().error(e)


def membership_sql(table):
    if table == "s_src":
        return ("SELECT s.v FROM s_src s JOIN s_grp g USING (grp) "
                "WHERE g.f IS NULL OR NOT bf_contains(g.f, s.v)")
    return "SELECT k FROM %s WHERE NOT bf_might_contain('%s', 'k', k)" % (table, table)


class Reader(Worker):
    """Checks every row of a random table against its filter, live: a row
    the statement sees was committed before it, so its key must be found."""

    def step(self):
        table = self.rnd.choice(TRACKED + ["s_src"])
        try:
            missing = [row[0] for row in self.conn.execute(membership_sql(table))]
        except psycopg.errors.ObjectNotInPrerequisiteState:
            # e.g. no valid index for a moment in REINDEX CONCURRENTLY's swap
            self.run_.count("lookups refused (55000)")
            return
        self.run_.count("live checks of a whole table")
        if missing:
            self.run_.fail("live: %d rows of %s not in its filter: %s"
                           % (len(missing), table, missing[:10]))
        time.sleep(self.rnd.uniform(0, 0.3))


class ChangeReader(Worker):
    """A client's copy of each tracked filter, kept with bf_tracked_changes;
    every answer is recorded (the tape), for the other clients to replay."""

    def __init__(self, run, seed):
        super().__init__(run, "change-reader", seed)
        self.copies = {t: None for t in TRACKED}
        self.since = {t: None for t in TRACKED}
        self.tape = {t: [] for t in TRACKED}

    def changes(self, table, since):
        return self.conn.cursor(binary=True).execute(
            "SELECT next_lsn::text, full_refresh, patch FROM bf_tracked_changes(%s, 'k', %s::pg_lsn)",
            (table, since)).fetchone()

    def record(self, table, since, row, fits):
        self.tape[table].append({"since": since, "next": row[0], "full": bool(row[1]),
                                 "patch": bytes(row[2]).hex(), "fits": fits})

    def refresh(self, table):
        """As the clients' refreshers: a change set that does not fit the
        copy (a growing index that added a layer) makes them fetch it all."""
        since = self.since[table]
        row = self.changes(table, since)
        try:
            self.copies[table] = apply_patch(self.copies[table], bytes(row[2]))
        except PatchError:
            self.run_.count("change sets that did not fit (then fetched whole)")
            self.record(table, since, row, False)
            since = None
            row = self.changes(table, since)
            self.copies[table] = apply_patch(None, bytes(row[2]))
        self.record(table, since, row, True)
        self.since[table] = row[0]
        self.run_.count("change sets read" + (" (full)" if row[1] else ""))

    def step(self):
        try:
            self.refresh(self.rnd.choice(TRACKED))
        except psycopg.errors.ObjectNotInPrerequisiteState:
            self.run_.count("change sets refused (55000)")
        time.sleep(self.rnd.uniform(0, 0.2))


class Crasher(Worker):
    """An immediate shutdown at a random moment, then recovery."""

    def run(self):
        at = time.time() + self.rnd.uniform(0.3, 0.7) * self.run_.args.seconds
        while time.time() < at:
            time.sleep(0.1)
        log("immediate shutdown")
        self.run_.down.set()
        self.run_.cluster.stop("immediate")
        time.sleep(self.rnd.uniform(0.2, 1.0))
        self.run_.cluster.start()
        self.run_.down.clear()
        log("recovered")
        self.run_.count("crashes")


def check(run, reader, tape_path):
    """Every row of every table against its filter: the server's answer,
    the whole filter read by the Python client, the change-set copy."""
    conn = run.cluster.connect()
    failed = 0
    tape = {"seed": run.args.seed, "filters": {}}
    for table in TRACKED + ["s_src"]:
        missing = [row[0] for row in conn.execute(membership_sql(table))]
        if table == "s_src":
            rows = conn.execute("SELECT count(*) FROM s_src").fetchone()[0]
            print("check %-8s %7d rows: bf_sync_into's group filters miss %d" % (table, rows, len(missing)))
            failed += bool(missing)
            continue
        keys = [row[0] for row in conn.execute("SELECT k FROM %s" % table)]
        raw = bytes(conn.cursor(binary=True).execute(
            "SELECT bf_tracked_filter(%s, 'k')::bytea", (table,)).fetchone()[0])
        whole = BloomFilter(raw)
        miss_whole = sum(1 for k in keys if not whole.contains(k))
        reader.conn = conn
        reader.refresh(table)
        copy = BloomFilter(bytes(reader.copies[table]))
        miss_copy = sum(1 for k in keys if not copy.contains(k))
        print("check %-8s %7d rows: bf_might_contain misses %d, bf_tracked_filter (Python) %d, "
              "change-set copy (Python, %d change sets) %d"
              % (table, len(keys), len(missing), miss_whole, len(reader.tape[table]), miss_copy))
        if missing:
            print("  missing, e.g.:", missing[:10])
        failed += bool(missing) + bool(miss_whole) + bool(miss_copy)
        tape["filters"][table] = {"changes": reader.tape[table], "whole": raw.hex(), "keys": keys}
    conn.close()
    if tape_path:
        with open(tape_path, "w") as f:
            json.dump(tape, f)
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("BF_STRESS_SEED") or random.randrange(1 << 31)))
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("BF_STRESS_SECONDS", 60)))
    ap.add_argument("--writers", type=int, default=6)
    ap.add_argument("--pre", type=int, default=50000, help="rows in each table at the start")
    ap.add_argument("--crash", action="store_true", help="an immediate shutdown in the middle")
    ap.add_argument("--tape", help="write the change sets and keys here (JSON)")
    ap.add_argument("--bindir", default=subprocess.run(["pg_config", "--bindir"], check=True,
                                                       capture_output=True, text=True).stdout.strip())
    ap.add_argument("--keep", action="store_true", help="keep the cluster's directory")
    args = ap.parse_args()
    if os.geteuid() == 0:
        sys.exit("stress: PostgreSQL does not run as root; run as another user")
    log("seed %d, %g s, %d writers%s (again: --seed %d)"
        % (args.seed, args.seconds, args.writers, ", a crash" if args.crash else "", args.seed))
    workdir = tempfile.mkdtemp(prefix="bf-stress.")
    cluster = Cluster(args.bindir, workdir)
    cluster.init()
    cluster.start()
    try:
        with cluster.connect() as c:
            c.execute(SETUP % {"pre": args.pre, "cap": args.pre, "big": 6 * args.pre, "groups": GROUPS})
        run = Run(args, cluster)
        master = random.Random(args.seed)
        reader = ChangeReader(run, master.randrange(1 << 62))
        threads = [Writer(run, i, master.randrange(1 << 62)) for i in range(args.writers)]
        threads += [Hammer(run, args.writers + i, master.randrange(1 << 62)) for i in range(2)]
        threads += [Resolver(run, "resolver", master.randrange(1 << 62)),
                    Rebuilder(run, "rebuilder", master.randrange(1 << 62)),
                    Reader(run, "reader", master.randrange(1 << 62)), reader]
        if args.crash:
            threads.append(Crasher(run, "crasher", master.randrange(1 << 62)))
        for t in threads:
            t.start()
        for t in threads:
            if isinstance(t, Writer):
                t.join()
        run.writers_done.set()
        for t in threads:
            t.join()
        run.stopping.set()
        for what, n in sorted(run.counts.items()):
            print("  %-55s %d" % (what, n))
        with open(cluster.logfile) as f:
            started = [line for line in f if "bloomfilter: rebuilding" in line]
        print("  %-55s %d" % ("rebuilds started by the worker: indexes",
                              sum(1 for line in started if "rebuilding index" in line)))
        print("  %-55s %d" % ("rebuilds started by the worker: trigger filters",
                              sum(1 for line in started if "rebuilding the filter" in line)))
        failed = check(run, reader, args.tape) + len(run.failures)
    finally:
        cluster.stop("immediate")
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log("kept " + workdir)
    log("seed %d: %s" % (args.seed, "FAILED" if failed else "no false negative"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    main()
