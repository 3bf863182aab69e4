# bench/scenarios/63-growing-index.sh -- a growing bloomfilter index against
# one sized right
#
# Two tables take the same 10 000 000 bigint keys: one with an index
# created for 10 000 keys that grows (growth 2), one with an index created
# for 10 000 000.  Rows:
#   1. false-positive rate of bf_index_contains over 1 000 000 absent keys
#      ÷ the target 0.01
#   2. pages of the grown index ÷ pages of the right-sized one
#   3. single-row INSERT throughput (pgbench, 1 client), grown ÷ right-sized
#      (interleaved rounds, best of each)
#   4. bf_index_contains per absent key, grown ÷ right-sized (backend CPU
#      time of 1 000 000 lookups, the bare scan subtracted)
#   5. the same lookups one per statement (pgbench -M prepared), as an
#      application asks, statements per second grown ÷ right-sized
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio, cpu_ms).

PGBENCH="$(pg_config --bindir)/pgbench"
K="${BENCH_GROW_INDEX_KEYS:-10000000}"
N="${BENCH_GROW_INDEX_ABSENT:-1000000}"
SECS="${BENCH_INSERT_SECONDS:-10}"
B=1000000000000
work="$(mktemp -d /tmp/bf-bench63.XXXXXX)"

log "63-growing-index: $K keys, $N absent probes"
q "DROP TABLE IF EXISTS gix_grow, gix_right;
CREATE TABLE gix_grow (id bigint);
CREATE TABLE gix_right (id bigint);
CREATE INDEX gix_grow_bf ON gix_grow USING bloomfilter (id) WITH (capacity = 10000, growth = 2);
CREATE INDEX gix_right_bf ON gix_right USING bloomfilter (id) WITH (capacity = $K);" >/dev/null
# once each (time_ms would insert the keys three times), wall time
load_ms() {
	local t0
	t0="$(date +%s%N)"
	q "$1" >/dev/null
	awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.0f", (b - a) / 1e6 }'
}
t_grow="$(load_ms "INSERT INTO gix_grow SELECT g FROM generate_series(1, $K) g")"
t_right="$(load_ms "INSERT INTO gix_right SELECT g FROM generate_series(1, $K) g")"
q "VACUUM ANALYZE gix_grow; VACUUM ANALYZE gix_right;" >/dev/null
layers="$(q "SELECT count(*) FROM bf_layers(bf_index_filter('gix_grow_bf'))")"
missed="$(q "SELECT count(*) FROM generate_series(1, $K, 97) g WHERE NOT bf_index_contains('gix_grow_bf', g::bigint)")"
[ "$missed" = 0 ] || { log "63-growing-index: $missed false negatives"; exit 1; }

# ---- the rate ----
scan="FROM generate_series($B::bigint + 1, $B::bigint + $N) g"
fp="$(q "SELECT count(*) $scan WHERE bf_index_contains('gix_grow_bf', g)")"
fp_right="$(q "SELECT count(*) $scan WHERE bf_index_contains('gix_right_bf', g)")"
rate="$(awk -v a="$fp" -v n="$N" 'BEGIN { printf "%.5f", a / n }')"
row "growing index, 10,000 -> $(fmt_int "$K") keys: fpr / target" "$(ratio "$rate" 0.01)" "<= 1.1" \
	"$fp of $(fmt_int "$N") absent keys ($rate); $layers layers; right-sized index: $fp_right; loading the keys (INSERT ... SELECT): grown $t_grow ms, right-sized $t_right ms"

# ---- size ----
read -r p_grow p_right <<<"$(q "SELECT pg_relation_size('gix_grow_bf') / 8192, pg_relation_size('gix_right_bf') / 8192" | tr '|' ' ')"
row "growing index pages / right-sized index pages" "$(ratio "$p_grow" "$p_right")" "<= 2" \
	"$(fmt_int "$p_grow") vs $(fmt_int "$p_right") pages of 8 KiB"

# ---- single-row inserts ----
tps() { # table
	printf '\\set id random(1, 1000000000000)\nINSERT INTO %s VALUES (:id);\n' "$1" >"$work/$1.sql"
	"$PGBENCH" -n -f "$work/$1.sql" -T "$SECS" -c 1 "$BENCH_DB" 2>/dev/null |
		awk '/^tps = / { printf "%.0f\n", $3 }'
}
best_grow=0
best_right=0
for r in 1 2; do
	for t in gix_grow gix_right; do
		q "CHECKPOINT" >/dev/null
		v="$(tps "$t")"
		log "63-growing-index: $t round $r: $v tps"
		if [ "$t" = gix_grow ]; then
			best_grow="$(awk -v a="$v" -v b="$best_grow" 'BEGIN { print (a > b) ? a : b }')"
		else
			best_right="$(awk -v a="$v" -v b="$best_right" 'BEGIN { print (a > b) ? a : b }')"
		fi
	done
done
row "single-row INSERT tps, growing index / right-sized index" "$(ratio "$best_grow" "$best_right")" ">= 0.9" \
	"pgbench -c 1, ${SECS}s, 2 interleaved rounds after a CHECKPOINT each, best of each: $best_grow vs $best_right tps"

# ---- lookups ----
t_bare="$(cpu_ms "SELECT count(*) $scan")"
t_lg="$(cpu_ms "SELECT count(*) $scan WHERE bf_index_contains('gix_grow_bf', g)")"
t_lr="$(cpu_ms "SELECT count(*) $scan WHERE bf_index_contains('gix_right_bf', g)")"
ns() { awk -v t="$1" -v b="$t_bare" -v n="$N" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
row "bf_index_contains per absent key, growing / right-sized" "$(ratio "$(ns "$t_lg")" "$(ns "$t_lr")")" "<= 2" \
	"$(ns "$t_lg") ns vs $(ns "$t_lr") ns per call (backend CPU, bare scan subtracted), $layers layers: one page read per layer"

# ---- lookups one per statement, as an application asks ----
probe_tps() { # index
	printf '\\set id random(%s, %s)\nSELECT bf_index_contains(%s::regclass, :id::bigint);\n' \
		"$((B + 1))" "$((B * 2))" "'$1'" >"$work/$1.sql"
	"$PGBENCH" -n -M prepared -f "$work/$1.sql" -T "$SECS" -c 1 "$BENCH_DB" 2>/dev/null |
		awk '/^tps = / { printf "%.0f\n", $3 }'
}
pg=0
pr=0
for r in 1 2; do
	v="$(probe_tps gix_grow_bf)"
	pg="$(awk -v a="$v" -v b="$pg" 'BEGIN { print (a > b) ? a : b }')"
	v="$(probe_tps gix_right_bf)"
	pr="$(awk -v a="$v" -v b="$pr" 'BEGIN { print (a > b) ? a : b }')"
done
row "absent-key lookups per second, one per statement, growing / right-sized" "$(ratio "$pg" "$pr")" "(info)" \
	"pgbench -M prepared -c 1, ${SECS}s, 2 interleaved rounds, best of each: $pg vs $pr statements/s (SELECT bf_index_contains(idx, random absent bigint))"

rm -rf "$work"
# REINDEX compacts the grown index: one layer sized for twice the rows
t_reindex="$(BENCH_REPS=1 time_ms "REINDEX INDEX gix_grow_bf")"
read -r c_pages c_layers <<<"$(q "SELECT pg_relation_size('gix_grow_bf') / 8192, (SELECT count(*) FROM bf_index_layers('gix_grow_bf'))" | tr '|' ' ')"
c_missed="$(q "SELECT count(*) FROM gix_grow WHERE NOT bf_index_contains('gix_grow_bf', id)")"
row "growing index after REINDEX: pages / right-sized index pages" "$(ratio "$c_pages" "$p_right")" "(info)" \
	"REINDEX INDEX of the grown index ($t_reindex ms): $c_layers layer(s), $c_pages pages against $p_right for capacity $(fmt_int "$K") and $p_grow before; its first layer sized for twice the table's rows at 0.9 of the rate, so there is room for as many keys again before the next layer; keys missed: $c_missed"

q "DROP TABLE gix_grow, gix_right" >/dev/null
