--
-- Which join filter, where an index (or tracked) pre-filter and a run-time
-- filter are both possible (src/join/bf_join_plan.c): the one built from
-- fewer keys; none where a foreign key says every outer key has a
-- partner; and both where each removes what the other cannot.
--
LOAD 'bloomfilter';
\i test/sql/include/explain.sql
SET max_parallel_workers_per_gather = 0;
SET enable_mergejoin = off;
SET enable_nestloop = off;
-- (the plan's nodes and the filters' quals: the order of a Join Filter's
-- sides differs between versions)
CREATE FUNCTION jc_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $f$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
		IF l ~ '(Nested Loop|Hash Join|Scan on|Index Only Scan|Filter: .*bf_)' THEN
			RETURN NEXT l;
		END IF;
	END LOOP;
END $f$;
-- 30 000 outer rows, a third of them with a key of jc_dim; 100 of jc_dim's
-- 10 000 rows are kept by seg = 7
CREATE TABLE jc_dim (id int PRIMARY KEY, seg int);
INSERT INTO jc_dim SELECT g, g % 100 FROM generate_series(1, 10000) g;
CREATE TABLE jc_fact (dim_id int, v int);
INSERT INTO jc_fact SELECT g % 30000 + 1, g FROM generate_series(1, 30000) g;
ANALYZE jc_dim, jc_fact;
SET bloomfilter.join_filter = on;
SET bloomfilter.runtime_join_filter = on;
-- without an index: the run-time filter of the 100 inner keys
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7;
SELECT test_explain('SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7',
					'(Runtime Filter|Removed by Filter)');
-- with a bloomfilter index on the inner key: still the run-time filter,
-- whose 100 keys remove what the index's 10 000 remove and more
CREATE INDEX jc_dim_id_bf ON jc_dim USING bloomfilter (id);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7;
SELECT test_explain('SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7',
					'(Runtime Filter|Removed by Filter)');
-- the inner side holds every key of the index: the index's filter
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id;
-- run-time filters off: the index's filter, the only one there is
SET bloomfilter.runtime_join_filter = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7;
SET bloomfilter.runtime_join_filter = on;

-- both: the index's filter of one key (the whole table joined) and a
-- run-time filter of another (an inner side with quals), on one scan
CREATE TABLE jc_two (a int, b int);
INSERT INTO jc_two SELECT g % 20000 + 1, g % 15000 + 1 FROM generate_series(1, 40000) g;
CREATE TABLE jc_other (id int, seg int);
INSERT INTO jc_other SELECT g, g % 100 FROM generate_series(1, 10000) g;
ANALYZE jc_two, jc_other;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_two t JOIN jc_dim d ON d.id = t.a JOIN jc_other o ON o.id = t.b
WHERE o.seg < 50;

-- a validated foreign key from the outer key to the inner table: every
-- outer key has a partner, so no filter of the whole inner table (the
-- index's, or a run-time filter of an inner side without quals), even
-- with both settings on
CREATE TABLE jc_order (id int, dim_id int REFERENCES jc_dim);
INSERT INTO jc_order SELECT g, g % 10000 + 1 FROM generate_series(1, 20000) g;
ANALYZE jc_order;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_order o JOIN jc_dim d ON d.id = o.dim_id;
-- (a nested loop: no filter to spare the btree descents either)
SET enable_hashjoin = off; SET enable_nestloop = on;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_order o JOIN jc_dim d ON d.id = o.dim_id;
RESET enable_hashjoin; SET enable_nestloop = off;
-- with quals on the inner side the run-time filter stays (the index's
-- would remove nothing)
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_order o JOIN jc_dim d ON d.id = o.dim_id WHERE d.seg = 7;
-- run-time filters off: no filter at all
SET bloomfilter.runtime_join_filter = off;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_order o JOIN jc_dim d ON d.id = o.dim_id WHERE d.seg = 7;
SET bloomfilter.runtime_join_filter = on;
-- a chain of foreign keys: jc_loose.mid_id references jc_mid, whose id
-- references jc_dim; the statistics say half the keys find no partner
-- (ANALYZE saw other rows; autovacuum is off), so only the chain keeps
-- the filter away -- once validated: a key NOT VALID proves nothing
CREATE TABLE jc_mid (id int PRIMARY KEY);
INSERT INTO jc_mid SELECT g FROM generate_series(1, 10000) g;
ALTER TABLE jc_mid ADD FOREIGN KEY (id) REFERENCES jc_dim NOT VALID;
CREATE TABLE jc_loose (id int, mid_id int) WITH (autovacuum_enabled = false);
INSERT INTO jc_loose SELECT g, g % 20000 + 1 FROM generate_series(1, 20000) g;
ANALYZE jc_loose;
DELETE FROM jc_loose WHERE mid_id > 10000;
INSERT INTO jc_loose SELECT g, g % 10000 + 1 FROM generate_series(1, 10000) g;
ALTER TABLE jc_loose ADD FOREIGN KEY (mid_id) REFERENCES jc_mid;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_loose o JOIN jc_dim d ON d.id = o.mid_id;
ALTER TABLE jc_mid VALIDATE CONSTRAINT jc_mid_id_fkey;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_loose o JOIN jc_dim d ON d.id = o.mid_id;
-- of a key of two columns, one column alone: holds where the other is
-- NOT NULL
CREATE TABLE jc_pair (x int, y int, PRIMARY KEY (x, y));
INSERT INTO jc_pair SELECT g, g % 7 FROM generate_series(1, 10000) g;
CREATE INDEX jc_pair_x_bf ON jc_pair USING bloomfilter (x);
CREATE TABLE jc_pair_ref (x int, y int NOT NULL, FOREIGN KEY (x, y) REFERENCES jc_pair);
CREATE TABLE jc_pair_null (x int, y int, FOREIGN KEY (x, y) REFERENCES jc_pair);
INSERT INTO jc_pair_ref SELECT g % 10000 + 1, (g % 10000 + 1) % 7 FROM generate_series(1, 20000) g;
INSERT INTO jc_pair_null SELECT g % 10000 + 1, (g % 10000 + 1) % 7 FROM generate_series(1, 20000) g;
-- (rows whose y is NULL escape the key: their x need not be jc_pair's)
INSERT INTO jc_pair_null SELECT 20000 + g, NULL FROM generate_series(1, 10000) g;
ANALYZE jc_pair, jc_pair_ref, jc_pair_null;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_pair_ref r WHERE EXISTS (SELECT 1 FROM jc_pair p WHERE p.x = r.x);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_pair_null r WHERE EXISTS (SELECT 1 FROM jc_pair p WHERE p.x = r.x);

-- auto judges an index's filter by the rows it can remove, not the join:
-- jc_order's keys all in jc_dim (no foreign key on this copy), the inner
-- side's quals drop most joins, yet the index holds every key
CREATE TABLE jc_order_nofk AS SELECT * FROM jc_order;
ANALYZE jc_order_nofk;
SET bloomfilter.join_filter = auto;
SET bloomfilter.runtime_join_filter = off;
SET enable_hashjoin = off; SET enable_mergejoin = on;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_order_nofk o JOIN jc_dim d ON d.id = o.dim_id WHERE d.seg = 7;
-- on too, where the join's estimate alone would place it: a nested loop's
-- inner index scan, whose quals drop most partners; but the statistics
-- say jc_dim holds every distinct key of jc_order_nofk (a filter of the
-- whole table passes them all), and jc_fact's only a third
SET bloomfilter.join_filter = on;
SET enable_mergejoin = off; SET enable_nestloop = on;
SELECT jc_plan($$SELECT count(*) FROM jc_order_nofk o JOIN jc_dim d ON d.id = o.dim_id
	WHERE d.seg = 7$$);
SELECT jc_plan($$SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7$$);
SET enable_nestloop = off;
SET bloomfilter.join_filter = auto;
-- and where the index holds fewer keys than the outer side has, it stays
-- (a hash join in batches, where a lookup costs less than what the join
-- does per row)
SET enable_hashjoin = on; SET enable_mergejoin = off; SET work_mem = '64kB';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg < 90;
RESET work_mem;

-- the filter first: where the scan's other quals read a later column, the
-- scan tests the filter alone and a Bloom Rest node above it evaluates the
-- rest, for the rows the filter passed; not where they read no later one
SET bloomfilter.join_filter = on;
SET bloomfilter.runtime_join_filter = on;
EXPLAIN (COSTS OFF)
SELECT sum(f.v) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7 AND f.v % 3 = 0;
SELECT test_explain('SELECT sum(f.v) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7 AND f.v % 3 = 0',
					'(Bloom Rest|Seq Scan on jc_fact|Removed by Filter)');
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7 AND f.dim_id % 3 = 0;

-- the same answers with every choice
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_nestloop;
CREATE FUNCTION jc_answers() RETURNS text LANGUAGE sql AS $$
	SELECT concat_ws(' ',
		(SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7),
		(SELECT count(*) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id),
		(SELECT count(*) FROM jc_two t JOIN jc_dim d ON d.id = t.a JOIN jc_other o ON o.id = t.b
		 WHERE o.seg < 50),
		(SELECT count(*) FROM jc_order o JOIN jc_dim d ON d.id = o.dim_id WHERE d.seg = 7),
		(SELECT count(*) FROM jc_pair_null r WHERE EXISTS (SELECT 1 FROM jc_pair p WHERE p.x = r.x)),
		(SELECT sum(f.v) FROM jc_fact f JOIN jc_dim d ON d.id = f.dim_id WHERE d.seg = 7 AND f.v % 3 = 0))
$$;
SET bloomfilter.join_filter = off;
SET bloomfilter.runtime_join_filter = off;
CREATE TEMP TABLE jc_expected AS SELECT jc_answers() AS answer;
SET bloomfilter.join_filter = on;
SET bloomfilter.runtime_join_filter = on;
SELECT answer, answer = (SELECT answer FROM jc_expected) AS same_as_off FROM jc_answers() answer;
SET bloomfilter.join_filter = auto;
SET bloomfilter.runtime_join_filter = auto;
SELECT jc_answers() = (SELECT answer FROM jc_expected) AS auto_same_as_off;

-- another join's pre-filter does not keep a hash join from its run-time
-- filter: the nested loop above tests o.k against jc_xa's index, the hash
-- join below against the few keys of jc_xb that seg = 8 keeps; both stay
-- on the scan of o
CREATE TABLE jc_xo (id int, k int);
INSERT INTO jc_xo SELECT g, g FROM generate_series(1, 200000) g;
CREATE TABLE jc_xa (k int, v int);
INSERT INTO jc_xa SELECT g * 2, g FROM generate_series(1, 100000) g;
CREATE INDEX jc_xa_k_bf ON jc_xa USING bloomfilter (k);
CREATE INDEX jc_xa_k_bt ON jc_xa (k);
CREATE TABLE jc_xb (k int, seg int);
INSERT INTO jc_xb SELECT g, g % 100 FROM generate_series(1, 200000) g;
ANALYZE jc_xo, jc_xa, jc_xb;
SET bloomfilter.join_filter = on;
SET bloomfilter.runtime_join_filter = on;
SET enable_mergejoin = off;
SELECT jc_plan($$SELECT count(*) FROM jc_xo o JOIN jc_xb b ON b.k = o.k AND b.seg = 8
	JOIN jc_xa a ON a.k = o.k$$);
SELECT count(*) FROM jc_xo o JOIN jc_xb b ON b.k = o.k AND b.seg = 8 JOIN jc_xa a ON a.k = o.k;
RESET enable_mergejoin;
DROP FUNCTION jc_plan(text);
DROP TABLE jc_xo, jc_xa, jc_xb;

RESET bloomfilter.join_filter;
RESET bloomfilter.runtime_join_filter;
RESET max_parallel_workers_per_gather;
DROP FUNCTION jc_answers();
DROP TABLE jc_fact, jc_two, jc_other, jc_order, jc_loose, jc_mid, jc_order_nofk, jc_pair_ref,
	jc_pair_null, jc_pair, jc_dim;
DROP FUNCTION test_explain(text, text, boolean);
