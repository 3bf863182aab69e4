# bench/scenarios/58-join-filter.sh -- join pre-filters from a bloomfilter
# index (bloomfilter.join_filter): the same query with the filter on and off
#
# Rows (best of BENCH_REPS each; the library preloaded in every session):
#   1. semi-join (EXISTS) of JO outer keys, 90 % absent, against a table of
#      JI rows with a btree and a bloomfilter index on the key, nested loop
#      with an index-only scan: off / on (target >= 2)
#   2. the same as an inner join                                 (info)
#      and as an anti-join (NOT EXISTS; the filter on the inner scan) (>= 2)
#   3. every outer key present: on / off (target <= 1.05: the filter
#      switches itself off after 10 000 keys that all pass)
#   4. a hash join (inner side in memory), 90 % absent: off / on (info: why
#      auto leaves in-memory hash joins alone)
# Sourced by run-inner.sh with lib.sh loaded.

JI="${BENCH_JOIN_INNER:-10000000}"
JO="${BENCH_JOIN_OUTER:-1000000}"
log "58-join-filter: inner $JI rows, outer $JO keys"
q "DROP TABLE IF EXISTS jf_inner, jf_outer, jf_present;
-- the even ids; an absent key is an odd one among them, so that its btree
-- descent goes where a present key's would (not to the last page)
CREATE TABLE jf_inner (id bigint, payload int);
INSERT INTO jf_inner SELECT 2 * g, g % 1000 FROM generate_series(1, $JI) g;
CREATE INDEX ON jf_inner (id);
CREATE INDEX jf_inner_bf ON jf_inner USING bloomfilter (id) WITH (capacity = $JI, fpr = 0.01);
-- 10 % of the outer keys in the inner table, 90 % absent, in random order
CREATE TABLE jf_outer AS
	SELECT 2 * ((hashint8(g) & 2147483647) % $JI) + CASE WHEN g % 10 = 0 THEN 2 ELSE 1 END AS k
	FROM generate_series(1, $JO) g;
CREATE TABLE jf_present AS SELECT 2 * ((hashint8(g) & 2147483647) % $JI) + 2 AS k FROM generate_series(1, $JO) g;
VACUUM ANALYZE jf_inner; VACUUM ANALYZE jf_outer; VACUUM ANALYZE jf_present;" >/dev/null

# timed_join MODE SETTINGS SQL: the best time with bloomfilter.join_filter = MODE
timed_join() {
	PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=$1 $2" time_ms "$3"
}
nl="-c enable_hashjoin=off -c enable_mergejoin=off"
semi="SELECT count(*) FROM jf_outer o WHERE EXISTS (SELECT 1 FROM jf_inner i WHERE i.id = o.k)"
inner="SELECT count(*) FROM jf_outer o JOIN jf_inner i ON i.id = o.k"
plan="$(PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=on $nl" q "EXPLAIN (COSTS OFF) $semi" | tr '\n' ' ' | tr -s ' ')"
log "58-join-filter: plan with the filter: $plan"

s_off="$(timed_join off "$nl" "$semi")"
s_on="$(timed_join on "$nl" "$semi")"
row "22.1 semi-join, nested loop + btree, 90 % absent: off / on" "$(ratio "$s_off" "$s_on")" ">= 2" \
	"EXISTS over $(fmt_int "$JO") outer keys against $(fmt_int "$JI") rows: off $s_off ms, on $s_on ms; plan: $plan"
i_off="$(timed_join off "$nl" "$inner")"
i_on="$(timed_join on "$nl" "$inner")"
row "22.1 inner join, nested loop + btree, 90 % absent: off / on" "$(ratio "$i_off" "$i_on")" "(info)" \
	"off $i_off ms, on $i_on ms"
anti="SELECT count(*) FROM jf_outer o WHERE NOT EXISTS (SELECT 1 FROM jf_inner i WHERE i.id = o.k)"
a_off="$(timed_join off "$nl" "$anti")"
a_on="$(timed_join on "$nl" "$anti")"
row "22.1 anti-join, nested loop + btree, 90 % absent: off / on" "$(ratio "$a_off" "$a_on")" ">= 2" \
	"NOT EXISTS: off $a_off ms, on $a_on ms (the inner index scan under a Result whose one-time filter asks the index first)"
present="SELECT count(*) FROM jf_present o WHERE EXISTS (SELECT 1 FROM jf_inner i WHERE i.id = o.k)"
p_off="$(timed_join off "$nl" "$present")"
p_on="$(timed_join on "$nl" "$present")"
row "22.3 every outer key present: on / off" "$(ratio "$p_on" "$p_off")" "<= 1.05" \
	"EXISTS, nested loop: off $p_off ms, on $p_on ms (the filter passes its first 10 000 keys, then switches itself off)"
h_off="$(timed_join off "" "$semi")"
h_on="$(timed_join on "" "$semi")"
row "22.x hash semi-join, inner side in memory, 90 % absent: off / on" "$(ratio "$h_off" "$h_on")" "(info)" \
	"off $h_off ms, on $h_on ms (work_mem 1GB: one batch; auto leaves such joins alone)"

q "DROP TABLE jf_inner, jf_outer, jf_present" >/dev/null
