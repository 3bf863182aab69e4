# bench/scenarios/60-window.sh -- sliding-window filters against plain filters
#
# A bloomwindow of capacity C per window keeps N + 1 slices, each a filter
# for C keys at fpr / (N + 1); a lookup hashes once and tests one block in
# every live slice.  Rows (ratios within this run):
#   1. per-lookup cost, bf_window_contains / bf_contains, 4 slices
#   2. per-lookup cost, bf_window_contains / bf_contains, 7 slices
#   3. per-element cost, bf_window_add_all / bf_add_all
#   4. per-row cost, bf_window_agg / bf_agg(v, capacity, fpr)
#   5. bytes, window of 4 slices / plain filter of the same capacity and rate
# Both kinds are stored in a table (TOASTed) and reached through a scalar
# subquery; lookups are of N keys that none of them holds.  The windows
# hold C keys spread evenly over one window, the plain filter the same C.
# Times are the CPU time of the backend (utime + stime of /proc/self/stat,
# best of BENCH_REPS), not wall time: on a shared machine the wall time of
# a query mostly measures the other processes.  Costs per lookup, element or
# row subtract the same query without the filter.
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio).

C="${BENCH_WINDOW_CAPACITY:-100000}"
N="${BENCH_WINDOW_LOOKUPS:-5000000}"
B=1000000000000
T0="timestamptz '2024-03-01'"
AT="$T0 + interval '7 days'"

log "60-window: capacity $C, $N lookups"
q "DROP TABLE IF EXISTS win_filters;
CREATE TABLE win_filters (id int PRIMARY KEY, label text, f bloomfilter, w bloomwindow);
INSERT INTO win_filters (id, label, f)
	SELECT 1, 'plain', bf_agg(g, $C, 0.01) FROM generate_series(1, $C) g;
INSERT INTO win_filters (id, label, w)
	SELECT 4, '4 slices', bf_window_agg(g, $T0 + g * (interval '7 days' / $C), '7 days', $C, 0.01, 4)
	FROM generate_series(1, $C) g;
INSERT INTO win_filters (id, label, w)
	SELECT 7, '7 slices', bf_window_agg(g, $T0 + g * (interval '7 days' / $C), '7 days', $C, 0.01, 7)
	FROM generate_series(1, $C) g;
VACUUM ANALYZE win_filters;" >/dev/null

# ---- lookups ----
scan="FROM generate_series($B::bigint + 1, $B::bigint + $N) g"
declare -A SQL=(
	[bare]="SELECT count(*) $scan"
	[plain]="SELECT count(*) $scan WHERE bf_contains((SELECT f FROM win_filters WHERE id = 1), g)"
	[w4]="SELECT count(*) $scan WHERE bf_window_contains((SELECT w FROM win_filters WHERE id = 4), g, $AT)"
	[w7]="SELECT count(*) $scan WHERE bf_window_contains((SELECT w FROM win_filters WHERE id = 7), g, $AT)"
)
declare -A T=()
for ((r = 1; r <= ${BENCH_ROUNDS:-3}; r++)); do
	for key in bare plain w4 w7; do
		t="$(BENCH_REPS=2 cpu_ms "${SQL[$key]}")"
		T[$key]="$(awk -v a="$t" -v b="${T[$key]:-}" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')"
	done
done
ns() { awk -v t="$1" -v b="${T[bare]}" -v n="$N" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
log "60-window: best ms: bare ${T[bare]}, plain ${T[plain]}, 4 slices ${T[w4]}, 7 slices ${T[w7]}"
row "window lookup / plain lookup, 4 slices" "$(ratio "$(ns "${T[w4]}")" "$(ns "${T[plain]}")")" "-" \
	"$(ns "${T[w4]}") ns vs $(ns "${T[plain]}") ns per non-member lookup (scan cost subtracted), capacity $C"
row "window lookup / plain lookup, 7 slices" "$(ratio "$(ns "${T[w7]}")" "$(ns "${T[plain]}")")" "-" \
	"$(ns "${T[w7]}") ns per lookup"

# ---- adds ----
A=$((C * 10))
arr="(SELECT ARRAY(SELECT g FROM generate_series(1, $A) g))"
t_arr="$(cpu_ms "SELECT cardinality($arr)")"
t_add_plain="$(cpu_ms "SELECT bf_add_all(bf_create($C, 0.01), $arr) IS NULL")"
t_add_win="$(cpu_ms "SELECT bf_window_add_all(bf_window_create('7 days', $C, 0.01, 4), $arr, $AT) IS NULL")"
add_ns() { awk -v t="$1" -v b="$t_arr" -v n="$A" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
row "window add_all / plain add_all, 4 slices" "$(ratio "$(add_ns "$t_add_win")" "$(add_ns "$t_add_plain")")" "-" \
	"$(add_ns "$t_add_win") ns vs $(add_ns "$t_add_plain") ns per element ($A elements into a window / filter for $C)"

# ---- aggregates ----
R=$((C * 10))
rows="FROM generate_series(1, $R) g"
t_rows="$(cpu_ms "SELECT count(g) $rows")"
t_agg_plain="$(cpu_ms "SELECT bf_agg(g % $C, $C, 0.01) IS NULL $rows")"
t_agg_win="$(cpu_ms "SELECT bf_window_agg(g % $C, $T0 + g * (interval '7 days' / $R), '7 days', $C, 0.01, 4) IS NULL $rows")"
t_rows_time="$(cpu_ms "SELECT count($T0 + g * (interval '7 days' / $R)) $rows")"
agg_ns() { awk -v t="$1" -v b="$2" -v n="$R" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
row "bf_window_agg / bf_agg per row, 4 slices" \
	"$(ratio "$(agg_ns "$t_agg_win" "$t_rows_time")" "$(agg_ns "$t_agg_plain" "$t_rows")")" "-" \
	"$(agg_ns "$t_agg_win" "$t_rows_time") ns vs $(agg_ns "$t_agg_plain" "$t_rows") ns per row ($R rows, time column cost subtracted)"

# ---- size ----
sizes="$(q "SELECT (SELECT bytes FROM bf_window_info(bf_window_create('7 days', $C, 0.01, n))) FROM unnest(ARRAY[1, 4, 7]) n")"
plain_bytes="$(q "SELECT bytes FROM bf_estimate($C, 0.01)")"
set -- $sizes
row "window bytes / plain bytes, 4 slices" "$(ratio "$2" "$plain_bytes")" "-" \
	"1 slice $(ratio "$1" "$plain_bytes"), 7 slices $(ratio "$3" "$plain_bytes"); plain $(fmt_int "$plain_bytes") B"

q "DROP TABLE win_filters" >/dev/null
