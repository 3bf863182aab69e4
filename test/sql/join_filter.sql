--
-- Join pre-filters from bloomfilter indexes (bloomfilter.join_filter;
-- src/join/bf_join_plan.c): the scan of a join's outer keys gets the qual
-- bf_join_prefilter(index, key) where the inner table has a bloomfilter
-- index on the key and dropping an outer row without a partner is what the
-- join does anyway.  Where it is added and where not, that results do not
-- change, rights and row-level security, plans made again when the index
-- goes, and the qual's own fail-safe answers.  (Generated queries compared
-- with the filter off and on: test/join_diff.py.)
--
LOAD 'bloomfilter';
\i test/sql/include/explain.sql
SET max_parallel_workers_per_gather = 0;
-- the scan guards (test/sql/scan_guard.sql) would gate inner index scans too
SET bloomfilter.guard_scans = off;
CREATE TABLE jf_big (id bigint, k int, k8 bigint, t text);
INSERT INTO jf_big SELECT g, g % 20000, g % 20000, 'key' || (g % 20000)
FROM generate_series(1, 40000) g;
INSERT INTO jf_big VALUES (0, NULL, NULL, NULL);
CREATE TABLE jf_small (k int PRIMARY KEY, k8 bigint, t text, note text);
INSERT INTO jf_small SELECT g * 10, g * 10, 'key' || (g * 10), 'n' || g FROM generate_series(1, 500) g;
CREATE INDEX jf_small_k_bf ON jf_small USING bloomfilter (k);
CREATE INDEX jf_small_k8_bf ON jf_small USING bloomfilter (k8);
CREATE INDEX jf_small_t_bf ON jf_small USING bloomfilter (t);
ANALYZE jf_big, jf_small;

-- on: wherever safe
SET bloomfilter.join_filter = on;
-- a hash join: the outer scan drops the keys the index does not hold
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
-- (EXPLAIN ANALYZE's lines about the filter only: the rest of its format
-- differs between versions)
SELECT test_explain('SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k', 'Filter');
-- a semi-join (EXISTS, IN), the outer side of a right join
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k);
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b WHERE b.t IN (SELECT t FROM jf_small);
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b RIGHT JOIN jf_small s ON s.k = b.k;
-- int4 = int8: integers hash alike whatever their width
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k8 = b.k;
-- a nested loop over the primary key: the filter spares the btree descents
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
EXPLAIN (COSTS OFF) SELECT sum(length(s.note)) FROM jf_big b JOIN jf_small s ON s.k = b.k;
-- a merge join with jf_big the sorted inner side: jf_small's keys have no
-- index of jf_big's to ask, so no filter
SET enable_nestloop = off; SET enable_mergejoin = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
-- never where an outer row without a partner is kept: left, full, anti
EXPLAIN (COSTS OFF) SELECT count(s.k) FROM jf_big b LEFT JOIN jf_small s ON s.k = b.k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b FULL JOIN jf_small s ON s.k = b.k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b WHERE NOT EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k);
-- an anti join by nested loop: its inner index scan asks the index first
-- (a Result's one-time filter, again for each outer key), and an outer key
-- the index says is absent is emitted without a btree descent
-- (no Memoize, which 19 puts over the inner side of an anti join too)
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b WHERE NOT EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k);
SELECT test_explain('SELECT count(*) FROM jf_big b WHERE NOT EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k)',
					'(Anti Join|Result|Only Scan)', true);
CREATE TEMP TABLE jf_anti AS
SELECT count(*) AS n, sum(b.id) AS total FROM jf_big b WHERE NOT EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k);
SET bloomfilter.join_filter = off;
SELECT a.n, a.total, (a.n, a.total) = (SELECT count(*), sum(b.id) FROM jf_big b
									   WHERE NOT EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k)) AS same
FROM jf_anti a;
SET bloomfilter.join_filter = on;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_memoize;
-- nor below a limit (it would change which rows the limit takes)
EXPLAIN (COSTS OFF) SELECT count(*) FROM (SELECT * FROM jf_big LIMIT 100) b JOIN jf_small s ON s.k = b.k;
-- nor for an inner key that is an expression of the column
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k + 0 = b.k;

-- composite keys: a two-column index answers for a row of both keys
CREATE TABLE jf_pairs (a int, b text);
INSERT INTO jf_pairs SELECT g % 50, 'key' || (g % 20000) FROM generate_series(1, 20000) g;
CREATE TABLE jf_pair_dim (a bigint, b text, PRIMARY KEY (a, b));
INSERT INTO jf_pair_dim SELECT g % 50, 'key' || (g * 10) FROM generate_series(1, 500) g;
CREATE INDEX jf_pair_dim_bf ON jf_pair_dim USING bloomfilter (a, b);
ANALYZE jf_pairs, jf_pair_dim;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_pairs p JOIN jf_pair_dim d ON d.a = p.a AND d.b = p.b;
-- one column of the two joined: the index cannot answer
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_pairs p JOIN jf_pair_dim d ON d.b = p.b;

-- the same answers with and without
CREATE FUNCTION jf_answers() RETURNS TABLE (q int, n bigint, total numeric) LANGUAGE sql AS $$
	SELECT 1, count(*), sum(b.id) FROM jf_big b JOIN jf_small s ON s.k = b.k
	UNION ALL SELECT 2, count(*), sum(b.id) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_small s WHERE s.k = b.k)
	UNION ALL SELECT 3, count(*), sum(b.id) FROM jf_big b WHERE b.t IN (SELECT t FROM jf_small)
	UNION ALL SELECT 4, count(*), sum(b.id) FROM jf_big b RIGHT JOIN jf_small s ON s.k = b.k
	UNION ALL SELECT 5, count(*), sum(b.id) FROM jf_big b JOIN jf_small s ON s.k8 = b.k
	UNION ALL SELECT 6, count(*), sum(b.id) FROM jf_big b LEFT JOIN jf_small s ON s.k = b.k WHERE s.k IS NULL
	UNION ALL SELECT 7, count(*), sum(length(p.b)) FROM jf_pairs p JOIN jf_pair_dim d ON d.a = p.a AND d.b = p.b $$;
CREATE TEMP TABLE jf_on AS SELECT * FROM jf_answers();
SET bloomfilter.join_filter = off;
SELECT q, n, total, (SELECT n = o.n AND total = o.total FROM jf_on o WHERE o.q = a.q) AS same
FROM jf_answers() a ORDER BY q;
-- off: no filter
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;

-- auto: not for a hash join whose inner side fits in memory (a lookup
-- costs more than its probe), but for a nested loop that drops enough
SET bloomfilter.join_filter = auto;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
RESET enable_hashjoin; RESET enable_mergejoin;

-- a plan made with the filter is made again when the index goes
SET bloomfilter.join_filter = on;
PREPARE jf_q AS SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
EXECUTE jf_q;
EXPLAIN (COSTS OFF) EXECUTE jf_q;
DROP INDEX jf_small_k_bf;
EXECUTE jf_q;
EXPLAIN (COSTS OFF) EXECUTE jf_q;
DEALLOCATE jf_q;
CREATE INDEX jf_small_k_bf ON jf_small USING bloomfilter (k);

-- rights: a user who may read the tables gets the filter; one whom
-- row-level security restricts on the inner table does not (the filter
-- holds the keys of the rows it hides), nor one without SELECT on the key
CREATE ROLE jf_reader;
GRANT SELECT ON jf_big, jf_small TO jf_reader;
SET ROLE jf_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
RESET ROLE;
ALTER TABLE jf_small ENABLE ROW LEVEL SECURITY;
CREATE POLICY jf_some ON jf_small TO jf_reader USING (k < 1000);
SET ROLE jf_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
SELECT count(*) FROM jf_big b JOIN jf_small s ON s.k = b.k;
RESET ROLE;
ALTER TABLE jf_small DISABLE ROW LEVEL SECURITY;
-- the qual itself never fails: an index it may not read, or one that is
-- gone, makes it say "maybe" to every key
REVOKE SELECT ON jf_small FROM jf_reader;
GRANT SELECT (note) ON jf_small TO jf_reader;
CREATE TABLE jf_mine (k int);
INSERT INTO jf_mine VALUES (1);
CREATE INDEX jf_mine_bf ON jf_mine USING bloomfilter (k);
GRANT SELECT ON jf_mine TO jf_reader;
SET ROLE jf_reader;
SELECT bf_join_prefilter('jf_small_k_bf', 5) AS unreadable_passes;
-- nor when called from SQL with another index per row: each is checked
SELECT x.i, x.k, bf_join_prefilter(x.i, x.k) AS passes
FROM (VALUES ('jf_mine_bf'::regclass, 1), ('jf_mine_bf'::regclass, 2),
			 ('jf_small_k_bf'::regclass, 5), ('jf_small_k_bf'::regclass, 10)) x(i, k);
RESET ROLE;
DROP TABLE jf_mine;
SELECT bf_join_prefilter('jf_small_k_bf', 5) AS absent, bf_join_prefilter('jf_small_k_bf', 10) AS present,
	   bf_join_prefilter('jf_small_k_bf', NULL::int) AS null_key;
SELECT bf_join_prefilter('jf_small'::regclass, 5) AS not_an_index_passes;
-- it switches itself off where it drops less than a tenth of 10 000 keys,
-- and stays on where it drops more
SELECT count(*) FILTER (WHERE bf_join_prefilter('jf_small_k_bf', -g)) AS passed_of_absent
FROM generate_series(1, 20000) g;
SELECT count(*) FILTER (WHERE bf_join_prefilter('jf_small_k_bf', CASE WHEN g <= 10000 THEN 10 ELSE -g END)) AS passed
FROM generate_series(1, 20000) g;
-- a call site that goes on testing copies the index's bits into the
-- query's memory (after 10 000 keys here): it answers as the index does,
-- for a growing index of several layers, for two key columns, and for
-- keys this transaction inserted before the query
CREATE TABLE jf_copy (k int, t text);
CREATE INDEX jf_copy_k_bf ON jf_copy USING bloomfilter (k) WITH (capacity = 2000, growth = 2);
CREATE INDEX jf_copy_kt_bf ON jf_copy USING bloomfilter (k, t);
INSERT INTO jf_copy SELECT 2 * g, 't' || (2 * g) FROM generate_series(1, 30000) g;
SELECT count(*) > 2 AS several_layers FROM bf_index_layers('jf_copy_k_bf');
BEGIN;
INSERT INTO jf_copy SELECT 2 * g, 't' || (2 * g) FROM generate_series(30001, 30100) g;
SELECT count(*) FILTER (WHERE f IS DISTINCT FROM c) AS disagree,
	   count(*) FILTER (WHERE g % 2 = 0 AND g <= 60200 AND NOT f) AS present_dropped,
	   count(*) FILTER (WHERE NOT f) > 19000 AS drops
FROM (SELECT g, bf_join_prefilter('jf_copy_k_bf', g) AS f, bf_index_contains('jf_copy_k_bf', g) AS c
	  FROM generate_series(1, 80000) g) s;
SELECT count(*) FILTER (WHERE f IS DISTINCT FROM c) AS disagree,
	   count(*) FILTER (WHERE g % 2 = 0 AND g <= 60200 AND NOT f) AS present_dropped,
	   count(*) FILTER (WHERE NOT f) > 19000 AS drops
FROM (SELECT g, bf_join_prefilter('jf_copy_kt_bf', ROW(g, 't' || g)) AS f,
			 bf_index_contains('jf_copy_kt_bf', ROW(g, 't' || g)) AS c
	  FROM generate_series(1, 80000) g) s;
COMMIT;
-- the scans of a partitioned outer table: a call site each, one copy of
-- the index for the query, every key that joins found
CREATE TABLE jf_copy_out (k int) PARTITION BY RANGE (k);
CREATE TABLE jf_copy_out_1 PARTITION OF jf_copy_out FOR VALUES FROM (MINVALUE) TO (40000);
CREATE TABLE jf_copy_out_2 PARTITION OF jf_copy_out FOR VALUES FROM (40000) TO (MAXVALUE);
INSERT INTO jf_copy_out SELECT g FROM generate_series(1, 80000) g;
ANALYZE jf_copy, jf_copy_out;
SET enable_partitionwise_join = off;
SELECT test_explain('SELECT count(*) FROM jf_copy_out o WHERE EXISTS (SELECT 1 FROM jf_copy c WHERE c.k = o.k)',
					'(Seq Scan on jf_copy_out|Filter)');
SELECT count(*) AS joined FROM jf_copy_out o WHERE EXISTS (SELECT 1 FROM jf_copy c WHERE c.k = o.k);
SET bloomfilter.join_filter = off;
SELECT count(*) AS joined_without FROM jf_copy_out o WHERE EXISTS (SELECT 1 FROM jf_copy c WHERE c.k = o.k);
SET bloomfilter.join_filter = on;
RESET enable_partitionwise_join;
DROP TABLE jf_copy_out;

-- a partitioned inner table: its partitioned bloomfilter index (one index
-- per partition) answers for the keys of the Append of its partitions'
-- scans, pruned or not; an inheritance parent's index (its own rows only)
-- does not
CREATE TABLE jf_part (k int, note text) PARTITION BY RANGE (k);
CREATE TABLE jf_part_1 PARTITION OF jf_part FOR VALUES FROM (MINVALUE) TO (2000);
CREATE TABLE jf_part_2 PARTITION OF jf_part FOR VALUES FROM (2000) TO (MAXVALUE);
INSERT INTO jf_part SELECT g * 10, 'n' || g FROM generate_series(1, 500) g;
CREATE INDEX jf_part_k_bf ON jf_part USING bloomfilter (k);
ANALYZE jf_part;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_part p ON p.k = b.k;
SELECT test_explain('SELECT count(*) FROM jf_big b JOIN jf_part p ON p.k = b.k', 'Filter');
SELECT count(*) FROM jf_big b JOIN jf_part p ON p.k = b.k;
SELECT count(*) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_part p WHERE p.k = b.k8 AND p.k < 2000);
SET bloomfilter.join_filter = off;
SELECT count(*) FROM jf_big b JOIN jf_part p ON p.k = b.k;
SELECT count(*) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_part p WHERE p.k = b.k8 AND p.k < 2000);
SET bloomfilter.join_filter = on;
-- the qual asks every partition's index; a partitioned index made ON ONLY
-- the parent is invalid until each partition has its index: no filter
-- then, and the qual passes every key
SELECT bf_join_prefilter('jf_part_k_bf', 5) AS absent, bf_join_prefilter('jf_part_k_bf', 4990) AS present;
CREATE INDEX jf_part_note_bf ON ONLY jf_part USING bloomfilter (note);
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_part p ON p.note = b.t;
SELECT bf_join_prefilter('jf_part_note_bf', 'x'::text) AS invalid_passes;
CREATE INDEX jf_part_1_note_bf ON jf_part_1 USING bloomfilter (note);
ALTER INDEX jf_part_note_bf ATTACH PARTITION jf_part_1_note_bf;
SELECT bf_join_prefilter('jf_part_note_bf', 'x'::text) AS half_valid_passes;
CREATE TABLE jf_inh (k int);
CREATE TABLE jf_inh_child () INHERITS (jf_inh);
INSERT INTO jf_inh_child SELECT g * 10 FROM generate_series(1, 500) g;
CREATE INDEX jf_inh_k_bf ON jf_inh USING bloomfilter (k);
ANALYZE jf_inh, jf_inh_child;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_inh i ON i.k = b.k;
SELECT count(*) FROM jf_big b JOIN jf_inh i ON i.k = b.k;
DROP TABLE jf_part, jf_inh CASCADE;

-- A column tracked by the trigger method, with no bloomfilter index:
-- bf_join_tracked_prefilter(table, column, key) asks its filter as
-- bf_might_contain does, with the same rules (where it is added, rights,
-- row-level security) and the same fail-safe answers
CREATE TABLE jf_tracked (k int, note text);
INSERT INTO jf_tracked SELECT g * 10, 'n' || g FROM generate_series(1, 500) g;
SELECT bf_track('jf_tracked', 'k', 1000, 0.01, method => 'trigger');
ANALYZE jf_tracked;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_tracked s ON s.k = b.k;
SELECT test_explain('SELECT count(*) FROM jf_big b JOIN jf_tracked s ON s.k = b.k', 'Filter');
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_tracked s WHERE s.k = b.k8);
SELECT count(*) FROM jf_big b JOIN jf_tracked s ON s.k = b.k;
SELECT count(*) FROM jf_big b WHERE EXISTS (SELECT 1 FROM jf_tracked s WHERE s.k = b.k8);
-- keys written after the plan was made are found
PREPARE jf_tp AS SELECT count(*) FROM jf_big b JOIN jf_tracked s ON s.k = b.k;
EXECUTE jf_tp;
INSERT INTO jf_tracked VALUES (11), (12);
EXECUTE jf_tp;
SET bloomfilter.join_filter = off;
EXECUTE jf_tp;
SET bloomfilter.join_filter = on;
-- never on a preserved side
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b LEFT JOIN jf_tracked s ON s.k = b.k;
-- rights: not under row-level security; the qual itself passes every key
-- for a user without SELECT on the key, and for one under row-level
-- security
GRANT SELECT (note) ON jf_tracked TO jf_reader;
SET ROLE jf_reader;
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS unreadable_passes;
RESET ROLE;
GRANT SELECT ON jf_tracked TO jf_reader;
ALTER TABLE jf_tracked ENABLE ROW LEVEL SECURITY;
CREATE POLICY jf_t_some ON jf_tracked TO jf_reader USING (k < 1000);
SET ROLE jf_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_tracked s ON s.k = b.k;
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS rls_passes;
RESET ROLE;
ALTER TABLE jf_tracked DISABLE ROW LEVEL SECURITY;
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS absent,
	   bf_join_tracked_prefilter('jf_tracked', 'k', 10) AS present,
	   bf_join_tracked_prefilter('jf_tracked', 'note', 'x'::text) AS untracked_passes,
	   bf_join_tracked_prefilter('jf_big', 'k', 5) AS not_tracked_passes;
-- a stale filter (its sync triggers disabled): bf_might_contain refuses
-- it and the qual passes every key, whichever asks first (both keep
-- their checks in the session's lookups), until it is rebuilt
ALTER TABLE jf_tracked DISABLE TRIGGER USER;
SELECT bf_might_contain('jf_tracked', 'k', 5);
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS stale_passes;
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS stale_passes_again;
SELECT bf_might_contain('jf_tracked', 'k', 5);
SELECT bf_rebuild('jf_tracked', 'k');
SELECT bf_join_tracked_prefilter('jf_tracked', 'k', 5) AS rebuilt_absent,
	   bf_might_contain('jf_tracked', 'k', 10) AS rebuilt_present;
-- a partitioned table tracked by the trigger method: its filter, on the
-- partitioned table, answers for the Append of its partitions' scans
CREATE TABLE jf_tpart (k int) PARTITION BY RANGE (k);
CREATE TABLE jf_tpart_1 PARTITION OF jf_tpart FOR VALUES FROM (MINVALUE) TO (2000);
CREATE TABLE jf_tpart_2 PARTITION OF jf_tpart FOR VALUES FROM (2000) TO (MAXVALUE);
INSERT INTO jf_tpart SELECT g * 10 FROM generate_series(1, 500) g;
SELECT bf_track('jf_tpart', 'k', 1000, 0.01, method => 'trigger');
ANALYZE jf_tpart;
EXPLAIN (COSTS OFF) SELECT count(*) FROM jf_big b JOIN jf_tpart p ON p.k = b.k;
SELECT count(*) FROM jf_big b JOIN jf_tpart p ON p.k = b.k;
SET bloomfilter.join_filter = off;
SELECT count(*) FROM jf_big b JOIN jf_tpart p ON p.k = b.k;
SET bloomfilter.join_filter = on;
DROP TABLE jf_tpart;
-- untracked after the plan was made: the plan still runs, every key passing
EXECUTE jf_tp;
SELECT bf_untrack('jf_tracked', 'k');
EXECUTE jf_tp;
DEALLOCATE jf_tp;
DROP TABLE jf_tracked;

-- Run-time join filters (bloomfilter.runtime_join_filter;
-- src/join/bf_join_runtime.c): a "Bloom Build" node under a hash join's Hash
-- node makes a filter of the inner keys as they are read, and the scan of
-- the outer keys tests each row against it once it is complete.  No index
-- needed: the index pre-filter is off here.
SET bloomfilter.join_filter = off;
SET bloomfilter.runtime_join_filter = on;
SET enable_mergejoin = off;
SET enable_nestloop = off;
CREATE TABLE rt_outer (k int, k8 bigint, v int);
INSERT INTO rt_outer SELECT g, g, g % 10 FROM generate_series(1, 20000) g;
INSERT INTO rt_outer VALUES (NULL, NULL, 0);
CREATE TABLE rt_inner (k int, k8 bigint, w int);
INSERT INTO rt_inner SELECT g * 40, g * 40, g % 10 FROM generate_series(1, 500) g;
INSERT INTO rt_inner VALUES (40, 40, 3), (NULL, NULL, 0);
CREATE TABLE rt_mid (k int, pad text);
INSERT INTO rt_mid SELECT g * 4, repeat('x', 40) FROM generate_series(1, 5000) g;
ANALYZE rt_outer, rt_inner, rt_mid;
-- the answers with the filter off: every query below must give these
CREATE FUNCTION rt_answers() RETURNS TABLE (q text, answer text) LANGUAGE sql AS $$
	SELECT 'inner', (SELECT count(*) || '/' || sum(o.k) FROM rt_outer o JOIN rt_inner i ON i.k = o.k)
	UNION ALL SELECT 'int4 = int8', (SELECT count(*) || '/' || sum(o.k) FROM rt_outer o JOIN rt_inner i ON i.k8 = o.k)
	UNION ALL SELECT 'semi', (SELECT count(*) || '/' || sum(o.k) FROM rt_outer o WHERE EXISTS (SELECT 1 FROM rt_inner i WHERE i.k = o.k))
	UNION ALL SELECT 'right', (SELECT count(*) || '/' || count(o.k) FROM rt_inner i LEFT JOIN rt_outer o ON o.k = i.k)
	UNION ALL SELECT 'left', (SELECT count(*) || '/' || count(i.k) FROM rt_outer o LEFT JOIN rt_inner i ON i.k = o.k)
	UNION ALL SELECT 'full', (SELECT count(*) || '/' || count(i.k) FROM rt_outer o FULL JOIN rt_inner i ON i.k = o.k)
	UNION ALL SELECT 'anti', (SELECT count(*)::text FROM rt_outer o WHERE NOT EXISTS (SELECT 1 FROM rt_inner i WHERE i.k = o.k))
	UNION ALL SELECT 'multi-batch', (SELECT count(*) || '/' || sum(o.k) FROM rt_outer o JOIN rt_mid m ON m.k = o.k)
$$;
SET bloomfilter.runtime_join_filter = off;
CREATE TEMP TABLE rt_expected AS SELECT * FROM rt_answers();
SET bloomfilter.runtime_join_filter = on;
SELECT a.q, a.answer, a.answer = e.answer AS same_as_off
FROM rt_answers() a JOIN rt_expected e USING (q);
-- an inner join, and one of int4 = int8 keys (hashed alike)
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o JOIN rt_inner i ON i.k = o.k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o JOIN rt_inner i ON i.k8 = o.k;
-- a semi join
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o WHERE EXISTS (SELECT 1 FROM rt_inner i WHERE i.k = o.k);
-- the nullable side of an outer join (a hash right join: the outer rows
-- without a partner are dropped)
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_inner i LEFT JOIN rt_outer o ON o.k = i.k;
-- none where an outer row without a partner is kept: left, full, anti
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o LEFT JOIN rt_inner i ON i.k = o.k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o FULL JOIN rt_inner i ON i.k = o.k;
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o WHERE NOT EXISTS (SELECT 1 FROM rt_inner i WHERE i.k = o.k);
-- EXPLAIN ANALYZE: what the filter held, tested and removed (the first
-- outer row, read before the build, and the NULL key, dropped by a strict
-- operator, count), and the scan's rows removed
SELECT * FROM test_explain('SELECT count(*) FROM rt_outer o JOIN rt_inner i ON i.k = o.k',
						   '(Scan|Runtime Filter|Removed by Filter)');
-- a hash join in several batches (work_mem 64kB)
CREATE FUNCTION rt_batches(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
BEGIN
	EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO j;
	RETURN (SELECT max(b::text::int) FROM jsonb_path_query(j, 'strict $.**."Hash Batches"') b);
END $$;
SET work_mem = '64kB';
SELECT rt_batches('SELECT count(*) FROM rt_outer o JOIN rt_mid m ON m.k = o.k') > 1 AS several_batches;
SELECT * FROM test_explain('SELECT count(*) FROM rt_outer o JOIN rt_mid m ON m.k = o.k',
						   '(Scan|Runtime Filter|Removed by Filter)');
SELECT count(*), sum(o.k) FROM rt_outer o JOIN rt_mid m ON m.k = o.k;
-- rescans: the hash join on the inner side of a nested loop, rescanned
-- for each outer row; in several batches its table (and the filter) is
-- built again each time, in one batch kept
SET enable_nestloop = on;
CREATE TABLE rt_pick (v int);
INSERT INTO rt_pick VALUES (1), (2), (7);
ANALYZE rt_pick;
CREATE FUNCTION rt_rescans() RETURNS TABLE (v int, n bigint, s bigint) LANGUAGE sql AS $$
	SELECT p.v, x.n, x.s FROM rt_pick p,
		LATERAL (SELECT count(*) AS n, sum(o.k) AS s FROM rt_outer o JOIN rt_mid m ON m.k = o.k
				 WHERE o.v <> p.v) x ORDER BY p.v
$$;
EXPLAIN (COSTS OFF) SELECT p.v, x.n FROM rt_pick p,
	LATERAL (SELECT count(*) AS n FROM rt_outer o JOIN rt_mid m ON m.k = o.k WHERE o.v <> p.v) x;
SELECT * FROM test_explain('SELECT p.v, x.n FROM rt_pick p,
	LATERAL (SELECT count(*) AS n FROM rt_outer o JOIN rt_mid m ON m.k = o.k WHERE o.v <> p.v) x',
						   '(Scan|Runtime Filter|Removed by Filter)', true);
SELECT * FROM rt_rescans();
SET bloomfilter.runtime_join_filter = off;
SELECT * FROM rt_rescans();
SET bloomfilter.runtime_join_filter = on;
RESET work_mem;
SELECT * FROM rt_rescans();
-- an inner side that depends on the outer row gets no filter (its Hash
-- would be rescanned only after the outer side is read again)
EXPLAIN (COSTS OFF) SELECT p.v, x.n FROM rt_pick p,
	LATERAL (SELECT count(*) AS n FROM rt_outer o JOIN rt_inner i ON i.k = o.k AND i.w = p.v) x;
SET enable_nestloop = off;
-- a cursor: the same rows in the same order, fetched in parts
BEGIN;
DECLARE rt_c CURSOR FOR SELECT o.k FROM rt_outer o JOIN rt_inner i ON i.k = o.k;
FETCH 3 FROM rt_c;
MOVE FORWARD 100 IN rt_c;
FETCH 2 FROM rt_c;
MOVE FORWARD ALL IN rt_c;
CLOSE rt_c;
SET LOCAL bloomfilter.runtime_join_filter = off;
DECLARE rt_c CURSOR FOR SELECT o.k FROM rt_outer o JOIN rt_inner i ON i.k = o.k;
FETCH 3 FROM rt_c;
MOVE FORWARD 100 IN rt_c;
FETCH 2 FROM rt_c;
MOVE FORWARD ALL IN rt_c;
COMMIT;
-- SQL cannot hand the qual a filter of its own: it names a filter by its
-- number in the plan, which only a build node of the same execution
-- registers; called from SQL it finds none and passes every key
SELECT p.oid::regprocedure FROM pg_proc p WHERE p.proname = 'bf_runtime_filter';
SELECT bf_runtime_filter(0, 5) AS no_filter_passes, bf_runtime_filter(NULL, 5) AS null_passes;
-- auto: not for a hash join whose hash table is small and in memory, but
-- for one of 1 MB or more (51 000 rows here), where a probe leaves the
-- CPU's caches
SET bloomfilter.runtime_join_filter = auto;
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_outer o JOIN rt_inner i ON i.k = o.k;
CREATE TABLE rt_mem (k int);
INSERT INTO rt_mem SELECT g FROM generate_series(1, 1000) g;
INSERT INTO rt_mem SELECT 200000 + g FROM generate_series(1, 50000) g;
CREATE TABLE rt_many (k int);
INSERT INTO rt_many SELECT g FROM generate_series(1, 120000) g;
ANALYZE rt_mem, rt_many;
SET work_mem = '64MB';
EXPLAIN (COSTS OFF) SELECT count(*) FROM rt_many o JOIN rt_mem i ON i.k = o.k;
SELECT test_explain('SELECT count(*) FROM rt_many o JOIN rt_mem i ON i.k = o.k', 'Runtime Filter');
-- a partitioned outer side: every partition's scan tests the one filter
CREATE TABLE rt_parts (k int) PARTITION BY RANGE (k);
CREATE TABLE rt_parts_1 PARTITION OF rt_parts FOR VALUES FROM (MINVALUE) TO (60000);
CREATE TABLE rt_parts_2 PARTITION OF rt_parts FOR VALUES FROM (60000) TO (MAXVALUE);
INSERT INTO rt_parts SELECT g FROM generate_series(1, 120000) g;
ANALYZE rt_parts;
SET bloomfilter.runtime_join_filter = on;
SELECT test_explain('SELECT count(*) FROM rt_parts o JOIN rt_mem i ON i.k = o.k',
					'(Seq Scan on rt_parts|Filter|Runtime Filter)');
SELECT count(*) AS joined FROM rt_parts o JOIN rt_mem i ON i.k = o.k;
SET bloomfilter.runtime_join_filter = off;
SELECT count(*) AS joined_without FROM rt_parts o JOIN rt_mem i ON i.k = o.k;
SET bloomfilter.runtime_join_filter = auto;
RESET work_mem;
DROP TABLE rt_mem, rt_many, rt_parts;
RESET enable_mergejoin;
RESET enable_nestloop;
RESET bloomfilter.runtime_join_filter;
DROP FUNCTION rt_answers(), rt_batches(text), rt_rescans();
DROP TABLE rt_outer, rt_inner, rt_mid, rt_pick;

DROP FUNCTION jf_answers(), test_explain(text, text, boolean);
DROP TABLE jf_big, jf_small, jf_pairs, jf_pair_dim;
DROP ROLE jf_reader;
RESET bloomfilter.join_filter;
RESET max_parallel_workers_per_gather;
