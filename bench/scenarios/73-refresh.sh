# bench/scenarios/73-refresh.sh -- what a client's refresh transfers:
# after 1 % of a 10 M-key filter's pages (index) or 8 KiB chunks (trigger
# method) changed, the bytes of the patch bf_index_changes /
# bf_tracked_changes sends, against a full fetch (target <= 5 %).
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio, fmt_int).

RK="${BENCH_REFRESH_KEYS:-10000000}"
log "73-refresh: $RK keys"

# bytes of a patch and its number of runs
patch_stats() { # $1: SQL returning one patch
	q "SELECT length(p) || ' ' || (get_byte(p, 16) + 256 * get_byte(p, 17)) FROM ($1) s(p)"
}
# the changed part of a patch in pages of the value: its run bytes less
# the header, in units of unit bytes
changed_units() { # $1 bytes, $2 runs, $3 unit
	awk -v b="$1" -v r="$2" -v u="$3" 'BEGIN { printf "%.1f", (b - 24 - 16 * r - 64) / u }'
}

q "DROP TABLE IF EXISTS rf_i, rf_t;
CREATE TABLE rf_i (k bigint);
INSERT INTO rf_i SELECT 2 * g FROM generate_series(1, $RK) g;
CREATE INDEX rf_i_k ON rf_i USING bloomfilter (k) WITH (capacity = $RK, fpr = 0.01);
CREATE TABLE rf_t AS SELECT k FROM rf_i;
SELECT bf_track('rf_t', 'k', $RK, 0.01, method => 'trigger');
CHECKPOINT;" >/dev/null

# --- the index: 1 % of its data pages get a new key, one statement ---
pages="$(q "SELECT (nbits / 512 + 126) / 127 FROM bf_index_info('rf_i_k')")"
nchg=$(((pages + 99) / 100))
lsn="$(q "SELECT next_lsn FROM bf_index_changes('rf_i_k')")"
read -r full_b _ <<<"$(patch_stats "SELECT patch FROM bf_index_changes('rf_i_k')")"
q "INSERT INTO rf_i SELECT 2 * (random() * 1e12)::bigint + 1 FROM generate_series(1, $nchg)" >/dev/null
t0=$(date +%s%N)
read -r inc_b inc_r <<<"$(patch_stats "SELECT patch FROM bf_index_changes('rf_i_k', '$lsn')")"
t1=$(date +%s%N)
row "1. index refresh after 1 % of its pages changed: patch bytes / full fetch" \
	"$(ratio "$inc_b" "$full_b" 4)" "<= 0.05" \
	"$(fmt_int "$RK") keys, capacity $(fmt_int "$RK"), 1 %: $pages data pages, full patch $(fmt_int "$full_b") bytes; $nchg new keys in one INSERT changed $(changed_units "$inc_b" "$inc_r" 8128) pages; patch $(fmt_int "$inc_b") bytes in $inc_r runs, read in $(((t1 - t0) / 1000000)) ms (psql round trip included)"

# --- the trigger method: 1 % of the value's 8 KiB chunks, one statement ---
chunks="$(q "SELECT (length(bf_tracked_filter('rf_t', 'k')::bytea) + 8191) / 8192")"
nchg=$(((chunks + 99) / 100))
lsn="$(q "SELECT next_lsn FROM bf_tracked_changes('rf_t', 'k')")"
read -r full_b _ <<<"$(patch_stats "SELECT patch FROM bf_tracked_changes('rf_t', 'k')")"
q "INSERT INTO rf_t SELECT 2 * (random() * 1e12)::bigint + 1 FROM generate_series(1, $nchg)" >/dev/null
read -r inc_b inc_r <<<"$(patch_stats "SELECT patch FROM bf_tracked_changes('rf_t', 'k', '$lsn')")"
row "2. tracked (trigger) refresh after 1 % of its chunks changed: patch bytes / full fetch" \
	"$(ratio "$inc_b" "$full_b" 4)" "<= 0.05" \
	"same keys, bf_track(..., method => 'trigger'): $chunks chunks of 8 KiB, full patch $(fmt_int "$full_b") bytes; $nchg new keys in one INSERT changed $(changed_units "$inc_b" "$inc_r" 8192) chunks; patch $(fmt_int "$inc_b") bytes in $inc_r runs"
q "DROP TABLE rf_i; SELECT bf_untrack('rf_t', 'k'); DROP TABLE rf_t" >/dev/null
