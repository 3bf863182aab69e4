# bench/scenarios/30-aggregates.sh -- aggregates (sourced by bench/run-inner.sh;
# uses q, time_ms, row, ratio, fmt_int, log from bench/lib.sh).
#
# Rows:
#   bf_agg(g, N, 0.01) per-row cost / count(*) per-row cost      (serial)
#   bf_agg(g, N, 0.01) per-row cost / hll_add_agg(hll_hash_bigint(g)) (serial; target <= 1.3)
#   parallel speed-up of bf_agg with 2 workers                  (target >= 1.6)
#   auto-sized bf_agg(g) cost / sized bf_agg(g, N, 0.01) cost    (serial)
# All over the same table of AGG_ROWS (default 10 000 000) distinct bigints.

AGG_ROWS="${AGG_ROWS:-10000000}"

log "30-aggregates: building agg_big ($(fmt_int "$AGG_ROWS") rows)"
q "CREATE EXTENSION IF NOT EXISTS bloomfilter" >/dev/null
q "DROP TABLE IF EXISTS agg_big;
   CREATE TABLE agg_big AS SELECT g::bigint AS g FROM generate_series(1, $AGG_ROWS) g;
   VACUUM ANALYZE agg_big;" >/dev/null

# serial plans: one backend each, so the ratios are per-row costs
AGG_SERIAL='-c max_parallel_workers_per_gather=0'
AGG_PARALLEL='-c max_parallel_workers_per_gather=2 -c parallel_setup_cost=0 -c parallel_tuple_cost=0 -c min_parallel_table_scan_size=0'

# length(...::bytea) makes the filter leave the server as a number, not 12 MB of text
SQL_SIZED="SELECT length(bf_agg(g, $AGG_ROWS, 0.01)::bytea) FROM agg_big"
SQL_AUTO="SELECT length(bf_agg(g)::bytea) FROM agg_big"

t_count=$(PGOPTIONS="$AGG_SERIAL" time_ms "SELECT count(*) FROM agg_big")
t_sized=$(PGOPTIONS="$AGG_SERIAL" time_ms "$SQL_SIZED")
ns_count=$(awk -v t="$t_count" -v n="$AGG_ROWS" 'BEGIN { printf "%.1f", t * 1e6 / n }')
ns_sized=$(awk -v t="$t_sized" -v n="$AGG_ROWS" 'BEGIN { printf "%.1f", t * 1e6 / n }')

row "bf_agg(g, N, 0.01) ÷ count(*), per row (serial, N = $(fmt_int "$AGG_ROWS"))" \
	"$(ratio "$t_sized" "$t_count")" "" \
	"bf_agg ${ns_sized} ns/row, count(*) ${ns_count} ns/row"

if q "CREATE EXTENSION IF NOT EXISTS hll" >/dev/null 2>&1; then
	t_hll=$(PGOPTIONS="$AGG_SERIAL" time_ms "SELECT hll_cardinality(hll_add_agg(hll_hash_bigint(g))) FROM agg_big")
	ns_hll=$(awk -v t="$t_hll" -v n="$AGG_ROWS" 'BEGIN { printf "%.1f", t * 1e6 / n }')
	row "bf_agg(g, N, 0.01) ÷ hll_add_agg(hll_hash_bigint(g)), per row (serial)" \
		"$(ratio "$t_sized" "$t_hll")" "≤ 1.3" \
		"bf_agg ${ns_sized} ns/row, hll_add_agg ${ns_hll} ns/row"
else
	log "30-aggregates: extension hll is not installed (Debian: postgresql-15-hll); skipping the hll row"
	row "bf_agg(g, N, 0.01) ÷ hll_add_agg(hll_hash_bigint(g)), per row (serial)" \
		"skipped" "≤ 1.3" "extension hll not installed (postgresql-15-hll)"
fi

plan=$(PGOPTIONS="$AGG_PARALLEL" q "EXPLAIN (COSTS OFF) $SQL_SIZED")
if printf '%s\n' "$plan" | grep -q 'Partial Aggregate'; then
	# the default plan: 2 workers and the leader scanning too (3 processes on
	# 2 cores); also shown with the leader only gathering and combining
	t_par=$(PGOPTIONS="$AGG_PARALLEL" time_ms "$SQL_SIZED")
	t_par_noleader=$(PGOPTIONS="$AGG_PARALLEL -c parallel_leader_participation=off" time_ms "$SQL_SIZED")
	row "bf_agg(g, N, 0.01) parallel speed-up, 2 workers (N = $(fmt_int "$AGG_ROWS"))" \
		"$(ratio "$t_sized" "$t_par")" "≥ 1.6" \
		"serial ${t_sized} ms, parallel ${t_par} ms (default settings: the leader scans too); $(nproc) CPUs"
	row "bf_agg(g, N, 0.01) parallel speed-up, 2 workers, leader not scanning" \
		"$(ratio "$t_sized" "$t_par_noleader")" "(info)" \
		"serial ${t_sized} ms, parallel ${t_par_noleader} ms with parallel_leader_participation = off"
else
	row "bf_agg(g, N, 0.01) parallel speed-up, 2 workers" "no parallel plan" "≥ 1.6" \
		"EXPLAIN showed no Partial Aggregate"
fi

t_auto=$(PGOPTIONS="$AGG_SERIAL" time_ms "$SQL_AUTO")
row "auto-sized bf_agg(g) ÷ sized bf_agg(g, N, 0.01) (serial, $(fmt_int "$AGG_ROWS") distinct)" \
	"$(ratio "$t_auto" "$t_sized")" "" \
	"auto ${t_auto} ms, sized ${t_sized} ms"

q "DROP TABLE agg_big" >/dev/null
