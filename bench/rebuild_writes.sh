#!/bin/bash
# An online rebuild of a trigger-tracked filter under concurrent writers:
# false negatives and the rate of deleted keys after it.  Each run starts
# afresh: the table (tracked at capacity ROWS, 1 %) is emptied, gets ROWS
# keys and loses half of them; then pgbench's WRITERS clients insert new
# keys (nine in ten statements a single row, else 20) for SECS seconds,
# and one second in bf_rebuild(..., concurrently => true) runs (SHAPE same:
# at the same size; new: into 1.5 x the capacity).  Afterwards every row is
# looked up (false negatives: fn) and the deleted keys' rate measured.  For
# each writer count, one more run rebuilds offline with no writers: the
# rate the online ones should match.  In a throwaway cluster
# (pg_virtualenv); as root, as postgres.
#
#   WRITERS="1 4 8" RUNS=20 bash bench/rebuild_writes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
	exec runuser -u postgres -- env ROWS="${ROWS:-}" WRITERS="${WRITERS:-}" RUNS="${RUNS:-}" \
		SECS="${SECS:-}" SHAPE="${SHAPE:-}" PATH="/usr/bin:/bin:$PATH" bash "$0"
fi
export ROWS="${ROWS:-2000000}" WRITERS="${WRITERS:-1 4 8}" RUNS="${RUNS:-20}" SECS="${SECS:-6}" \
	SHAPE="${SHAPE:-same}"
work="$(mktemp -d /tmp/bf-rebuild-writes.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export work
cat >"$work/insert.sql" <<'SQL'
\set r random(1, 10)
\if :r = 1
INSERT INTO u(k) SELECT 'new-' || :client_id || '-' || (random() * 1e12)::bigint FROM generate_series(1, 20);
\else
INSERT INTO u(k) VALUES ('new-' || :client_id || '-' || (random() * 1e12)::bigint);
\endif
SQL
cat >"$work/run.sh" <<'SH'
set -euo pipefail
sql() { psql -qXAt -v ON_ERROR_STOP=1 "$@"; }
sql -c "CREATE EXTENSION bloomfilter" -c "CREATE TABLE u(id bigserial PRIMARY KEY, k text)" \
	-c "CREATE TABLE gone(k text)" -c "SELECT bf_track('u', 'k', $ROWS, 0.01, 'trigger')" >/dev/null
if [ "$SHAPE" = same ]; then
	online="SELECT bf_rebuild('u', 'k', concurrently => true)"
else
	online="SELECT bf_rebuild('u', 'k', (SELECT capacity * 3 / 2 FROM bf_tracked WHERE tbl = 'u'::regclass), concurrently => true)"
fi
echo "writers run fn live_rows deleted_found deleted_keys rate_pct rebuild_s"
for w in $WRITERS; do
	for run in $(seq 0 "$RUNS"); do
		# run 0: the offline rebuild with no writers, the baseline
		sql -c "TRUNCATE u, gone" -c "ALTER SEQUENCE u_id_seq RESTART" \
			-c "INSERT INTO u(k) SELECT 'key' || g FROM generate_series(1, $ROWS) g" \
			-c "WITH d AS (DELETE FROM u WHERE id % 2 = 0 RETURNING k) INSERT INTO gone SELECT k FROM d" \
			-c "VACUUM u" >/dev/null
		if [ "$run" = 0 ]; then
			t0=$(date +%s.%N)
			sql -c "SELECT bf_rebuild('u', 'k')" >/dev/null
			t1=$(date +%s.%N)
		else
			pgbench -n -c "$w" -j "$w" -T "$SECS" -f "$work/insert.sql" >/dev/null 2>&1 &
			pb=$!
			sleep 1
			t0=$(date +%s.%N)
			sql -c "$online" >/dev/null
			t1=$(date +%s.%N)
			wait $pb
		fi
		read -r fn live < <(sql -F" " -c "SELECT count(*) FILTER (WHERE NOT bf_might_contain('u', 'k', k)), count(*) FROM u")
		read -r dt dn < <(sql -F" " -c "SELECT count(*) FILTER (WHERE bf_might_contain('u', 'k', k)), count(*) FROM gone")
		echo "$w $([ "$run" = 0 ] && echo offline || echo "$run") $fn $live $dt $dn" \
			"$(awk -v a="$dt" -v b="$dn" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.3f %.2f", 100 * a / b, e - s }')"
	done
done
SH
pg_virtualenv -o shared_buffers=512MB -o fsync=off bash "$work/run.sh"
