# bench/scenarios/50-index.sh -- the bloomfilter index access method
#
# Rows:
#   1. single-row INSERT throughput (pgbench, 1 and 8 clients) with a
#      bloomfilter index / without any index, and / with a btree on the same
#      column (target: the bloomfilter index costs less than a btree)
#   2. 8-client INSERT throughput, index method / trigger method
#   3. WAL bytes per single-row insert attributable to the filter (target
#      < 200), steady state, and with the full-page images after a checkpoint
#   4. bf_index_contains per call, 10 M-key index / 10 k-key index (target
#      <= 1.3), and / a btree EXISTS probe for an absent key
# Sourced by run-inner.sh with lib.sh loaded (q, time_ms, row, ratio).

PGBENCH="$(pg_config --bindir)/pgbench"
SECS="${BENCH_INSERT_SECONDS:-10}"
BIGN="${BENCH_INDEX_KEYS:-10000000}"
SMALLN=10000
LOOKUPS="${BENCH_INDEX_LOOKUPS:-1000000}"
B=1000000000000
work="$(mktemp -d /tmp/bf-bench50.XXXXXX)"

log "50-index: inserts ${SECS}s per pgbench run; lookups $LOOKUPS against $BIGN / $SMALLN keys"

# ---- 1. INSERT throughput ----
# one table per variant, same columns, each already holding PRELOAD rows
# (a busy table, not an empty one: the btree has its realistic depth and
# both indexes their size); the filter is sized for 10 M keys
PRELOAD="${BENCH_INSERT_PRELOAD:-1000000}"
q "DROP TABLE IF EXISTS ins_none, ins_bf, ins_bt;
CREATE TABLE ins_none (id bigint, email text);
INSERT INTO ins_none SELECT id, 'user' || id || '@example.com'
	FROM (SELECT (random() * 1e12)::bigint AS id FROM generate_series(1, $PRELOAD)) s;
CREATE TABLE ins_bf AS SELECT * FROM ins_none;
CREATE TABLE ins_bt AS SELECT * FROM ins_none;
CREATE INDEX ins_bf_email ON ins_bf USING bloomfilter (email) WITH (capacity = 10000000, fpr = 0.01);
CREATE INDEX ins_bt_email ON ins_bt (email);
VACUUM ANALYZE ins_none; VACUUM ANALYZE ins_bf; VACUUM ANALYZE ins_bt;"

tps() { # table clients
	printf '\\set id random(1, 1000000000000)\nINSERT INTO %s VALUES (:id, '"'"'user'"'"' || :id || '"'"'@example.com'"'"');\n' "$1" >"$work/$1.sql"
	"$PGBENCH" -n -f "$work/$1.sql" -T "$SECS" -c "$2" -j "$(( $2 < 2 ? 1 : 2 ))" "$BENCH_DB" 2>/dev/null |
		awk '/^tps = / { printf "%.0f\n", $3 }'
}
declare -A TPS=()
for c in 1 8; do
	for t in ins_none ins_bf ins_bt; do
		q "CHECKPOINT" >/dev/null
		TPS[$t.$c]="$(tps "$t" "$c")"
		log "50-index: $t, $c clients: ${TPS[$t.$c]} tps"
	done
done
for c in 1 8; do
	row "1. INSERT tps, bloomfilter idx / no index, $c client(s)" "$(ratio "${TPS[ins_bf.$c]}" "${TPS[ins_none.$c]}")" "(info)" \
		"pgbench -c $c, ${SECS}s each after a CHECKPOINT, single-row INSERT (random bigint, text e-mail) into a table of $(fmt_int "$PRELOAD")+ rows, synchronous_commit=off; tps: none ${TPS[ins_none.$c]}, bloomfilter ${TPS[ins_bf.$c]}, btree ${TPS[ins_bt.$c]}"
	row "1. INSERT tps, bloomfilter idx / btree idx, $c client(s)" "$(ratio "${TPS[ins_bf.$c]}" "${TPS[ins_bt.$c]}")" "> 1" \
		"same runs; the filter (capacity 10 M, 1 %: 11.9 MiB) vs a btree on the e-mail column"
done
# the two bf_track methods on copies of the same table, 8 clients each
q "DROP TABLE IF EXISTS ins_trk_idx, ins_trk_trg;
CREATE TABLE ins_trk_idx AS SELECT * FROM ins_none LIMIT $PRELOAD;
CREATE TABLE ins_trk_trg AS SELECT * FROM ins_none LIMIT $PRELOAD;
SELECT bf_track('ins_trk_idx', 'email', 10000000, 0.01, method => 'index');
SELECT bf_track('ins_trk_trg', 'email', 10000000, 0.01, method => 'trigger');
VACUUM ANALYZE ins_trk_idx; VACUUM ANALYZE ins_trk_trg;" >/dev/null
for t in ins_trk_idx ins_trk_trg; do
	q "CHECKPOINT" >/dev/null
	TPS[$t.8]="$(tps "$t" 8)"
	log "50-index: $t, 8 clients: ${TPS[$t.8]} tps"
done
row "2. 8-client INSERT tps, index method / trigger method" \
	"$(ratio "${TPS[ins_trk_idx.8]}" "${TPS[ins_trk_trg.8]}")" "(large)" \
	"bf_track(..., method => 'index') vs method => 'trigger', capacity 10 M, 1 %; pgbench -c 8, ${SECS}s each, single-row INSERT; tps: index ${TPS[ins_trk_idx.8]}, trigger ${TPS[ins_trk_trg.8]} (every trigger-method insert rewrites the 12 MB stored filter and holds its row lock to commit)"

# ---- 3. WAL per insert ----
# n single-row INSERT statements in one session; WAL between LSNs, compared
# with the same statements into the table without index
wal_of() { # table n -> bytes
	local before after
	before="$(q "SELECT pg_current_wal_insert_lsn()")"
	"$PGBENCH" -n -f "$work/$1.sql" -t "$2" -c 1 "$BENCH_DB" >/dev/null 2>&1
	after="$(q "SELECT pg_current_wal_insert_lsn()")"
	q "SELECT pg_wal_lsn_diff('$after', '$before')::bigint"
}
WN=50000
for t in ins_none ins_bf; do
	q "CHECKPOINT" >/dev/null
	# first pass after a checkpoint: includes one full-page image per page touched
	W[0]="$(wal_of "$t" "$WN")"
	# second pass: every filter page was already logged since the checkpoint
	W[1]="$(wal_of "$t" "$WN")"
	eval "WAL_${t}_first=${W[0]} WAL_${t}_steady=${W[1]}"
done
per() { awk -v a="$1" -v b="$2" -v n="$WN" 'BEGIN { printf "%.0f", (a - b) / n }'; }
row "3. WAL bytes per insert for the filter, steady" "$(per "$WAL_ins_bf_steady" "$WAL_ins_none_steady")" "< 200" \
	"$(fmt_int $WN) single-row INSERTs after the filter's pages were logged since the last checkpoint: $(awk -v a="$WAL_ins_bf_steady" -v n=$WN 'BEGIN { printf "%.0f", a / n }') B/insert with the index vs $(awk -v a="$WAL_ins_none_steady" -v n=$WN 'BEGIN { printf "%.0f", a / n }') B without (generic WAL delta of the bytes changed in one 512-bit block, record and block headers)"
row "3. WAL bytes per insert for the filter, after checkpoint" "$(per "$WAL_ins_bf_first" "$WAL_ins_none_first")" "(info)" \
	"the first $(fmt_int $WN) inserts after a CHECKPOINT: includes one 8 KiB full-page image per filter page first touched (1 537 data pages for capacity 10 M), amortized"

# ---- 4. bf_index_contains per call ----
q "DROP TABLE IF EXISTS look_big, look_small;
CREATE TABLE look_big (id bigint);
CREATE TABLE look_small (id bigint);
INSERT INTO look_big SELECT g FROM generate_series(1, $BIGN) g;
INSERT INTO look_small SELECT g FROM generate_series(1, $SMALLN) g;
VACUUM ANALYZE look_big; VACUUM ANALYZE look_small;"
t0="$(date +%s%N)"
q "CREATE INDEX look_big_bf ON look_big USING bloomfilter (id) WITH (capacity = $BIGN)"
t_build="$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.0f", (b - a) / 1e6 }')"
q "
CREATE INDEX look_small_bf ON look_small USING bloomfilter (id) WITH (capacity = $SMALLN);
CREATE INDEX look_big_bt ON look_big (id);
SELECT count(*) FROM generate_series(1, 100) g WHERE bf_index_contains('look_big_bf', g::bigint);" >/dev/null
sizes="$(q "SELECT pg_size_pretty(pg_relation_size('look_big_bf')) || ' / ' || pg_size_pretty(pg_relation_size('look_small_bf')) || ' / btree ' || pg_size_pretty(pg_relation_size('look_big_bt'))")"
scan="FROM generate_series($B::bigint + 1, $B::bigint + $LOOKUPS) g"
declare -A L=(
	[bare]="SELECT count(*) $scan"
	[big]="SELECT count(*) $scan WHERE bf_index_contains('look_big_bf', g)"
	[small]="SELECT count(*) $scan WHERE bf_index_contains('look_small_bf', g)"
	# OFFSET 0 keeps EXISTS a per-row subplan (an index probe), not a join
	[btree]="SELECT count(*) $scan WHERE EXISTS (SELECT 1 FROM look_big WHERE id = g OFFSET 0)"
)
declare -A LT=()
for r in 1 2 3; do
	for k in bare big small btree; do
		t="$(BENCH_REPS=2 time_ms "${L[$k]}")"
		LT[$k]="$(awk -v a="$t" -v b="${LT[$k]:-}" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')"
	done
done
fpos="$(q "SELECT count(*) FILTER (WHERE bf_index_contains('look_big_bf', g)) || ' / ' ||
	count(*) FILTER (WHERE bf_index_contains('look_small_bf', g)) $scan")"
ns() { awk -v t="$1" -v n="$LOOKUPS" 'BEGIN { printf "%.0f", t * 1e6 / n }'; }
net() { awk -v a="$1" -v b="$2" -v z="$3" 'BEGIN { if (b - z <= 0) print "n/a"; else printf "%.2f", (a - z) / (b - z) }'; }
row "4. bf_index_contains: 10 M-key / 10 k-key index" "$(ratio "${LT[big]}" "${LT[small]}")" "<= 1.3" \
	"$(fmt_int "$LOOKUPS") absent int8 keys per query; per call $(ns "${LT[big]}") ns vs $(ns "${LT[small]}") ns (bare scan $(ns "${LT[bare]}") ns; net of it $(net "${LT[big]}" "${LT[small]}" "${LT[bare]}")); index sizes $sizes; false positives $fpos"
row "4. bf_index_contains / btree EXISTS, absent key, 10 M rows" "$(ratio "${LT[big]}" "${LT[btree]}")" "(info)" \
	"per call $(ns "${LT[big]}") ns vs EXISTS (SELECT 1 ... WHERE id = g) through the btree $(ns "${LT[btree]}") ns; net of the bare scan $(net "${LT[big]}" "${LT[btree]}" "${LT[bare]}")"
row "CREATE INDEX bloomfilter, $(fmt_int "$BIGN") int8 rows" "$t_build ms" "(info)" \
	"one run, psql round trip included: table_index_build_scan + hashing into an in-memory filter + writing and WAL-logging the pages"

q "DROP TABLE ins_none, ins_bf, ins_bt, look_big, look_small"
rm -rf "$work"
