#!/bin/bash
# An online rebuild of a trigger-tracked filter under concurrent writers:
# false negatives and the rate of deleted keys after it.  The table gets
# ROWS keys, is tracked at that capacity, and loses half of them; then, for
# each of RUNS runs, pgbench's WRITERS clients insert new keys (nine in ten
# statements a single row, else 20) for SECS seconds while
# bf_rebuild(..., concurrently => true) runs once (SHAPE same: at the same
# size; new: into 1.5 x the capacity), and afterwards every row is looked
# up and the deleted keys' rate measured.  Before each run another tenth of
# the original keys is deleted, so that every rebuild has deleted keys to
# drop, and the previous run's new rows, so that the table stays within
# the filter's capacity.  After each writer count, the same rate after an
# offline bf_rebuild with no writers: what the online ones should match.
# In a throwaway cluster (pg_virtualenv); as root, as postgres.
#
#   WRITERS="1 4 8" RUNS=20 bash bench/rebuild_writes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then
	exec runuser -u postgres -- env ROWS="${ROWS:-}" WRITERS="${WRITERS:-}" RUNS="${RUNS:-}" \
		SECS="${SECS:-}" SHAPE="${SHAPE:-}" PATH="/usr/bin:/bin:$PATH" bash "$0"
fi
ROWS="${ROWS:-2000000}"
WRITERS="${WRITERS:-1 4 8}"
RUNS="${RUNS:-20}"
SECS="${SECS:-6}"
SHAPE="${SHAPE:-same}"
work="$(mktemp -d /tmp/bf-rebuild-writes.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cat >"$work/insert.sql" <<'SQL'
\set r random(1, 10)
\if :r = 1
INSERT INTO u(k) SELECT 'new-' || :client_id || '-' || (random() * 1e12)::bigint FROM generate_series(1, 20);
\else
INSERT INTO u(k) VALUES ('new-' || :client_id || '-' || (random() * 1e12)::bigint);
\endif
SQL
# shellcheck disable=SC2016
pg_virtualenv -o shared_buffers=512MB -o fsync=off bash -c '
set -euo pipefail
psql -qX -v ON_ERROR_STOP=1 <<SQL
CREATE EXTENSION bloomfilter;
CREATE TABLE u(id bigserial PRIMARY KEY, k text);
INSERT INTO u(k) SELECT '"'"'key'"'"' || g FROM generate_series(1, '"$ROWS"') g;
SELECT bf_track('"'"'u'"'"', '"'"'k'"'"', '"$ROWS"', 0.01, '"'"'trigger'"'"');
CREATE TABLE gone(k text);
WITH d AS (DELETE FROM u WHERE id % 2 = 0 RETURNING k) INSERT INTO gone SELECT k FROM d;
SQL
echo "writers run fn deleted_true deleted_keys rate rebuild_s"
for w in '"$WRITERS"'; do
	for run in $(seq 1 '"$RUNS"'); do
		psql -qXAt -c "WITH d AS (DELETE FROM u WHERE id <= '"$ROWS"' AND id % 10 = $((run % 10)) RETURNING k) INSERT INTO gone SELECT k FROM d" \
			-c "DELETE FROM u WHERE id > '"$ROWS"'" >/dev/null
		pgbench -n -c "$w" -j "$w" -T '"$SECS"' -f '"$work"'/insert.sql >/dev/null 2>&1 &
		pb=$!
		sleep 1
		if [ '"$SHAPE"' = same ]; then
			call="SELECT bf_rebuild('"'"'u'"'"', '"'"'k'"'"', concurrently => true)"
		else
			call="SELECT bf_rebuild('"'"'u'"'"', '"'"'k'"'"', (SELECT capacity * 3 / 2 FROM bf_tracked WHERE tbl = '"'"'u'"'"'::regclass), concurrently => true)"
		fi
		t0=$(date +%s.%N)
		psql -qXAt -c "$call" >/dev/null
		t1=$(date +%s.%N)
		wait $pb
		fn=$(psql -qXAt -c "SELECT count(*) FROM u WHERE NOT bf_might_contain('"'"'u'"'"', '"'"'k'"'"', k)")
		read -r dt dn < <(psql -qXAt -F" " -c "SELECT count(*) FILTER (WHERE bf_might_contain('"'"'u'"'"', '"'"'k'"'"', k)), count(*) FROM gone")
		echo "$w $run $fn $dt $dn $(python3 -c "print(round(100.0 * $dt / $dn, 3), round($t1 - $t0, 2))")"
	done
	psql -qXAt -c "SELECT bf_rebuild('"'"'u'"'"', '"'"'k'"'"')" >/dev/null
	read -r dt dn < <(psql -qXAt -F" " -c "SELECT count(*) FILTER (WHERE bf_might_contain('"'"'u'"'"', '"'"'k'"'"', k)), count(*) FROM gone")
	echo "$w offline - $dt $dn $(python3 -c "print(round(100.0 * $dt / $dn, 3))") -"
done
'
