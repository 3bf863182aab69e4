--
-- The DDL event trigger never makes an unrelated command fail: it repairs
-- what it can and otherwise marks the filter stale (lookups then refuse
-- to answer until bf_rebuild); commands on the tracked table itself that
-- it cannot follow are refused.
--
SET client_min_messages = notice;
CREATE ROLE regress_bf_ddl_user;
GRANT CREATE ON SCHEMA public TO regress_bf_ddl_user;

-- ---- a sync trigger dropped on a partition
CREATE TABLE dd_p (k int) PARTITION BY RANGE (k);
CREATE TABLE dd_p1 PARTITION OF dd_p FOR VALUES FROM (0) TO (100);
CREATE TABLE dd_p2 PARTITION OF dd_p FOR VALUES FROM (100) TO (200);
INSERT INTO dd_p VALUES (1), (101);
SELECT bf_track('dd_p', 'k', method => 'trigger');
SELECT id AS p_id FROM bf_registry WHERE tbl = 'dd_p'::regclass \gset
SELECT format('DROP TRIGGER bf_sync_%s_ins ON dd_p1', :'p_id') \gexec
-- writes into dd_p1 now escape the filter
INSERT INTO dd_p1 VALUES (2);
SELECT stale, stale_reason ~ 'was dropped' AS reason FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
-- unrelated DDL, by anyone, still works
CREATE TABLE dd_unrelated (x int);
ALTER TABLE dd_unrelated ADD COLUMN y int;
DROP TABLE dd_unrelated;
SET ROLE regress_bf_ddl_user;
CREATE TABLE dd_theirs (x int);
DROP TABLE dd_theirs;
RESET ROLE;
-- lookups refuse to answer instead of answering false for 2
SELECT bf_might_contain('dd_p', 'k', 2);
SELECT bf_tracked_filter('dd_p', 'k') IS NOT NULL;
-- bf_rebuild puts the trigger back, reads the rows again, clears stale
SELECT bf_rebuild('dd_p', 'k');
SELECT stale, stale_reason FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
SELECT bf_might_contain('dd_p', 'k', 2) AS two, bf_might_contain('dd_p', 'k', 101) AS hundred_one;
INSERT INTO dd_p1 VALUES (3);
SELECT bf_might_contain('dd_p', 'k', 3) AS synced_again;
SELECT tgrelid::regclass::text AS tbl, count(*) FROM pg_trigger
WHERE tgname LIKE 'bf\_sync\_%' GROUP BY 1 ORDER BY 1;

-- ---- a sync trigger disabled, or renamed
SELECT format('ALTER TABLE dd_p2 DISABLE TRIGGER bf_sync_%s_ins', :'p_id') \gexec
SELECT stale_reason FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
SELECT bf_rebuild('dd_p', 'k');
SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'dd_p2'::regclass AND tgname LIKE '%\_ins';
SELECT format('ALTER TRIGGER bf_sync_%s_upd ON dd_p RENAME TO mine', :'p_id') \gexec
SELECT stale_reason FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
SELECT bf_rebuild('dd_p', 'k');
DROP TRIGGER mine ON dd_p;
SELECT stale FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
-- triggers that fire in every mode are fine
SELECT format('ALTER TABLE dd_p1 ENABLE ALWAYS TRIGGER bf_sync_%s_ins', :'p_id') \gexec
SELECT stale FROM bf_tracked WHERE tbl = 'dd_p'::regclass;
SELECT bf_untrack('dd_p', 'k');
DROP TABLE dd_p;

-- ---- typed tables: ALTER TYPE ... CASCADE changes the tracked column
CREATE TYPE dd_row AS (a int, b text, c int);
CREATE TABLE dd_typed OF dd_row;
INSERT INTO dd_typed SELECT g, 'x' || g, g FROM generate_series(1, 50) g;
SELECT bf_track('dd_typed', 'a', method => 'trigger');
SELECT bf_track('dd_typed', 'b');
SELECT bf_track('dd_typed', 'c', method => 'trigger');
-- to another hashable type: the filter is rebuilt for the new type
ALTER TYPE dd_row ALTER ATTRIBUTE a TYPE float4 CASCADE;
SELECT count(*) FILTER (WHERE NOT bf_might_contain('dd_typed', 'a', a)) AS false_negatives
FROM dd_typed;
ALTER TYPE dd_row ALTER ATTRIBUTE b TYPE varchar(20) CASCADE;
SELECT count(*) FILTER (WHERE NOT bf_might_contain('dd_typed', 'b', b)) AS false_negatives
FROM dd_typed;
-- to a type that cannot be hashed: the ALTER TYPE goes through, the filter
-- is stale, and later DDL by anyone still works
ALTER TYPE dd_row ALTER ATTRIBUTE c TYPE money CASCADE;
SELECT col, stale, stale_reason FROM bf_tracked WHERE tbl = 'dd_typed'::regclass ORDER BY col;
CREATE TABLE dd_unrelated (x int);
DROP TABLE dd_unrelated;
SET ROLE regress_bf_ddl_user;
CREATE TABLE dd_theirs (x int);
DROP TABLE dd_theirs;
RESET ROLE;
SELECT bf_might_contain('dd_typed', 'c', 1::money);
-- bf_rebuild cannot hash the new type either: untrack
SELECT bf_rebuild('dd_typed', 'c');
SELECT bf_untrack('dd_typed', 'c');
SELECT bf_untrack('dd_typed', 'a');
SELECT bf_untrack('dd_typed', 'b');
DROP TABLE dd_typed;
DROP TYPE dd_row;

-- ---- a filter kept in chunks (a capacity: not growing) is rebuilt for a
-- new column type into chunks again
CREATE TABLE dd_chunked (a int);
INSERT INTO dd_chunked SELECT generate_series(1, 50);
SELECT bf_track('dd_chunked', 'a', 1000, method => 'trigger');
ALTER TABLE dd_chunked ALTER COLUMN a TYPE numeric;
SELECT count(*) FILTER (WHERE NOT bf_might_contain('dd_chunked', 'a', a)) AS false_negatives,
	   (SELECT chunk_bytes FROM bf_registry WHERE tbl = 'dd_chunked'::regclass),
	   (SELECT stale FROM bf_tracked WHERE tbl = 'dd_chunked'::regclass),
	   (SELECT (bf_info(bf_tracked_filter('dd_chunked', 'a'))).element_type)
FROM dd_chunked;
INSERT INTO dd_chunked VALUES (51.5);
SELECT bf_might_contain('dd_chunked', 'a', 51.5);
SELECT bf_untrack('dd_chunked', 'a');
DROP TABLE dd_chunked;

-- ---- a column whose type changed without the event trigger seeing it
CREATE TABLE dd_quiet (a int);
INSERT INTO dd_quiet SELECT generate_series(1, 20);
SELECT bf_track('dd_quiet', 'a', method => 'trigger');
ALTER EVENT TRIGGER bf_track_ddl DISABLE;
ALTER TABLE dd_quiet ALTER COLUMN a TYPE float8;
ALTER EVENT TRIGGER bf_track_ddl ENABLE;
-- the lookup notices that the filter was built for another type
SELECT bf_might_contain('dd_quiet', 'a', 1::float8);
SELECT bf_rebuild('dd_quiet', 'a');
SELECT count(*) FILTER (WHERE NOT bf_might_contain('dd_quiet', 'a', a)) AS false_negatives
FROM dd_quiet;
DROP TABLE dd_quiet;

-- ---- a partition created while the event trigger is off has no triggers
CREATE TABLE dd_q (k int) PARTITION BY LIST (k);
CREATE TABLE dd_q1 PARTITION OF dd_q FOR VALUES IN (1);
SELECT bf_track('dd_q', 'k', method => 'trigger');
ALTER EVENT TRIGGER bf_track_ddl DISABLE;
CREATE TABLE dd_q2 PARTITION OF dd_q FOR VALUES IN (2);
ALTER EVENT TRIGGER bf_track_ddl ENABLE;
INSERT INTO dd_q2 VALUES (2);
SELECT bf_might_contain('dd_q', 'k', 2);
SELECT bf_rebuild('dd_q', 'k');
SELECT bf_might_contain('dd_q', 'k', 2);
DROP TABLE dd_q;

REVOKE CREATE ON SCHEMA public FROM regress_bf_ddl_user;
DROP ROLE regress_bf_ddl_user;
