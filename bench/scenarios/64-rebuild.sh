# bench/scenarios/64-rebuild.sh -- rebuilding an index-tracked column online
# (REINDEX INDEX CONCURRENTLY of its bloomfilter index) against offline
# (bf_rebuild: a REINDEX that makes lookups wait)
#
# A table of ROWS bigint keys tracked with capacity ROWS at 1 %.  Rows:
#   1. online rebuild time ÷ offline rebuild time (target <= 1.5), the
#      online one under a steady load of single-row inserts and lookups
#      (pgbench, 1 client, two scripts of equal weight, every transaction's
#      latency logged)
#   2. the slowest lookup during the online rebuild (target <= 100 ms),
#      and inserts that failed (target 0)
#   3. after deleting half of the keys and an online rebuild: the rate of
#      absent keys ÷ the target 0.01 (target <= 1.1); keys missed (0)
#   4. the trigger method (a table of BENCH_REBUILD_TRIGGER_ROWS, 1 000 000):
#      the slowest single-row insert during bf_rebuild(..., concurrently =>
#      true) against during a plain bf_rebuild, which keeps writers out
#   5. a growing trigger filter grown from 1 000 to that many keys,
#      compacted online (writers log their keys for the rebuild): the
#      slowest insert, the rebuild's time against the same rebuild alone
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio, log).

PGBENCH="$(pg_config --bindir)/pgbench"
K="${BENCH_REBUILD_ROWS:-10000000}"
N="${BENCH_REBUILD_ABSENT:-1000000}"
B=1000000000000
work="$(mktemp -d /tmp/bf-bench64.XXXXXX)"
chmod 777 "$work"

log "64-rebuild: $K rows"
q "DROP TABLE IF EXISTS rbx;
CREATE TABLE rbx (k bigint);
INSERT INTO rbx SELECT g FROM generate_series(1, $K) g;
SELECT bf_track('rbx', 'k', $K, 0.01);
VACUUM ANALYZE rbx;" >/dev/null
idx="$(q "SELECT bf_track_index('rbx', 'k')::regclass")"
wall_ms() { # SQL -> wall time of one run, ms
	local t0
	t0="$(date +%s%N)"
	q "$1" >/dev/null
	awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.0f", (b - a) / 1e6 }'
}
q "CHECKPOINT" >/dev/null
t_off="$(wall_ms "SELECT bf_rebuild('rbx', 'k', $K, 0.01)")"
log "64-rebuild: offline $t_off ms"

# ---- online, under load ----
printf '\\set id random(%s, %s)\nINSERT INTO rbx VALUES (:id);\n' "$((B * 3))" "$((B * 4))" >"$work/ins.sql"
printf '\\set id random(%s, %s)\nSELECT bf_might_contain(%s, %s, :id::bigint);\n' \
	"$((B + 1))" "$((B * 2))" "'rbx'" "'k'" >"$work/look.sql"
secs=$(( t_off * 3 / 1000 + 12 ))
q "CHECKPOINT" >/dev/null
(cd "$work" && "$PGBENCH" -n -M prepared -c 1 -T "$secs" -l --log-prefix=load \
	-f ins.sql@1 -f look.sql@1 "$BENCH_DB" >"$work/pgbench.out" 2>&1) &
load=$!
sleep 3
t_on="$(wall_ms "REINDEX INDEX CONCURRENTLY $idx")"
log "64-rebuild: online $t_on ms under load"
wait "$load" || true
# per-transaction log: client, transaction, latency (us), script (0 = ins, 1 = look), ...
read -r max_look n_look n_ins <<<"$(cat "$work"/load* 2>/dev/null |
	awk '$4 == 1 { n1++; if ($3 > m) m = $3 } $4 == 0 { n0++ } END { printf "%.1f %d %d", m / 1000, n1, n0 }')"
failed="$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.out")"
row "online rebuild (REINDEX CONCURRENTLY) / offline (bf_rebuild), $(fmt_int "$K") rows" \
	"$(ratio "$t_on" "$t_off")" "<= 1.5" \
	"online $t_on ms under a load of inserts and lookups, offline $t_off ms"
row "slowest lookup during the online rebuild (ms)" "$max_look" "<= 100" \
	"$n_look lookups and $n_ins inserts in ${secs}s (pgbench -c 1), ${failed:-0} failed"
missed="$(q "SELECT count(*) FROM rbx WHERE k % 97 = 0 AND NOT bf_might_contain('rbx', 'k', k)")"
[ "$missed" = 0 ] || { log "64-rebuild: $missed false negatives after the online rebuild"; exit 1; }

# ---- half of the keys deleted, rebuilt online ----
q "DELETE FROM rbx WHERE k % 2 = 0" >/dev/null
scan="FROM generate_series($B::bigint + 1, $B::bigint + $N) g"
fp_before="$(q "SELECT count(*) $scan WHERE bf_might_contain('rbx', 'k', g)")"
q "VACUUM rbx" >/dev/null
q "REINDEX INDEX CONCURRENTLY $idx" >/dev/null
fp="$(q "SELECT count(*) $scan WHERE bf_might_contain('rbx', 'k', g)")"
missed="$(q "SELECT count(*) FROM rbx WHERE k % 97 = 1 AND NOT bf_might_contain('rbx', 'k', k)")"
rate="$(awk -v a="$fp" -v n="$N" 'BEGIN { printf "%.5f", a / n }')"
row "half of the keys deleted, rebuilt online: fpr / target" "$(ratio "$rate" 0.01)" "<= 1.1" \
	"$fp of $(fmt_int "$N") absent keys ($rate; $fp_before before the rebuild, when the filter held the deleted keys too); $missed keys missed"
q "SELECT bf_untrack('rbx', 'k'); DROP TABLE rbx" >/dev/null

# ---- the trigger method: bf_rebuild(..., concurrently => true) ----
T="${BENCH_REBUILD_TRIGGER_ROWS:-1000000}"
q "DROP TABLE IF EXISTS rbt;
CREATE TABLE rbt (k bigint);
INSERT INTO rbt SELECT g FROM generate_series(1, $T) g;
SELECT bf_track('rbt', 'k', $T, 0.01, method => 'trigger');
VACUUM ANALYZE rbt;" >/dev/null
printf '\\set id random(%s, %s)\nINSERT INTO rbt VALUES (:id);\n' "$((B * 3))" "$((B * 4))" >"$work/tins.sql"
# writers during a rebuild: the slowest insert (inserts queue on the
# registry row, as they always do with this method)
writes_during() { # SQL ms [script] -> "ms_of_SQL max_insert_ms inserts"
	local t secs2=$(( $2 / 1000 + 6 ))
	rm -f "$work"/tload*
	(cd "$work" && "$PGBENCH" -n -M prepared -c 1 -T "$secs2" -l --log-prefix=tload \
		-f "${3:-tins.sql}" "$BENCH_DB" >/dev/null 2>&1) &
	local pid=$!
	sleep 2
	t="$(wall_ms "$1")"
	wait "$pid" || true
	echo "$t $(cat "$work"/tload* | awk '{ if ($3 > m) m = $3; n++ } END { printf "%.1f %d", m / 1000, n }')"
}
t_plain="$(wall_ms "SELECT bf_rebuild('rbt', 'k', $T, 0.01)")"
read -r t_conc max_conc n_conc <<<"$(writes_during "SELECT bf_rebuild('rbt', 'k', concurrently => true)" "$t_plain")"
read -r t_lock max_lock n_lock <<<"$(writes_during "SELECT bf_rebuild('rbt', 'k', $T, 0.01)" "$t_plain")"
missed="$(q "SELECT count(*) FROM rbt WHERE k % 97 = 0 AND NOT bf_might_contain('rbt', 'k', k)")"
row "trigger method, slowest insert during bf_rebuild concurrently / during bf_rebuild ($(fmt_int "$T") rows)" \
	"$(ratio "$max_conc" "$max_lock")" "(info)" \
	"slowest insert $max_conc ms ($n_conc inserts) against $max_lock ms ($n_lock inserts); rebuild $t_conc ms concurrently, $t_lock ms under ShareLock, $t_plain ms alone; $missed keys missed"
q "SELECT bf_untrack('rbt', 'k'); DROP TABLE rbt" >/dev/null

# ---- a growing trigger filter compacted online ----
q "DROP TABLE IF EXISTS rbg;
CREATE TABLE rbg (k bigint);
SELECT bf_track('rbg', 'k', method => 'trigger');
INSERT INTO rbg SELECT g FROM generate_series(1, $T) g;
VACUUM ANALYZE rbg;" >/dev/null
layers="$(q "SELECT count(*) FROM bf_layers(bf_tracked_filter('rbg', 'k'))")"
bytes_before="$(q "SELECT octet_length(bf_tracked_filter('rbg', 'k')::bytea)")"
printf '\\set id random(%s, %s)\nINSERT INTO rbg VALUES (:id);\n' "$((B * 3))" "$((B * 4))" >"$work/gins.sql"
read -r t_g max_g n_g <<<"$(writes_during "SELECT bf_rebuild('rbg', 'k', concurrently => true)" 3000 gins.sql)"
t_g_alone="$(wall_ms "SELECT bf_rebuild('rbg', 'k', concurrently => true)")"
missed="$(q "SELECT count(*) FROM rbg WHERE NOT bf_might_contain('rbg', 'k', k)")"
row "trigger method, growing filter compacted online: rebuild under inserts / alone ($(fmt_int "$T") rows)" \
	"$(ratio "$t_g" "$t_g_alone")" "(info)" \
	"$layers layers ($bytes_before bytes) into $(q "SELECT count(*) FROM bf_layers(bf_tracked_filter('rbg', 'k'))") ($(q "SELECT octet_length(bf_tracked_filter('rbg', 'k')::bytea)") bytes); $t_g ms under a single-row insert load (slowest insert $max_g ms of $n_g, each writer logging its key), $t_g_alone ms alone; $missed keys missed"
q "SELECT bf_untrack('rbg', 'k'); DROP TABLE rbg" >/dev/null
rm -rf "$work"
