#!/bin/bash
# Crash test of the bloomfilter index access method.
#
# In a private cluster (initdb as user postgres, private port and socket
# directory) with a streaming replica (on a replication slot, so that the
# WAL it needs is kept whatever the checkpoints do): several clients
# insert single rows (each its own transaction) into a table with a
# single-column and a two-column bloomfilter index and a growing one (capacity
# 2 000, growth 2: it grows layer after layer while the keys arrive and
# when the crash comes), two clients load
# batches in transactions of 20 000 and of 300 000 rows (the inserting
# backend buffers their keys and writes them page by page, when its
# buffer fills and before commit), a transaction is prepared, a CHECKPOINT
# happens mid-stream (so full-page images and generic-WAL deltas are
# replayed), then the postmaster is killed with SIGKILL.  After restart
# (crash recovery), every key whose INSERT had committed (psql printed its
# RETURNING row, or the line after the batch) must be reported present by
# bf_index_contains, on the primary and, after catch-up, on the replica,
# whose filter must be byte-identical to the primary's; so must the keys
# of the prepared transaction, committed after the restart.
#
# Needs the extension installed (make install).  Run as root or postgres.
# Usage: bash test/crash_test.sh    (BF_CRASH_PORT, BF_CRASH_SECONDS)
set -euo pipefail

BIN="$(pg_config --bindir)"
PORT="${BF_CRASH_PORT:-55471}"
RPORT=$((PORT + 1))
SECONDS_RUNNING="${BF_CRASH_SECONDS:-4}"
CLIENTS=4
DIR="$(mktemp -d /tmp/bf-crash.XXXXXX)"
chmod 755 "$DIR"
# psql and pg_ctl run as postgres from here (not from a root-only directory)
cd "$DIR"

as_pg() {
	if [ "$(id -un)" = postgres ]; then "$@"; else runuser -u postgres -- "$@"; fi
}
[ "$(id -un)" = postgres ] || chown postgres: "$DIR"
# the programs run as postgres start where they can read
cd "$DIR"

PRIMARY="$DIR/primary"
STANDBY="$DIR/standby"
cleanup() {
	as_pg "$BIN/pg_ctl" -D "$STANDBY" -m immediate stop >/dev/null 2>&1 || true
	as_pg "$BIN/pg_ctl" -D "$PRIMARY" -m immediate stop >/dev/null 2>&1 || true
	[ "${BF_CRASH_KEEP:-0}" = 1 ] || rm -rf "$DIR"
}
trap cleanup EXIT

psql_p() { as_pg "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -d postgres "$@"; }
psql_s() { as_pg "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$DIR" -p "$RPORT" -d postgres "$@"; }
fail() { echo "crash test: FAILED: $*"; exit 1; }
say() { echo "crash test: [$(date +%T)] $*"; }

as_pg "$BIN/initdb" -D "$PRIMARY" -A trust --no-sync >/dev/null
cat >>"$PRIMARY/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DIR'
fsync = off
shared_buffers = 16MB
max_wal_senders = 4
wal_level = replica
checkpoint_timeout = 30min
max_prepared_transactions = 4
EOF
echo "local replication all trust" >>"$PRIMARY/pg_hba.conf"
as_pg "$BIN/pg_ctl" -D "$PRIMARY" -l "$DIR/primary.log" -w start >/dev/null

psql_p -c "CREATE EXTENSION bloomfilter;
CREATE TABLE t (k text NOT NULL, n int NOT NULL);
INSERT INTO t SELECT 'pre' || g, g FROM generate_series(1, 1000) g;
CREATE INDEX t_k ON t USING bloomfilter (k) WITH (capacity = 4000000);
CREATE INDEX t_nk ON t USING bloomfilter (n, k) WITH (capacity = 4000000);
CREATE INDEX t_g ON t USING bloomfilter (k) WITH (capacity = 2000, growth = 2);"

# the replica, streaming from the primary through a replication slot (the
# primary keeps the WAL it has not received yet, however much the crash
# recovery writes)
as_pg "$BIN/pg_basebackup" -h "$DIR" -p "$PORT" -D "$STANDBY" -R -X stream -C -S bf_crash_standby \
	--checkpoint=fast >/dev/null
sed -i "s/^port = .*/port = $RPORT/" "$STANDBY/postgresql.conf"
as_pg "$BIN/pg_ctl" -D "$STANDBY" -l "$DIR/standby.log" -w start >/dev/null

# clients: one psql each, one INSERT per transaction; a printed row = committed
for c in $(seq 1 "$CLIENTS"); do
	as_pg bash -c "for i in \$(seq 1 200000); do
		echo \"INSERT INTO t VALUES ('c$c-' || \$i, \$i) RETURNING k || '|' || n;\"
	done | '$BIN/psql' -X -q -At -v ON_ERROR_STOP=1 -h '$DIR' -p $PORT -d postgres \
		>'$DIR/committed.$c' 2>'$DIR/client.$c.err'" &
done
# bulk loaders: a batch per transaction, its number printed once committed
for b in 20000 300000; do
	as_pg bash -c "for i in \$(seq 1 1000); do
		echo \"INSERT INTO t SELECT 'b$b-' || \$i || '-' || g, g FROM generate_series(1, $b) g;\"
		echo \"SELECT '$b|' || \$i;\"
	done | '$BIN/psql' -X -q -At -v ON_ERROR_STOP=1 -h '$DIR' -p $PORT -d postgres \
		>'$DIR/batches.$b' 2>'$DIR/bulk.$b.err'" &
done
# a prepared transaction, committed after the crash
psql_p -c "BEGIN; INSERT INTO t SELECT 'prepared-' || g, g FROM generate_series(1, 5000) g;
PREPARE TRANSACTION 'bf_crash';"
sleep $((SECONDS_RUNNING / 2))
psql_p -c "CHECKPOINT"
sleep $((SECONDS_RUNNING - SECONDS_RUNNING / 2))
PMPID="$(head -1 "$PRIMARY/postmaster.pid")"
# its children, from /proc (after the "(comm)" of stat: state, parent's pid)
CHILDREN="$(for f in /proc/[0-9]*/stat; do
	st="$(cat "$f" 2>/dev/null)" || continue
	set -- ${st##*) }
	if [ "${2:-}" = "$PMPID" ]; then echo "${st%% *}"; fi
done | tr '\n' ' ')"
kill -9 "$PMPID"
wait || true
committed="$(cat "$DIR"/committed.* | grep -c . || true)"
batches="$(cat "$DIR"/batches.* | grep -c . || true)"
say "killed the postmaster with $committed committed inserts from $CLIENTS clients and $batches committed batches"
[ "$committed" -gt 100 ] || fail "too few inserts before the crash ($committed)"
[ "$(grep -c . "$DIR/batches.20000" || true)" -gt 1 ] || fail "too few batches before the crash"
# kill -9 of the postmaster leaves its children running until they notice
for _ in $(seq 1 100); do
	alive=0
	for p in $CHILDREN; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ "$alive" = 0 ] && break
	sleep 0.2
done
say "children gone, restarting"
# the dead postmaster's pid file would make pg_ctl -w wait for its timeout
rm -f "$PRIMARY/postmaster.pid"
as_pg "$BIN/pg_ctl" -D "$PRIMARY" -l "$DIR/primary.log" -w start >/dev/null ||
	{ tail -30 "$DIR/primary.log"; fail "primary did not restart"; }
grep -q "redo done\|database system was not properly shut down" "$DIR/primary.log" ||
	fail "no crash recovery in the primary's log"
psql_p -c "COMMIT PREPARED 'bf_crash'"

cat "$DIR"/committed.* >"$DIR/keys"
chmod 644 "$DIR/keys"
VERIFY="CREATE TEMP TABLE keys (k text, n int);
\\copy keys FROM '$DIR/keys' (FORMAT text, DELIMITER '|')
SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', k)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(n, k))) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_g', k)) || ' ' ||
       (SELECT count(*) FROM keys LEFT JOIN t USING (k) WHERE t.k IS NULL) || ' ' || count(*)
FROM keys;"
read -r miss_k miss_nk miss_g miss_row total <<<"$(printf '%s\n' "$VERIFY" | psql_p -f -)"
say "primary after recovery: $total committed keys, missing from t_k: $miss_k, from t_nk: $miss_nk, from t_g: $miss_g, rows missing: $miss_row"
[ "$total" = "$committed" ] || fail "loaded $total keys, expected $committed"
[ "$miss_row" = 0 ] || fail "committed rows lost"
[ "$miss_k" = 0 ] && [ "$miss_nk" = 0 ] && [ "$miss_g" = 0 ] || fail "committed keys missing from the filter"
layers="$(psql_p -c "SELECT count(*) FROM bf_layers(bf_index_filter('t_g'))")"
say "the growing index has $layers layers"
[ "$layers" -gt 3 ] || fail "the growing index did not grow ($layers layers)"
# the pre-existing rows too
pre="$(psql_p -c "SELECT count(*) FROM generate_series(1, 1000) g WHERE NOT bf_index_contains('t_k', 'pre' || g)")"
[ "$pre" = 0 ] || fail "$pre keys of the index build missing"
# the committed batches and the prepared transaction
cat "$DIR"/batches.* >"$DIR/batches"
chmod 644 "$DIR/batches"
VERIFY_BATCHES="CREATE TEMP TABLE batches (size int, i int);
\\copy batches FROM '$DIR/batches' (FORMAT text, DELIMITER '|')
SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', 'b' || size || '-' || i || '-' || g)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(g, 'b' || size || '-' || i || '-' || g))) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_g', 'b' || size || '-' || i || '-' || g)) || ' ' ||
       count(*)
FROM batches, generate_series(1, size) g;"
read -r miss_k miss_nk miss_g total <<<"$(printf '%s\n' "$VERIFY_BATCHES" | psql_p -f -)"
say "primary after recovery: $total keys of committed batches, missing from t_k: $miss_k, from t_nk: $miss_nk, from t_g: $miss_g"
[ "$miss_k" = 0 ] && [ "$miss_nk" = 0 ] && [ "$miss_g" = 0 ] || fail "keys of committed batches missing from the filter"
prep="$(psql_p -c "SELECT count(*) FROM generate_series(1, 5000) g
	WHERE NOT bf_index_contains('t_k', 'prepared-' || g) OR NOT bf_index_contains('t_nk', ROW(g, 'prepared-' || g))
	   OR NOT bf_index_contains('t_g', 'prepared-' || g)")"
say "prepared transaction committed after recovery: $prep of its 5000 keys missing"
[ "$prep" = 0 ] || fail "keys of the prepared transaction missing"

# the replica catches up and answers the same
psql_p -c "CHECKPOINT"
target="$(psql_p -c "SELECT pg_current_wal_lsn()")"
for _ in $(seq 1 150); do
	caught="$(psql_s -c "SELECT pg_last_wal_replay_lsn() >= '$target'::pg_lsn")" || caught=f
	[ "$caught" = t ] && break
	sleep 0.2
done
[ "$caught" = t ] || { tail -20 "$DIR/standby.log"; fail "replica did not catch up"; }
# a replica cannot load the key list: check every row of t (a superset of
# the committed keys, as checked on the primary) and the row count
VERIFY_ROWS="SELECT count(*) FILTER (WHERE NOT bf_index_contains('t_k', k)) || ' ' ||
       count(*) FILTER (WHERE NOT bf_index_contains('t_nk', ROW(n, k)) OR NOT bf_index_contains('t_g', k)) || ' ' ||
       count(*) FROM t"
read -r miss_k miss_nk total <<<"$(psql_p -c "$VERIFY_ROWS")"
read -r miss_k_s miss_nk_s total_s <<<"$(psql_s -c "$VERIFY_ROWS")"
say "rows of t: primary $total (missing from t_k: $miss_k, t_nk: $miss_nk), replica $total_s (missing: $miss_k_s, $miss_nk_s)"
[ "$total" = "$total_s" ] || fail "replica has $total_s rows, primary $total"
[ "$miss_k$miss_nk$miss_k_s$miss_nk_s" = 0000 ] || fail "keys missing from a filter"
hp="$(psql_p -c "SELECT md5(bf_index_filter('t_k')::bytea) || md5(bf_index_filter('t_nk')::bytea) || md5(bf_index_filter('t_g')::bytea)")"
hs="$(psql_s -c "SELECT md5(bf_index_filter('t_k')::bytea) || md5(bf_index_filter('t_nk')::bytea) || md5(bf_index_filter('t_g')::bytea)")"
[ "$hp" = "$hs" ] || fail "replica's filters differ from the primary's"
say "replica filters identical to the primary's"
echo "crash test: ok"
