# bench/scenarios/55-bulkload.sh -- bulk loads into a table with a
# bloomfilter index
#
# Rows:
#   1. COPY of 2 M rows (bigint, text e-mail) into an empty table with a
#      bloomfilter index (capacity 4 M, 1 %) / with a btree on the e-mail
#      (target <= 0.7), / without index (target <= 4); hash index as info
#   2. instructions per row spent on the index during COPY (callgrind, a
#      single-user backend, 100 k rows): bloomfilter vs btree (target: below)
#   3. WAL bytes per row the index adds during COPY
# Sourced by run-inner.sh with lib.sh loaded (q, time_ms, row, ratio).

N="${BENCH_COPY_ROWS:-2000000}"
CAP=$((N * 2))
CGN="${BENCH_COPY_CALLGRIND_ROWS:-100000}"
work="$(mktemp -d /tmp/bf-bench55.XXXXXX)"
chmod 777 "$work"
data="$work/rows.copy"

log "55-bulkload: COPY of $N rows, filter capacity $CAP"
q "COPY (SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $N) g) TO '$data'"

declare -A DDL=(
	[none]=""
	[btree]="CREATE INDEX ON bl_btree (email);"
	[hash]="CREATE INDEX ON bl_hash USING hash (email);"
	[bloom]="CREATE INDEX ON bl_bloom USING bloomfilter (email) WITH (capacity = $CAP, fpr = 0.01);"
)
variants="none btree hash bloom"
for v in $variants; do
	q "DROP TABLE IF EXISTS bl_$v; CREATE TABLE bl_$v (id bigint, email text); ${DDL[$v]}"
done

# interleaved rounds: each COPY into an emptied table after a CHECKPOINT
declare -A T=() W=()
for r in 1 2 3; do
	for v in $variants; do
		q "TRUNCATE bl_$v; CHECKPOINT" >/dev/null
		before="$(q "SELECT pg_current_wal_insert_lsn()")"
		t="$(BENCH_REPS=1 time_ms "COPY bl_$v FROM '$data'")"
		w="$(q "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$before')::bigint")"
		log "55-bulkload: round $r, $v: $t ms, WAL $w bytes"
		T[$v]="$(awk -v a="$t" -v b="${T[$v]:-}" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')"
		W[$v]="$w"
	done
done
found="$(q "SELECT count(*) FILTER (WHERE bf_index_contains('bl_bloom_email_idx', email)) = $N FROM bl_bloom")"

note="COPY of $(fmt_int "$N") rows (bigint, 'userN@example.com') from a file into an emptied table after a CHECKPOINT, best of 3 interleaved rounds; ms: none ${T[none]}, btree ${T[btree]}, hash ${T[hash]}, bloomfilter ${T[bloom]} (capacity $(fmt_int "$CAP"), 1 %); every key found afterwards: $found"
row "1. COPY $(fmt_int "$N") rows, bloomfilter idx / btree idx" "$(ratio "${T[bloom]}" "${T[btree]}")" "<= 0.7" "$note"
row "1. COPY $(fmt_int "$N") rows, bloomfilter idx / no index" "$(ratio "${T[bloom]}" "${T[none]}")" "<= 4" "same runs"
row "1. COPY $(fmt_int "$N") rows, hash idx / no index" "$(ratio "${T[hash]}" "${T[none]}")" "(info)" "same runs"
per_row() { awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.0f", (a - b) / n }'; }
row "3. WAL bytes per row the index adds, COPY" "$(per_row "${W[bloom]}" "${W[none]}")" "(info)" \
	"last round: bloomfilter $(per_row "${W[bloom]}" "${W[none]}") B/row, btree $(per_row "${W[btree]}" "${W[none]}") B/row, hash $(per_row "${W[hash]}" "${W[none]}") B/row (heap alone $(per_row "${W[none]}" 0) B/row)"

# ---- 2. instructions per row: callgrind on a single-user backend ----
# The whole single-user run is counted (Debian's postgres has no symbols
# for its static functions to toggle collection on); start-up and
# shut-down cost the same for every variant and cancel in the difference.
if command -v valgrind >/dev/null 2>&1; then
	(
		. bench/callgrind_lib.sh
		cg_start 5499
		head -n "$CGN" "$data" >"$dir/cg.copy"
		chmod 644 "$dir/cg.copy"
		{
			echo "CREATE EXTENSION bloomfilter;"
			for v in none btree bloom; do
				echo "CREATE TABLE bl_$v (id bigint, email text);"
				echo "${DDL[$v]}" | sed "s/$CAP/$((CGN * 2))/g"
			done
		} | cg_psql >/dev/null
		cg_stop
		declare -A IR=()
		for v in none btree bloom; do
			echo "COPY bl_$v FROM '$dir/cg.copy';" | cg_run "$dir/cg.$v"
			IR[$v]="$(cg_total "$dir/cg.$v")"
			log "55-bulkload: callgrind $v: ${IR[$v]} instructions"
		done
		ipr() { awk -v a="$1" -v b="$2" -v n="$CGN" 'BEGIN { printf "%.0f", (a - b) / n }'; }
		row "2. instructions per row for the index, COPY, bloomfilter / btree" \
			"$(ipr "${IR[bloom]}" "${IR[none]}") / $(ipr "${IR[btree]}" "${IR[none]}")" "below" \
			"valgrind --tool=callgrind, a single-user backend (postgres --single) running COPY of $(fmt_int "$CGN") rows into an empty table (capacity $(fmt_int $((CGN * 2)))), whole run, minus the same run into the table without index; commit included"
	)
else
	row "2. instructions per row for the index, COPY" "n/a" "below" "valgrind not installed"
fi

q "DROP TABLE bl_none, bl_btree, bl_hash, bl_bloom"
rm -rf "$work"
