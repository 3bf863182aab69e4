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
#   5. run-time filters (bloomfilter.runtime_join_filter, no index): a hash
#      join in several batches (work_mem 4MB) of RO outer rows, 90 % of
#      their keys absent, against RI inner rows: off / on (target >= 2);
#      every outer key present: on / off (target <= 1.05: the filter
#      switches itself off after 10 000 keys that all pass)
#   5b. the same two joins with the hash table in memory (work_mem 1GB):
#      off / on (info: auto gives a filter to hash tables of 1 MB or more)
#      and every key present: on / off (<= 1.05)
#   6. a TPC-H-like star query: a fact table of ST rows (lineitem: part
#      and supplier keys) joined to two dimensions filtered to 2 % (part,
#      one type of 50) and 4 % (supplier, one nation of 25), hash joins in
#      memory: run-time filters off / on, and off / auto (info: report the
#      gain)
# BENCH_RT_OUTER (10000000) and BENCH_RT_INNER (1000000) size row 5,
# BENCH_STAR_FACT (5000000) row 6.
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
# off: no join filter and no scan guard, which would otherwise skip the
# nested loop's inner btree scan for an absent key in the baseline too
timed_join() {
	local guard=on
	[ "$1" = off ] && guard=off
	PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.runtime_join_filter=off -c bloomfilter.join_filter=$1 -c bloomfilter.guard_scans=$guard $2" time_ms "$3"
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

# run-time filters: no index, the index pre-filter off; the hash join's
# inner side (RI rows) is several times work_mem, so it spills to batches
RO="${BENCH_RT_OUTER:-10000000}"
RI="${BENCH_RT_INNER:-1000000}"
log "58-join-filter: run-time filters: outer $RO rows, inner $RI rows"
q "DROP TABLE IF EXISTS rt_inner, rt_outer, rt_present;
CREATE TABLE rt_inner (id bigint, payload int);
INSERT INTO rt_inner SELECT 2 * g, g % 1000 FROM generate_series(1, $RI) g;
-- 10 % of the outer keys in the inner table, 90 % absent (odd), in random order
CREATE TABLE rt_outer AS
	SELECT 2 * ((hashint8(g) & 2147483647) % $RI) + CASE WHEN g % 10 = 0 THEN 2 ELSE 1 END AS k
	FROM generate_series(1, $RO) g;
CREATE TABLE rt_present AS SELECT 2 * ((hashint8(g) & 2147483647) % $RI) + 2 AS k
	FROM generate_series(1, $RO) g;
VACUUM ANALYZE rt_inner; VACUUM ANALYZE rt_outer; VACUUM ANALYZE rt_present;" >/dev/null

# timed_runtime MODE SQL: the best time with bloomfilter.runtime_join_filter = MODE
timed_runtime() {
	PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=off -c bloomfilter.runtime_join_filter=$1 -c work_mem=4MB -c enable_mergejoin=off -c enable_nestloop=off" time_ms "$2"
}
rt_join="SELECT count(*) FROM rt_outer o JOIN rt_inner i ON i.id = o.k"
rt_plan="$(PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=off -c bloomfilter.runtime_join_filter=on -c work_mem=4MB -c enable_mergejoin=off -c enable_nestloop=off" \
	q "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $rt_join" | tr '\n' ' ' | tr -s ' ')"
log "58-join-filter: plan with the run-time filter: $rt_plan"
r_off="$(timed_runtime off "$rt_join")"
r_on="$(timed_runtime on "$rt_join")"
row "22.2 multi-batch hash join (work_mem 4MB), $(fmt_int "$RO") outer rows, $(fmt_int "$RI")-row inner side, 90 % outer keys absent: runtime filter off / on" \
	"$(ratio "$r_off" "$r_on")" ">= 2" \
	"off $r_off ms, on $r_on ms; plan: $rt_plan"
rt_present="SELECT count(*) FROM rt_present o JOIN rt_inner i ON i.id = o.k"
rp_off="$(timed_runtime off "$rt_present")"
rp_on="$(timed_runtime on "$rt_present")"
row "22.3 runtime filter, every outer key present: on / off" "$(ratio "$rp_on" "$rp_off")" "<= 1.05" \
	"multi-batch hash join: off $rp_off ms, on $rp_on ms (the filter passes its first 10 000 keys, then switches itself off)"
# the same joins with the hash table in memory (work_mem 1GB, the server's):
# on / off, as auto would run them with a good estimate (this one's is
# not: the planner expects 84 % of the outer rows to join, so auto leaves
# the join alone, as it should for a join that keeps most rows)
timed_inmem() {
	PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=off -c bloomfilter.runtime_join_filter=$1 -c work_mem=1GB -c enable_mergejoin=off -c enable_nestloop=off" time_ms "$2"
}
m_off="$(timed_inmem off "$rt_join")"
m_on="$(timed_inmem on "$rt_join")"
row "22.5 hash join in memory (work_mem 1GB, a 1 M-row hash table), 90 % absent: runtime filter off / on" "$(ratio "$m_off" "$m_on")" "(info)" \
	"off $m_off ms, on $m_on ms (auto gives a filter to a hash table of 1 MB or more where the planner expects it to drop enough)"
mp_off="$(timed_inmem off "$rt_present")"
mp_on="$(timed_inmem on "$rt_present")"
row "22.5 hash join in memory, every outer key present: on / off" "$(ratio "$mp_on" "$mp_off")" "<= 1.05" \
	"off $mp_off ms, on $mp_on ms (the filter switches itself off after 10 000 keys)"

q "DROP TABLE rt_inner, rt_outer, rt_present" >/dev/null

# a star query: the fact rows whose part or supplier the dimensions'
# filters leave out find no partner; a run-time filter of each hash join
# drops them in the fact table's scan
ST="${BENCH_STAR_FACT:-5000000}"
log "58-join-filter: star query: $ST fact rows"
q "DROP TABLE IF EXISTS st_lineitem, st_part, st_supp;
CREATE TABLE st_part (p_partkey int PRIMARY KEY, p_type text);
INSERT INTO st_part SELECT g, 'TYPE' || (g % 50) FROM generate_series(1, 200000) g;
CREATE TABLE st_supp (s_suppkey int PRIMARY KEY, s_nation int);
INSERT INTO st_supp SELECT g, g % 25 FROM generate_series(1, 10000) g;
CREATE TABLE st_lineitem (l_partkey int, l_suppkey int, l_quantity int);
INSERT INTO st_lineitem SELECT 1 + (hashint4(g) & 2147483647) % 200000,
	1 + (hashint4(g + 7777777) & 2147483647) % 10000, g % 50
	FROM generate_series(1, $ST) g;
VACUUM ANALYZE st_part; VACUUM ANALYZE st_supp; VACUUM ANALYZE st_lineitem;" >/dev/null
star="SELECT sum(l_quantity) FROM st_lineitem l JOIN st_part p ON p.p_partkey = l.l_partkey
	JOIN st_supp s ON s.s_suppkey = l.l_suppkey WHERE p.p_type = 'TYPE7' AND s.s_nation = 7"
timed_star() {
	PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=off -c bloomfilter.runtime_join_filter=$1 -c enable_mergejoin=off -c enable_nestloop=off" time_ms "$2"
}
st_plan="$(PGOPTIONS="-c session_preload_libraries=bloomfilter -c bloomfilter.join_filter=off -c bloomfilter.runtime_join_filter=on -c enable_mergejoin=off -c enable_nestloop=off" \
	q "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) $star" | tr '\n' ' ' | tr -s ' ')"
log "58-join-filter: star plan with run-time filters: $st_plan"
st_off="$(timed_star off "$star")"
st_on="$(timed_star on "$star")"
st_auto="$(timed_star auto "$star")"
row "22.4 star query (fact ⋈ two filtered dimensions, $(fmt_int "$ST") fact rows): runtime filters off / on" \
	"$(ratio "$st_off" "$st_on")" "(info)" \
	"off $st_off ms, on $st_on ms, auto $st_auto ms (off / auto $(ratio "$st_off" "$st_auto"): auto leaves in-memory hash joins alone); plan: $st_plan"
q "DROP TABLE st_lineitem, st_part, st_supp" >/dev/null
