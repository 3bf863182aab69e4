# bench/scenarios/62-growing.sh -- a growing filter against one sized right
#
# A filter created for 10 000 keys grows (growth 2) while 10 000 000 keys
# are added; the comparison is a plain filter created for 10 000 000 at the
# same rate.  Rows:
#   1. false-positive rate over 1 000 000 absent keys / the target 0.01
#   2. bytes of the grown filter / bytes of the right-sized one
#   3. per-element cost of bf_add_all into the growing filter / the plain one
#   4. per-lookup cost of an absent key, growing / plain (stored filters
#      reached through a scalar subquery, as an application asks)
# Times are CPU time of the backend (cpu_ms), costs per element or lookup
# subtract the same query without the filter.
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio, cpu_ms).

C0="${BENCH_GROW_START:-10000}"
K="${BENCH_GROW_KEYS:-10000000}"
N="${BENCH_GROW_ABSENT:-1000000}"
B=1000000000000

log "62-growing: $C0 -> $K keys, $N absent probes"
# the keys as one array, stored uncompressed: reading it back costs little
# next to building it, so that per-key costs are not lost in its noise
arr="(SELECT a FROM grow_keys)"
q "DROP TABLE IF EXISTS grow_filters, grow_keys;
CREATE TABLE grow_keys (a int8[]);
ALTER TABLE grow_keys ALTER COLUMN a SET STORAGE EXTERNAL;
INSERT INTO grow_keys SELECT ARRAY(SELECT g::int8 FROM generate_series(1, $K) g);
CREATE TABLE grow_filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO grow_filters SELECT 1, bf_add_all(bf_create_growing($C0, 0.01), $arr);
INSERT INTO grow_filters SELECT 2, bf_add_all(bf_create($K, 0.01), $arr);
VACUUM ANALYZE grow_filters;" >/dev/null
layers="$(q "SELECT count(*) FROM grow_filters, bf_layers(f) WHERE id = 1")"

# ---- the rate ----
fp="$(q "SELECT count(*) FROM generate_series($B::bigint + 1, $B::bigint + $N) g
	WHERE bf_contains((SELECT f FROM grow_filters WHERE id = 1), g)")"
fp_plain="$(q "SELECT count(*) FROM generate_series($B::bigint + 1, $B::bigint + $N) g
	WHERE bf_contains((SELECT f FROM grow_filters WHERE id = 2), g)")"
missed="$(q "SELECT count(*) FROM generate_series(1, $K, 97) g
	WHERE NOT bf_contains((SELECT f FROM grow_filters WHERE id = 1), g::int8)")"
[ "$missed" = 0 ] || { log "62-growing: $missed false negatives"; exit 1; }
rate="$(awk -v a="$fp" -v n="$N" 'BEGIN { printf "%.5f", a / n }')"
row "growing $(fmt_int "$C0") -> $(fmt_int "$K") keys: fpr / target" "$(ratio "$rate" 0.01)" "<= 1.1" \
	"$fp of $(fmt_int "$N") absent keys ($rate); $layers layers; right-sized plain filter: $fp_plain"

# ---- size ----
read -r b_grow b_plain <<<"$(q "SELECT (SELECT pg_column_size(f) FROM grow_filters WHERE id = 1),
	(SELECT pg_column_size(f) FROM grow_filters WHERE id = 2)" | tr '|' ' ')"
row "growing bytes / right-sized bytes" "$(ratio "$b_grow" "$b_plain")" "<= 2" \
	"$(fmt_int "$b_grow") B vs $(fmt_int "$b_plain") B"

# ---- adds ----
# the same statement with one element of the same array is the baseline:
# reading the array and creating the filter cost the same in both
adds() {
	local t b
	t="$(cpu_ms "SELECT bf_add_all($1, $arr) IS NULL")"
	b="$(cpu_ms "SELECT bf_add_all($1, ($arr)[1:1]) IS NULL")"
	awk -v t="$t" -v b="$b" -v n="$K" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'
}
ns_add_grow="$(adds "bf_create_growing($C0, 0.01)")"
ns_add_plain="$(adds "bf_create($K, 0.01)")"
row "growing add_all / right-sized add_all" "$(ratio "$ns_add_grow" "$ns_add_plain")" "-" \
	"$ns_add_grow ns vs $ns_add_plain ns per key (each add first tests the layers)"

# ---- lookups ----
scan="FROM generate_series($B::bigint + 1, $B::bigint + $N) g"
t_bare="$(cpu_ms "SELECT count(*) $scan")"
t_grow="$(cpu_ms "SELECT count(*) $scan WHERE bf_contains((SELECT f FROM grow_filters WHERE id = 1), g)")"
t_plain="$(cpu_ms "SELECT count(*) $scan WHERE bf_contains((SELECT f FROM grow_filters WHERE id = 2), g)")"
ns() { awk -v t="$1" -v b="$t_bare" -v n="$N" 'BEGIN { printf "%.0f", (t - b) * 1e6 / n }'; }
row "growing lookup / right-sized lookup (absent keys)" "$(ratio "$(ns "$t_grow")" "$(ns "$t_plain")")" "<= 2" \
	"$(ns "$t_grow") ns vs $(ns "$t_plain") ns per lookup (scan cost subtracted), $layers layers"

q "DROP TABLE grow_filters, grow_keys" >/dev/null
