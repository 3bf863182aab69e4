# the join pre-filter (bloomfilter.join_filter) and the scan guards
# (bloomfilter.guard_scans, off in the baseline run): test/join_diff.py runs
# generated joins (inner, semi, anti, outer, three tables, rescans, cursors,
# prepared statements; random join methods, work_mem, parallel query) with
# the filter off, on and auto, and the rows must be the same; at least a
# fifth of the eligible joins must get a filter.  Then fixed cases: an index
# dropped under a prepared statement, CREATE INDEX CONCURRENTLY (and one
# cancelled), auto where it pays, REPEATABLE READ snapshots older than
# another session's inserts, deletes with REINDEX, HOT updates with CREATE
# INDEX.  Skipped (77) while the library has no such setting.
# BF_JOIN_QUERIES: how many queries (default 400; 3000 with BF_LONG=1, the
# longer run of CI and run-all.sh --all); BF_JOIN_SEED: the seed
# (default a random one, printed: a failure names it and the query);
# BF_JOIN_ARGS: more arguments (--self-test: the filter off in both runs,
# a check of the harness itself)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
t0=$(date +%s)
args=(--queries "${BF_JOIN_QUERIES:-$([ "${BF_LONG:-0}" = 1 ] && echo 3000 || echo 400)}")
[ -n "${BF_JOIN_SEED:-}" ] && args+=(--seed "$BF_JOIN_SEED")
# shellcheck disable=SC2206 # words, on purpose
[ -n "${BF_JOIN_ARGS:-}" ] && args+=(${BF_JOIN_ARGS})
# a skip leaves pg_virtualenv with status 0 (it prints the server's log
# after a command that fails) and is told through a file
skipped="$(mktemp)"
trap 'rm -f "$skipped"' EXIT
# shellcheck disable=SC2016 # expanded by the inner bash
pg_virtualenv bash -c '/usr/bin/python3 test/join_diff.py "$@"; rc=$?
	[ $rc -eq 77 ] && { echo 77 >"$0"; exit 0; }; exit $rc' "$skipped" "${args[@]}"
rc=$?
[ $rc -eq 0 ] && [ -s "$skipped" ] && rc=77
echo "join-filter: $(($(date +%s) - t0)) s"
exit $rc
