#!/usr/bin/env bash
# bench/run.sh -- the one benchmark command.
#
#   make install && bash bench/run.sh [FILTER]
#
# Creates a throwaway PostgreSQL cluster with pg_virtualenv, runs every
# bench/scenarios/NN-*.sh in it (only those whose file name contains FILTER,
# e.g. "bash bench/run.sh 10"), prints a table of result rows and writes it,
# with the machine's description, to bench/results/latest.md.
#
# On a shared machine wrap it in the install lock (pg_virtualenv cannot run
# twice at once as root):  flock /tmp/bf-install.lock bash bench/run.sh
#
# Environment knobs (for quick iteration; the defaults are the real run):
#   BENCH_REPS      runs per timed statement, best kept (3)
#   BENCH_LOOKUPS   lookups per scan in 10-core (5000000)
#   BENCH_BIG_CAPACITY  capacity of the "100 MB" filter in 10-core (80000000)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v pg_virtualenv >/dev/null 2>&1; then
	echo "bench/run.sh: pg_virtualenv not found (Debian package postgresql-common)" >&2
	exit 1
fi
pgbin="$(pg_config --bindir)"
pgver="$("$pgbin/postgres" --version | sed 's/^[^)]*) \([0-9][0-9]*\).*/\1/')"

# Server settings: everything in memory, no parallelism (a worker would
# detoast the filter again and the 2-core machine would time the scheduler),
# no JIT (compilation time would be timed), no fsync (throwaway cluster),
# no checkpoint unless a scenario asks for one (one at a random moment
# would fill a timed run with full-page images; the WAL rows of
# 41-track-chunks checkpoint themselves).
exec pg_virtualenv -v "$pgver" \
	-o 'shared_buffers=1GB' \
	-o 'work_mem=1GB' \
	-o 'maintenance_work_mem=1GB' \
	-o 'max_parallel_workers_per_gather=0' \
	-o 'jit=off' \
	-o 'max_wal_size=8GB' \
	-o 'checkpoint_timeout=1h' \
	-o 'synchronous_commit=off' \
	-o 'autovacuum=off' \
	-o 'track_io_timing=off' \
	bash "$here/run-inner.sh" "$@"
