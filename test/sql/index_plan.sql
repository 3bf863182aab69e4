--
-- How the planner uses a bloomfilter index for col = const, and what a
-- plan made for an absent key does once the key exists: with another
-- index on the column it looks the key up there (no table scan).
--
SET client_min_messages = warning;
\i test/sql/include/explain.sql
CREATE TABLE bp (id int, k text, pad text);
INSERT INTO bp SELECT g, 'k' || g, repeat('x', 200) FROM generate_series(1, 5000) g;
CREATE INDEX bp_bf ON bp USING bloomfilter (k);
CREATE INDEX bp_bt ON bp (k);
ANALYZE bp;
-- absent: the filter alone; present: the btree
EXPLAIN (COSTS OFF) SELECT id FROM bp WHERE k = 'absent';
EXPLAIN (COSTS OFF) SELECT id FROM bp WHERE k = 'k42';
-- a plan kept while the key was absent, run after it was inserted: the
-- filter says "probably", the btree finds the row, one table page is read
PREPARE bp_later AS SELECT id FROM bp WHERE k = 'later';
EXPLAIN (COSTS OFF) EXECUTE bp_later;
EXECUTE bp_later;
INSERT INTO bp VALUES (-1, 'later', 'x');
SELECT test_explain($$EXECUTE bp_later$$);
EXECUTE bp_later;
DEALLOCATE bp_later;
-- cross-type probe (int8 column, int4 constant) through a two-column
-- btree whose leading column is the filter's
CREATE TABLE bp2 (a int8, b text, pad text);
INSERT INTO bp2 SELECT g, 'b' || g, repeat('x', 200) FROM generate_series(1, 5000) g;
CREATE INDEX bp2_bf ON bp2 USING bloomfilter (a);
CREATE INDEX bp2_bt ON bp2 (a, b);
ANALYZE bp2;
PREPARE bp2_later AS SELECT b FROM bp2 WHERE a = 77777;
EXPLAIN (COSTS OFF) EXECUTE bp2_later;
INSERT INTO bp2 VALUES (77777, 'new', 'x');
SELECT test_explain($$EXECUTE bp2_later$$);
EXECUTE bp2_later;
DEALLOCATE bp2_later;
-- a partial btree does not qualify (it would miss rows): without another
-- index the scan hands every table page to the recheck, the table scan
-- the query would have made without the filter
DROP INDEX bp_bt;
CREATE INDEX bp_bt_partial ON bp (k) WHERE id > 0;
PREPARE bp_later2 AS SELECT id FROM bp WHERE k = 'later2';
EXPLAIN (COSTS OFF) EXECUTE bp_later2;
INSERT INTO bp VALUES (-2, 'later2', 'x');
SELECT test_explain($$EXECUTE bp_later2$$);
EXECUTE bp_later2;
DEALLOCATE bp_later2;
DROP TABLE bp, bp2;
DROP FUNCTION test_explain(text, text, boolean);
