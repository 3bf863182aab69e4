--
-- Scan guards (bloomfilter.guard_scans; src/guard/): a scan of a table
-- for column = key, where the key is a parameter (a generic plan's $n, a
-- nested loop's outer value) or, from a tracked filter, any key, runs
-- under a BloomGuard node that asks the column's filter first; an absent
-- key returns no rows without reading the table or its other indexes.
-- Both sources, generic and custom plans, arrays and IN lists, rescans,
-- keys inserted after the plan was made, cross-type keys, rights,
-- row-level security, an index dropped and a stale tracked filter, and
-- a plan cached before the library loaded.
--
SET client_min_messages = warning;
\i test/sql/include/explain.sql
SET max_parallel_workers_per_gather = 0;
CREATE TABLE sg (id int, email text, n int8, pad text);
INSERT INTO sg SELECT g, 'user' || g || '@example.com', g, repeat('x', 100)
FROM generate_series(1, 5000) g;
CREATE INDEX sg_email_bt ON sg (email);
CREATE INDEX sg_email_bf ON sg USING bloomfilter (email);
CREATE INDEX sg_n_bt ON sg (n);
CREATE INDEX sg_n_bf ON sg USING bloomfilter (n);
ANALYZE sg;
SHOW bloomfilter.guard_scans;

-- a generic plan: the btree, under the guard; an absent key skips it
SET plan_cache_mode = force_generic_plan;
PREPARE sg_q(text) AS SELECT id FROM sg WHERE email = $1;
EXPLAIN (COSTS OFF) EXECUTE sg_q('absent');
SELECT test_explain($$EXECUTE sg_q('absent')$$, '(Scan|Guard)');
SELECT test_explain($$EXECUTE sg_q('user42@example.com')$$, '(Scan|Guard)');
EXECUTE sg_q('absent');
EXECUTE sg_q('user42@example.com');

-- a plan made while a key was absent finds it once inserted: in this
-- transaction before it commits, and after
BEGIN;
INSERT INTO sg VALUES (-1, 'later@example.com', -1, 'x');
EXECUTE sg_q('later@example.com');
COMMIT;
EXECUTE sg_q('later@example.com');
SELECT test_explain($$EXECUTE sg_q('later@example.com')$$, '(Scan|Guard)');
-- and a key whose row was deleted: the filter still says "maybe", no row
DELETE FROM sg WHERE id = -1;
EXECUTE sg_q('later@example.com');

-- custom plans: the index's own cost estimate deals with constants (the
-- filter alone for an absent key, the btree for a present one), no guard
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE sg_q('absent');
EXPLAIN (COSTS OFF) EXECUTE sg_q('user42@example.com');
EXECUTE sg_q('user42@example.com');
SET plan_cache_mode = force_generic_plan;

-- = ANY ($1) and IN ($1, $2): skipped when every element is absent;
-- NULL keys match nothing
PREPARE sg_any(text[]) AS SELECT id FROM sg WHERE email = ANY ($1) ORDER BY id;
SELECT test_explain($$EXECUTE sg_any('{a,b}')$$, '(Scan|Guard)');
SELECT test_explain($$EXECUTE sg_any('{a,user7@example.com}')$$, '(Scan|Guard)');
EXECUTE sg_any('{a,user7@example.com,user8@example.com}');
EXECUTE sg_any('{}');
EXECUTE sg_any('{NULL}');
EXECUTE sg_any(NULL);
PREPARE sg_in(text, text) AS SELECT id FROM sg WHERE email IN ($1, $2) ORDER BY id;
SELECT test_explain($$EXECUTE sg_in('a', 'b')$$, '(Scan|Guard)');
EXECUTE sg_in('a', 'user9@example.com');
EXECUTE sg_in(NULL, 'user9@example.com');
PREPARE sg_null(text) AS SELECT id FROM sg WHERE email = $1;
EXECUTE sg_null(NULL);

-- EXISTS: the InitPlan's scan is guarded
PREPARE sg_exists(text) AS SELECT EXISTS (SELECT 1 FROM sg WHERE email = $1);
SELECT test_explain($$EXECUTE sg_exists('absent')$$, '(Scan|Guard)');
EXECUTE sg_exists('absent');
EXECUTE sg_exists('user11@example.com');

-- a key computed by an InitPlan: the guard runs it first
PREPARE sg_initplan(int) AS SELECT id FROM sg WHERE email = (SELECT 'user' || $1 || '@example.com');
SELECT test_explain($$EXECUTE sg_initplan(30)$$, '(Scan|Guard Asked|Guard Skipped)');
SELECT test_explain($$EXECUTE sg_initplan(-30)$$, '(Scan|Guard Asked|Guard Skipped)');
EXECUTE sg_initplan(30);
EXECUTE sg_initplan(-30);

-- an int4 parameter for an int8 column: integers hash alike, guarded
PREPARE sg_int(int4) AS SELECT id FROM sg WHERE n = $1;
EXPLAIN (COSTS OFF) EXECUTE sg_int(5);
EXECUTE sg_int(5);
EXECUTE sg_int(-5);
-- a varchar parameter for a text column is a text key: guarded
PREPARE sg_varchar(varchar) AS SELECT id FROM sg WHERE email = $1;
EXPLAIN (COSTS OFF) EXECUTE sg_varchar('a');
EXECUTE sg_varchar('user12@example.com');
-- a name parameter hashes otherwise than the text column: no guard
PREPARE sg_name(name) AS SELECT id FROM sg WHERE email = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_name('a')$$, 'BloomGuard');
EXECUTE sg_name('user13@example.com');
-- a numeric parameter compares the column cast to numeric: no guard
PREPARE sg_numeric(numeric) AS SELECT id FROM sg WHERE n = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_numeric(5)$$, 'BloomGuard');
EXECUTE sg_numeric(5);

-- a nested loop: the inner scan is asked again at each rescan, with each
-- outer row's key
CREATE TABLE sg_o (k text);
INSERT INTO sg_o VALUES ('a'), ('user10@example.com'), ('b'), ('user20@example.com'), (NULL);
ANALYZE sg_o;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = off;
SET bloomfilter.join_filter = off;
SELECT test_explain($$SELECT o.k, s.id FROM sg_o o JOIN sg s ON s.email = o.k$$,
					'(Scan|Guard|Loop)', true);
SELECT o.k, s.id FROM sg_o o JOIN sg s ON s.email = o.k ORDER BY s.id;
SELECT o.k, s.id FROM sg_o o LEFT JOIN sg s ON s.email = o.k ORDER BY o.k, s.id;
-- where a join pre-filter tested the outer keys already, no guard (force:
-- on places none here, where the statistics say every key has a partner)
SET bloomfilter.join_filter = force;
EXPLAIN (COSTS OFF) SELECT o.k, s.id FROM sg_o o JOIN sg s ON s.email = o.k;
SELECT o.k, s.id FROM sg_o o JOIN sg s ON s.email = o.k ORDER BY s.id;
RESET bloomfilter.join_filter;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_memoize;

-- a PL/pgSQL scroll cursor over a guarded scan, read both ways
CREATE FUNCTION sg_scroll(v text[]) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	c SCROLL CURSOR FOR SELECT id FROM sg WHERE email = ANY (v);
	r int;
	s text;
BEGIN
	OPEN c;
	FETCH LAST FROM c INTO r;
	s := coalesce(r::text, '-');
	FETCH PRIOR FROM c INTO r;
	s := s || ',' || coalesce(r::text, '-');
	FETCH FIRST FROM c INTO r;
	s := s || ',' || coalesce(r::text, '-');
	CLOSE c;
	RETURN s;
END $$;
SELECT sg_scroll('{user3@example.com,user5@example.com,user9@example.com}') AS present,
	   sg_scroll('{a,b}') AS absent;
DROP FUNCTION sg_scroll;

-- the setting
SET bloomfilter.guard_scans = off;
PREPARE sg_off(text) AS SELECT id FROM sg WHERE email = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_off('absent')$$, 'BloomGuard');
RESET bloomfilter.guard_scans;

-- rights: a user who may not read sg's column (here, a reader of a view
-- of it) gets no guard, as bf_join_prefilter answers only those who may;
-- a plan made with the guard and run by that reader runs the scan
CREATE ROLE sg_reader;
CREATE VIEW sg_v AS SELECT id, email FROM sg;
GRANT SELECT ON sg_v TO sg_reader;
SET ROLE sg_reader;
PREPARE sg_view(text) AS SELECT id FROM sg_v WHERE email = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_view('absent')$$, 'BloomGuard');
EXECUTE sg_view('user14@example.com');
RESET ROLE;
PREPARE sg_view_owner(text) AS SELECT id FROM sg_v WHERE email = $1;
SELECT test_explain($$EXECUTE sg_view_owner('absent')$$, '(Scan|Guard)');
SET ROLE sg_reader;
SELECT test_explain($$EXECUTE sg_view_owner('absent')$$, '(Scan|Guard)');
EXECUTE sg_view_owner('user15@example.com');
RESET ROLE;

-- row-level security restricting the reader: no guard
GRANT SELECT ON sg TO sg_reader;
ALTER TABLE sg ENABLE ROW LEVEL SECURITY;
CREATE POLICY sg_some ON sg TO sg_reader USING (id < 100);
SET ROLE sg_reader;
PREPARE sg_rls(text) AS SELECT id FROM sg WHERE email = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_rls('absent')$$, 'BloomGuard');
EXECUTE sg_rls('user16@example.com');
EXECUTE sg_rls('user160@example.com');
RESET ROLE;
ALTER TABLE sg DISABLE ROW LEVEL SECURITY;

-- the index dropped: the plan is made again, without the guard
DROP INDEX sg_email_bf;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_q('absent')$$, 'BloomGuard');
EXECUTE sg_q('user17@example.com');

-- a partitioned table: each partition's scan asks its own index
CREATE TABLE sg_p (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE sg_p1 PARTITION OF sg_p FOR VALUES FROM (0) TO (1000);
CREATE TABLE sg_p2 PARTITION OF sg_p FOR VALUES FROM (1000) TO (2000);
INSERT INTO sg_p SELECT g, 'v' || g FROM generate_series(0, 1999) g;
CREATE INDEX ON sg_p (v);
CREATE INDEX sg_p_bf ON sg_p USING bloomfilter (v);
ANALYZE sg_p;
PREPARE sg_part(text) AS SELECT k FROM sg_p WHERE v = $1;
SELECT test_explain($$EXECUTE sg_part('absent')$$, '(Scan|Guard|Append)');
EXECUTE sg_part('v1500');

-- a column tracked by the trigger method guards constants and parameters
CREATE TABLE sg_t (id int, code text);
INSERT INTO sg_t SELECT g, 'c' || g FROM generate_series(1, 3000) g;
SELECT bf_track('sg_t', 'code', 10000, 0.01, method => 'trigger');
ANALYZE sg_t;
RESET plan_cache_mode;
SELECT test_explain($$SELECT id FROM sg_t WHERE code = 'absent'$$, '(Scan|Guard)');
SELECT id FROM sg_t WHERE code = 'c5';
SET plan_cache_mode = force_generic_plan;
PREPARE sg_tq(text) AS SELECT id FROM sg_t WHERE code = $1;
SELECT test_explain($$EXECUTE sg_tq('absent')$$, '(Scan|Guard)');
EXECUTE sg_tq('c6');
INSERT INTO sg_t VALUES (-1, 'tracked-later');
EXECUTE sg_tq('tracked-later');
-- stale (its triggers disabled): plans made again (the table changed)
-- have no guard, and the rows are found
ALTER TABLE sg_t DISABLE TRIGGER USER;
INSERT INTO sg_t VALUES (-2, 'unseen');
SELECT stale FROM bf_tracked WHERE tbl = 'sg_t'::regclass;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_tq('unseen')$$, 'BloomGuard');
EXECUTE sg_tq('unseen');
PREPARE sg_tq2(text) AS SELECT id FROM sg_t WHERE code = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_tq2('unseen')$$, 'BloomGuard');
SELECT bf_rebuild('sg_t', 'code');
EXECUTE sg_tq('unseen');
-- a reader without the column's rights gets no guard from it
GRANT SELECT (id) ON sg_t TO sg_reader;
CREATE VIEW sg_tv AS SELECT id, code FROM sg_t;
GRANT SELECT ON sg_tv TO sg_reader;
SET ROLE sg_reader;
PREPARE sg_tview(text) AS SELECT id FROM sg_tv WHERE code = $1;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_tview('absent')$$, 'BloomGuard');
EXECUTE sg_tview('c7');
RESET ROLE;
-- a btree on the tracked column: the filter's probe costs less than the
-- btree's descent, and its scans are guarded too
CREATE INDEX sg_t_code_idx ON sg_t (code);
PREPARE sg_tq3(text) AS SELECT id FROM sg_t WHERE code = $1;
SELECT test_explain($$EXECUTE sg_tq3('absent')$$, '(Scan|Guard)');
EXECUTE sg_tq3('c8');
-- a plan made by the owner through the view, run by the reader without
-- the column's rights: the guard's test asks again for that user and
-- says maybe, so the btree is read and the row found
PREPARE sg_tview2(text) AS SELECT id FROM sg_tv WHERE code = $1;
SELECT test_explain($$EXECUTE sg_tview2('absent')$$, '(Scan|Guard)');
SET ROLE sg_reader;
SELECT test_explain($$EXECUTE sg_tview2('absent')$$, '(Scan|Guard)');
EXECUTE sg_tview2('c9');
RESET ROLE;
SELECT test_explain($$EXECUTE sg_tview2('absent')$$, '(Scan|Guard)');
DROP INDEX sg_t_code_idx;

-- not for FOR UPDATE (its rechecks of updated rows) nor for writes
PREPARE sg_lock(text) AS SELECT id FROM sg WHERE n = $1::int8 FOR UPDATE;
SELECT count(*) AS guards FROM test_explain($$EXECUTE sg_lock('5')$$, 'BloomGuard');

-- a new session, whose library loads while its first plan is made: that
-- plan has no guard, and the next execution plans again, with it
\c
SET plan_cache_mode = force_generic_plan;
SET max_parallel_workers_per_gather = 0;
PREPARE sg_late(int8) AS SELECT id FROM sg WHERE n = $1;
EXPLAIN (COSTS OFF) EXECUTE sg_late(-5);
EXPLAIN (COSTS OFF) EXECUTE sg_late(-5);
EXECUTE sg_late(42);

DEALLOCATE ALL;
RESET plan_cache_mode;
SET client_min_messages = warning;
DROP VIEW sg_v, sg_tv;
SELECT bf_untrack('sg_t', 'code');
DROP TABLE sg, sg_o, sg_p, sg_t;
DROP ROLE sg_reader;
DROP FUNCTION test_explain;
