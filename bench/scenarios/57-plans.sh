# bench/scenarios/57-plans.sh -- what the planner's use of a bloomfilter
# index costs per absent-key lookup: pages read per SELECT ... WHERE k =
# const, planning included
#
# Rows:
#   1. mean pages per probe over 1 000 random absent keys (about 1 % of
#      them false positives of the 1 % filter), table with a bloomfilter
#      index and a btree / table with the btree only (target <= 2)
#   2. the same with only the bloomfilter index (info: a false positive
#      plans a table scan, as without the index)
#   3. a plan made while the key was absent, run after it was inserted:
#      pages with bloomfilter + btree / btree only (info: no cliff)
# Pages are the heap and index blocks the table's statistics count
# (pg_statio_user_tables: hits and reads), so they include the planner's
# probe of the filter.  Sourced by run-inner.sh with lib.sh loaded.

PN="${BENCH_PLAN_ROWS:-1000000}"
PROBES=1000
log "57-plans: $PN rows, $PROBES absent keys"
for t in pl_both pl_bt pl_bf; do
	q "DROP TABLE IF EXISTS $t; CREATE TABLE $t (id bigint, k text);
	INSERT INTO $t SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $PN) g;"
done
q "CREATE INDEX ON pl_both USING bloomfilter (k) WITH (capacity = $PN, fpr = 0.01);
CREATE INDEX ON pl_both (k);
CREATE INDEX ON pl_bt (k);
CREATE INDEX ON pl_bf USING bloomfilter (k) WITH (capacity = $PN, fpr = 0.01);
VACUUM ANALYZE pl_both; VACUUM ANALYZE pl_bt; VACUUM ANALYZE pl_bf;
CREATE TABLE pl_keys AS SELECT 'absent' || (random() * 1e9)::int || '@example.com' AS k
	FROM generate_series(1, $PROBES);" >/dev/null

pages() { # table -> blocks counted so far
	q "SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) +
		coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0) FROM pg_statio_user_tables WHERE relname = '$1'"
}
declare -A P=()
for t in pl_both pl_bt pl_bf; do
	# warm the caches (relcache, filter metapage), then count; each q is
	# its own session, whose statistics are flushed when it ends
	q "SELECT count(*) FROM $t WHERE k = 'warm'" >/dev/null
	before="$(pages "$t")"
	q "DO \$\$ DECLARE r record; n bigint; BEGIN
		FOR r IN SELECT k FROM pl_keys LOOP
			EXECUTE format('SELECT count(*) FROM $t WHERE k = %L', r.k) INTO n;
		END LOOP; END \$\$"
	after="$(pages "$t")"
	P[$t]="$(awk -v a="$before" -v b="$after" -v n=$PROBES 'BEGIN { printf "%.2f", (b - a) / n }')"
	log "57-plans: $t: ${P[$t]} pages per probe"
done
fp="$(q "SELECT count(*) FROM pl_keys WHERE bf_index_contains('pl_bf_k_idx', k)")"
row "1. pages per absent-key probe, bloomfilter + btree / btree only" "$(ratio "${P[pl_both]}" "${P[pl_bt]}")" "<= 2" \
	"$PROBES random absent text keys, SELECT count(*) ... WHERE k = '<literal>' planned per key, $(fmt_int "$PN") rows; pages per probe: bloomfilter + btree ${P[pl_both]}, btree only ${P[pl_bt]} ($fp of the keys are false positives of the filter)"
row "2. pages per absent-key probe, bloomfilter only" "${P[pl_bf]}" "(info)" \
	"same keys; a false positive plans a table scan of $(q "SELECT relpages FROM pg_class WHERE relname = 'pl_bf'") pages, as the query would without the index"

# ---- 3. a plan made for an absent key, run after the key was inserted ----
for t in pl_both pl_bt; do
	q "SELECT count(*) FROM $t WHERE k = 'warm'" >/dev/null
	before="$(pages "$t")"
	q "PREPARE p AS SELECT count(*) FROM $t WHERE k = 'late@example.com';
	EXECUTE p;
	INSERT INTO $t VALUES (0, 'late@example.com');
	EXECUTE p; EXECUTE p; EXECUTE p;" >/dev/null
	after="$(pages "$t")"
	P[$t.late]=$((after - before))
done
row "3. cached plan, key inserted after planning: pages, bloomfilter + btree / btree only" \
	"${P[pl_both.late]} / ${P[pl_bt.late]}" "(info)" \
	"PREPARE for an absent literal key, EXECUTE, INSERT the key, EXECUTE three times: all pages of the four runs and the insert; the bloomfilter plan finds the row through the btree, not by scanning the table"
q "DROP TABLE pl_both, pl_bt, pl_bf, pl_keys"
