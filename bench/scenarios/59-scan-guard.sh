# bench/scenarios/59-scan-guard.sh -- scan guards (bloomfilter.guard_scans):
# lookups by a prepared statement's generic plan, SELECT id FROM t WHERE
# k = $1, on a table of GN rows with a btree and a bloomfilter index on k,
# with the guard on and off (off: the btree alone, the plan drivers reach
# after five executions)
#
# Rows:
#   1. pages per absent-key lookup, guarded / btree alone (target <= 0.4)
#   2. pages per present-key lookup, guarded / btree alone (target <= 1.35)
#   3. absent-key lookups per second, pgbench -M prepared, 1 client:
#      guarded / btree alone, the medians of alternated runs (target >= 1.0)
#   4. the same with 8 clients (target >= 1.0)
#   5. pages read from outside shared_buffers per absent-key lookup after
#      the buffers were filled by another table larger than them: guarded /
#      btree alone (info)
# Pages are the heap and index blocks of the table (pg_statio_user_tables:
# hits and reads), over GK lookups by a PL/pgSQL loop whose statement is
# planned generic (plan_cache_mode = force_generic_plan).  Every session
# preloads the library (session_preload_libraries), as docs/scan-guards.md
# advises.  BENCH_GUARD_ROWS (10000000) sizes the table, BENCH_GUARD_SECS
# (6) each pgbench run, BENCH_GUARD_ROUNDS (5) the runs of each kind.
# Sourced by run-inner.sh with lib.sh loaded.

GN="${BENCH_GUARD_ROWS:-10000000}"
GK=1000
GSECS="${BENCH_GUARD_SECS:-6}"
GROUNDS="${BENCH_GUARD_ROUNDS:-5}"
PRELOAD="-c session_preload_libraries=bloomfilter -c plan_cache_mode=force_generic_plan"
ON="$PRELOAD -c bloomfilter.guard_scans=on"
OFF="$PRELOAD -c bloomfilter.guard_scans=off"
log "59-scan-guard: $GN rows, $GK keys per measure"
q "DROP TABLE IF EXISTS sgb, sgb_absent, sgb_present;
CREATE TABLE sgb (id bigint, k text);
INSERT INTO sgb SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $GN) g;
CREATE INDEX sgb_k ON sgb (k);
CREATE INDEX sgb_k_bf ON sgb USING bloomfilter (k) WITH (capacity = $GN, fpr = 0.01);
VACUUM ANALYZE sgb;
CREATE TABLE sgb_absent AS SELECT 'user' || (random() * 1e9)::bigint || '@example.org' AS k
	FROM generate_series(1, $GK);
CREATE TABLE sgb_present AS SELECT 'user' || (1 + (random() * ($GN - 1))::bigint) || '@example.com' AS k
	FROM generate_series(1, $GK);" >/dev/null

counts() { # -> hits+reads, reads of sgb's heap and indexes
	q "SELECT coalesce(heap_blks_hit, 0) + coalesce(heap_blks_read, 0) +
		coalesce(idx_blks_hit, 0) + coalesce(idx_blks_read, 0),
		coalesce(heap_blks_read, 0) + coalesce(idx_blks_read, 0)
		FROM pg_statio_user_tables WHERE relname = 'sgb'"
}
# pages (all, or read) per lookup of the keys of table $2 with options $1
per_lookup() {
	local before after
	PGOPTIONS="$1" q "SELECT count(*) FROM sgb WHERE k = 'warm'" >/dev/null
	before="$(counts)"
	PGOPTIONS="$1" q "DO \$\$ DECLARE r record; x bigint; BEGIN
		FOR r IN SELECT k FROM $2 LOOP
			SELECT id INTO x FROM sgb WHERE k = r.k;
		END LOOP; END \$\$"
	after="$(counts)"
	awk -F'|' -v a="$before" -v b="$after" -v n=$GK -v col="$3" 'BEGIN {
		split(a, x, "|"); split(b, y, "|"); printf "%.2f", (y[col] - x[col]) / n }'
}
plan="$(PGOPTIONS="$ON" q "PREPARE p(text) AS SELECT id FROM sgb WHERE k = \$1;
EXPLAIN (COSTS OFF) EXECUTE p('x')" | head -1)"
log "59-scan-guard: generic plan with the guard on: $plan"
abs_on="$(per_lookup "$ON" sgb_absent 1)"
abs_off="$(per_lookup "$OFF" sgb_absent 1)"
pre_on="$(per_lookup "$ON" sgb_present 1)"
pre_off="$(per_lookup "$OFF" sgb_present 1)"
fp="$(q "SELECT count(*) FROM sgb_absent WHERE bf_index_contains('sgb_k_bf', k)")"
row "1. pages per absent-key lookup, generic plan: guarded / btree alone" "$(ratio "$abs_on" "$abs_off")" "<= 0.4" \
	"$GK random absent keys, SELECT id FROM sgb WHERE k = \$1 (generic plan), $(fmt_int "$GN") rows; pages per lookup: guarded $abs_on, btree alone $abs_off ($fp of the keys are false positives of the filter)"
row "2. pages per present-key lookup, generic plan: guarded / btree alone" "$(ratio "$pre_on" "$pre_off")" "<= 1.35" \
	"$GK random present keys; pages per lookup: guarded $pre_on, btree alone $pre_off"

# ---- throughput: pgbench, prepared statements ----
pgbench="$(pg_config --bindir)/pgbench"
script="$(mktemp /tmp/bf-bench-guard.XXXXXX)"
cat >"$script" <<'SQL'
\set r random(1, 1000000000)
SELECT id FROM sgb WHERE k = 'user' || :r || '@example.org';
SQL
tps() { # options, clients -> transactions per second
	PGOPTIONS="$1" "$pgbench" -n -M prepared -f "$script" -c "$2" -j 2 -T "$GSECS" "$BENCH_DB" 2>/dev/null |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for c in 1 8; do
	runs_on=() runs_off=()
	for _ in $(seq "$GROUNDS"); do
		runs_off+=("$(tps "$OFF" $c)")
		runs_on+=("$(tps "$ON" $c)")
	done
	med_on="$(printf '%s\n' "${runs_on[@]}" | median)"
	med_off="$(printf '%s\n' "${runs_off[@]}" | median)"
	log "59-scan-guard: $c clients: guarded ${runs_on[*]}, btree alone ${runs_off[*]} tps"
	row "$((c == 1 ? 3 : 4)). absent-key lookups per second, $c client(s): guarded / btree alone" \
		"$(ratio "$med_on" "$med_off")" ">= 1.0" \
		"pgbench -M prepared -c $c -j 2 -T $GSECS, SELECT id FROM sgb WHERE k = (an absent key made from a random number) (generic plan), median of $GROUNDS alternated runs: guarded $(printf %.0f "$med_on") tps, btree alone $(printf %.0f "$med_off") tps"
done
rm -f "$script"

# ---- larger than shared_buffers: pages read ----
sb="$(q "SELECT pg_size_bytes(current_setting('shared_buffers'))")"
sz="$(q "SELECT pg_total_relation_size('sgb')")"
# fill the buffers with another table, so that the lookups read their pages
# (read by an index scan: a sequential scan of a large table reads through
# a small ring of buffers and would evict nothing)
q "DROP TABLE IF EXISTS sgb_evict; CREATE TABLE sgb_evict (id int, pad text);
INSERT INTO sgb_evict SELECT g, repeat('x', 900) FROM generate_series(1, ($sb / 8192 + 1000) * 8) g;
CREATE INDEX ON sgb_evict (id);" >/dev/null
evict() {
	q "SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT sum(length(pad)) FROM sgb_evict WHERE id > 0" >/dev/null
}
evict
rd_off="$(per_lookup "$OFF" sgb_absent 2)"
evict
rd_on="$(per_lookup "$ON" sgb_absent 2)"
row "5. pages read per absent-key lookup, buffers filled by another table: guarded / btree alone" \
	"$rd_on / $rd_off" "(info)" \
	"table and indexes $(q "SELECT pg_size_pretty($sz::bigint)"), shared_buffers $(q "SELECT pg_size_pretty($sb::bigint)"), each run after a scan of a table larger than the buffers; blocks read (not hit) per lookup"
q "DROP TABLE sgb, sgb_absent, sgb_present, sgb_evict"
