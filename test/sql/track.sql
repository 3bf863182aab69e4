-- Tracked filters: bf_track, the sync triggers, bf_might_contain,
-- bf_rebuild, bf_untrack, bf_tracked, DDL upkeep, privileges, bf_sync_into.
SET client_min_messages = notice;

-- ---- basics: filled from existing rows, kept in sync by every kind of write
CREATE TABLE tr (id int, name text);
INSERT INTO tr SELECT g, 'n' || g FROM generate_series(1, 100) g;
SELECT bf_track('tr', 'id', method => 'trigger');
-- the view's columns, as the README lists them
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'bf_tracked'::regclass AND attnum > 0 ORDER BY attnum;
-- NULL capacity: max(1000, 2 x rows), and a growing filter (growth 2)
SELECT tbl, col, method, capacity, target_fpr, bytes, deleted_since_rebuild,
       saturated, round(estimated_cardinality) AS card
FROM bf_tracked;
SELECT (bf_info(bf_tracked_filter('tr', 'id'))).layout;
SELECT bf_might_contain('tr', 'id', 5), bf_might_contain('tr', 'id', 100),
       bf_might_contain('tr', 'id', 5::bigint), bf_might_contain('tr', 'id', 5000);
-- single-row, multi-row, INSERT ... SELECT, COPY
INSERT INTO tr VALUES (5000, 'x');
INSERT INTO tr VALUES (5001, 'y'), (5002, NULL), (NULL, 'z');
INSERT INTO tr SELECT g, NULL FROM generate_series(6001, 7000) g;
COPY tr (id) FROM STDIN;
8001
8002
\.
SELECT count(*) AS false_negatives
FROM tr WHERE id IS NOT NULL AND NOT bf_might_contain('tr', 'id', id);
-- INSERT ... ON CONFLICT DO UPDATE of the tracked column
CREATE UNIQUE INDEX tr_name ON tr (name);
INSERT INTO tr VALUES (9001, 'n2') ON CONFLICT (name) DO UPDATE SET id = 9002;
SELECT id FROM tr WHERE name = 'n2';
SELECT bf_might_contain('tr', 'id', 9002);
DROP INDEX tr_name;
-- UPDATE of the tracked column
UPDATE tr SET id = 77777 WHERE id = 1;
SELECT bf_might_contain('tr', 'id', 77777);
-- an UPDATE of another column leaves the filter as it is: no chunk row
-- (the filter is kept in chunks, a growing one too) gets a new version
SELECT string_agg(c.xmin::text, ',' ORDER BY chunk) AS before
FROM bf_registry_chunk c JOIN bf_registry r USING (id) WHERE r.tbl = 'tr'::regclass \gset
UPDATE tr SET name = 'renamed' WHERE id < 10;
SELECT string_agg(c.xmin::text, ',' ORDER BY chunk) = :'before' AS unchanged
FROM bf_registry_chunk c JOIN bf_registry r USING (id) WHERE r.tbl = 'tr'::regclass;
-- rolled-back transactions and subtransactions: committed values present
BEGIN;
INSERT INTO tr VALUES (88888);
SAVEPOINT a;
INSERT INTO tr VALUES (99999);
ROLLBACK TO a;
INSERT INTO tr VALUES (88889);
COMMIT;
BEGIN;
INSERT INTO tr VALUES (66666);
ROLLBACK;
SELECT bf_might_contain('tr', 'id', 88888), bf_might_contain('tr', 'id', 88889);
SELECT count(*) AS false_negatives
FROM tr WHERE id IS NOT NULL AND NOT bf_might_contain('tr', 'id', id);
-- a PL/pgSQL loop sees each of its own inserts: the per-statement probe
-- cache of bf_might_contain is not reused across statements, even by the
-- same call site
DO $$
DECLARE
  answers text := '';
BEGIN
  FOR i IN 1..4 LOOP
    FOR j IN 0..1 LOOP
      answers := answers || CASE WHEN bf_might_contain('tr', 'id', 500000 + i) THEN 't' ELSE 'f' END;
      IF j = 0 THEN
        INSERT INTO tr VALUES (500000 + i);
      END IF;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'before/after each insert: %', answers;
END
$$;
DELETE FROM tr WHERE id > 500000;
UPDATE bf_registry SET deleted_since_rebuild = 0 WHERE tbl = 'tr'::regclass;
-- DELETE is counted, bits stay
DELETE FROM tr WHERE id BETWEEN 6001 AND 6500;
SELECT deleted_since_rebuild FROM bf_tracked WHERE tbl = 'tr'::regclass;
SELECT bf_might_contain('tr', 'id', 6001);
-- more distinct values than the capacity: the filter grew layers instead
-- of saturating, and still finds every row
SELECT capacity, saturated, estimated_fpr > target_fpr AS over_target
FROM bf_tracked WHERE tbl = 'tr'::regclass;
SELECT count(*) > 1 AS grew FROM bf_layers(bf_tracked_filter('tr', 'id'));
SELECT count(*) FILTER (WHERE NOT bf_might_contain('tr', 'id', id)) AS missed FROM tr;
-- bf_rebuild: from current rows, counter reset, new capacity
SELECT bf_rebuild('tr', 'id', 10000);
SELECT capacity, target_fpr, deleted_since_rebuild, saturated
FROM bf_tracked WHERE tbl = 'tr'::regclass;
SELECT bf_might_contain('tr', 'id', 6001) AS deleted_value,
       bf_might_contain('tr', 'id', 6501) AS kept_value;
SELECT count(*) AS false_negatives
FROM tr WHERE id IS NOT NULL AND NOT bf_might_contain('tr', 'id', id);
-- absent values are (mostly) reported absent: ~600 values in a filter for 10000
SELECT count(*) < 50 AS few_false_positives
FROM generate_series(100001, 105000) g WHERE bf_might_contain('tr', 'id', g);
-- NULL capacity: max(1000, 2 x rows) = 2 x 608; NULL fpr: keep the old one
SELECT bf_rebuild('tr', 'id', fpr => 0.001);
SELECT capacity, target_fpr FROM bf_tracked WHERE tbl = 'tr'::regclass;
-- bf_tracked_filter is the stored filter, assembled from its frame (the
-- growing header, then each layer's) and chunks
SELECT bf_contains(bf_tracked_filter('tr', 'id'), 77777),
       substr(bf_tracked_filter('tr', 'id')::bytea, 1, 64) = substr(header, 1, 64) AS same_header,
       length(bf_tracked_filter('tr', 'id')::bytea) =
         64 + (SELECT sum(64 + nbits / 8) FROM bf_layers(bf_tracked_filter('tr', 'id'))) AS whole,
       filter IS NULL AND chunk_bytes = 128 AS chunked
FROM bf_registry WHERE tbl = 'tr'::regclass;
-- TRUNCATE clears
TRUNCATE tr;
SELECT bf_might_contain('tr', 'id', 77777), deleted_since_rebuild, estimated_cardinality
FROM bf_tracked WHERE tbl = 'tr'::regclass;
INSERT INTO tr VALUES (42);
SELECT bf_might_contain('tr', 'id', 42), bf_might_contain('tr', 'id', 77777);

-- ---- a second tracked column, text, on the same table
SELECT bf_track('tr', 'name', 100, 0.05, method => 'trigger');
INSERT INTO tr VALUES (43, 'alice');
SELECT bf_might_contain('tr', 'name', 'alice'), bf_might_contain('tr', 'name', 'bob'),
       bf_might_contain('tr', 'id', 43);
-- a value of another family is an error, not a silent "no"
SELECT bf_might_contain('tr', 'id', 'alice');

-- ---- RENAME of table and column, DROP COLUMN, DROP TABLE
ALTER TABLE tr RENAME COLUMN id TO ident;
ALTER TABLE tr RENAME TO tr2;
SELECT tbl, col FROM bf_tracked ORDER BY col;
INSERT INTO tr2 VALUES (44, 'carol');
SELECT bf_might_contain('tr2', 'ident', 44), bf_might_contain('tr2', 'name', 'carol');
SELECT bf_might_contain('tr2', 'id', 44);
ALTER TABLE tr2 DROP COLUMN name;
SELECT tbl, col FROM bf_tracked;
SELECT tgname FROM pg_trigger WHERE tgrelid = 'tr2'::regclass ORDER BY 1;
-- ALTER COLUMN TYPE to another family: the filter is rebuilt
ALTER TABLE tr2 ALTER COLUMN ident TYPE numeric;
SELECT bf_might_contain('tr2', 'ident', 44.0), bf_might_contain('tr2', 'ident', 45.5);
INSERT INTO tr2 VALUES (45.5);
SELECT bf_might_contain('tr2', 'ident', 45.5);
-- to a type that cannot be hashed: refused while the column is tracked
ALTER TABLE tr2 ALTER COLUMN ident TYPE point USING point(ident, 0);
DROP TABLE tr2;
SELECT count(*) AS registry_rows FROM bf_registry;
-- DROP SCHEMA ... CASCADE forgets the filters of its tables
CREATE SCHEMA regress_bf_s;
CREATE TABLE regress_bf_s.t (id int);
SELECT bf_track('regress_bf_s.t', 'id', method => 'trigger');
DROP SCHEMA regress_bf_s CASCADE;
SELECT count(*) AS registry_rows FROM bf_registry;

-- ---- errors
CREATE TABLE te (id int, c text COLLATE "C", pt point);
SELECT bf_track('te', 'id', method => 'trigger');
SELECT bf_track('te', 'id', method => 'trigger');                         -- already tracked
SELECT bf_track('te', 'nope', method => 'trigger');
SELECT bf_track('te', 'ctid', method => 'trigger');
SELECT bf_track('te', 'pt', method => 'trigger');                         -- no hash support
SELECT bf_track('te', 'c', -1, method => 'trigger');
SELECT bf_track('te', 'c', 100, 1.5, method => 'trigger');
SELECT bf_track('te', 'c', method => 'btree');
SELECT bf_track(NULL, 'c', method => 'trigger');
SELECT bf_might_contain('te', 'c', 'x');             -- not tracked
SELECT bf_might_contain('te', 'nope', 1);
SELECT bf_tracked_filter('te', 'c');
SELECT bf_rebuild('te', 'c');
SELECT bf_untrack('te', 'c');
CREATE VIEW tv AS SELECT 1 AS a;
SELECT bf_track('tv', 'a', method => 'trigger');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT bf_rebuild('te', 'id');
ROLLBACK;
SELECT bf_untrack('te', 'id');
SELECT count(*) AS triggers_left FROM pg_trigger WHERE tgrelid = 'te'::regclass;
DROP VIEW tv;
DROP TABLE te;

-- ---- partitioned table: via the parent, directly into partitions,
-- sub-partitions, ATTACH / CREATE ... PARTITION OF / DETACH
CREATE TABLE tp (k bigint, v text) PARTITION BY RANGE (k);
CREATE TABLE tp1 PARTITION OF tp FOR VALUES FROM (0) TO (1000);
CREATE TABLE tp2 PARTITION OF tp FOR VALUES FROM (1000) TO (2000) PARTITION BY RANGE (k);
CREATE TABLE tp2a PARTITION OF tp2 FOR VALUES FROM (1000) TO (1500);
CREATE TABLE tp2b PARTITION OF tp2 FOR VALUES FROM (1500) TO (2000);
INSERT INTO tp VALUES (1), (1001), (1600);
SELECT bf_track('tp', 'k', 10000, method => 'trigger');
SELECT tgrelid::regclass, count(*) FROM pg_trigger
WHERE tgname LIKE 'bf_sync_%' GROUP BY 1 ORDER BY tgrelid::regclass::text COLLATE "C";
INSERT INTO tp VALUES (2), (1002);
INSERT INTO tp1 VALUES (3);
INSERT INTO tp2b VALUES (1700);
INSERT INTO tp2 VALUES (1400);
BEGIN;
INSERT INTO tp1 VALUES (4);
SAVEPOINT s;
INSERT INTO tp2a VALUES (1499);
ROLLBACK TO s;
COMMIT;
SELECT k, bf_might_contain('tp', 'k', k) FROM tp ORDER BY k;
CREATE TABLE tp3 (k bigint, v text);
INSERT INTO tp3 VALUES (2500), (2600);
ALTER TABLE tp ATTACH PARTITION tp3 FOR VALUES FROM (2000) TO (3000);
INSERT INTO tp3 VALUES (2700);
CREATE TABLE tp4 PARTITION OF tp FOR VALUES FROM (3000) TO (4000);
INSERT INTO tp4 VALUES (3500);
SELECT count(*) AS false_negatives FROM tp WHERE NOT bf_might_contain('tp', 'k', k);
-- cross-partition UPDATE
UPDATE tp SET k = 1900 WHERE k = 1001;
SELECT bf_might_contain('tp', 'k', 1900);
-- a partition alone cannot be tracked, nor a tracked table become a partition
SELECT bf_track('tp1', 'k', method => 'trigger');
CREATE TABLE tp5 (k bigint, v text);
SELECT bf_track('tp5', 'k', method => 'trigger');
ALTER TABLE tp ATTACH PARTITION tp5 FOR VALUES FROM (4000) TO (5000);
DROP TABLE tp5;
ALTER TABLE tp DETACH PARTITION tp3;
SELECT count(*) AS detached_triggers FROM pg_trigger WHERE tgrelid = 'tp3'::regclass;
-- TRUNCATE of one partition keeps the other partitions' values
TRUNCATE tp1;
SELECT bf_might_contain('tp', 'k', 1600);
TRUNCATE tp;
SELECT bf_might_contain('tp', 'k', 1600);
DROP TABLE tp, tp3;
-- an empty tracked tree gets its first values, and so its family, from a
-- partition attached with rows
CREATE TABLE tq (k bigint) PARTITION BY RANGE (k);
SELECT bf_track('tq', 'k', 1000, method => 'trigger');
CREATE TABLE tq1 (k bigint);
INSERT INTO tq1 VALUES (5), (6);
ALTER TABLE tq ATTACH PARTITION tq1 FOR VALUES FROM (0) TO (100);
SELECT k, bf_might_contain('tq', 'k', k) FROM tq ORDER BY k;
SELECT (bf_info(bf_tracked_filter('tq', 'k'))).element_type;
INSERT INTO tq VALUES (7);
SELECT count(*) AS false_negatives FROM tq WHERE NOT bf_might_contain('tq', 'k', k);
DROP TABLE tq;

-- ---- privileges
CREATE ROLE regress_bf_track_user;
-- a schema ahead of the extension's on the search_path, shadowing its table
CREATE SCHEMA regress_bf_evil;
CREATE TABLE regress_bf_evil.bf_registry (LIKE public.bf_registry);
GRANT USAGE ON SCHEMA regress_bf_evil TO regress_bf_track_user;
GRANT ALL ON regress_bf_evil.bf_registry TO regress_bf_track_user;
CREATE TABLE ts (id int, pub int);
INSERT INTO ts VALUES (1, 1);
SELECT bf_track('ts', 'id', method => 'trigger'), bf_track('ts', 'pub', method => 'trigger');
GRANT SELECT (pub), INSERT ON ts TO regress_bf_track_user;
SET ROLE regress_bf_track_user;
SELECT bf_might_contain('ts', 'pub', 1);
SELECT bf_might_contain('ts', 'id', 1);
SELECT bf_tracked_filter('ts', 'id');
SELECT length(bf_tracked_filter('ts', 'pub')::text) > 0;
SELECT tbl, col FROM bf_tracked;
SELECT bf_track('ts', 'pub', method => 'trigger');
SELECT bf_untrack('ts', 'pub');
SELECT bf_rebuild('ts', 'pub');
SELECT count(*) FROM bf_registry;
-- an inserting user needs no rights on the registry
INSERT INTO ts VALUES (42, 43);
-- a hostile search_path changes nothing
SET search_path = regress_bf_evil, public;
INSERT INTO ts VALUES (44, 45);
RESET search_path;
RESET ROLE;
SELECT count(*) AS shadow_rows FROM regress_bf_evil.bf_registry;
DROP SCHEMA regress_bf_evil CASCADE;
SELECT bf_might_contain('ts', 'id', 42), bf_might_contain('ts', 'id', 44),
       bf_might_contain('ts', 'pub', 45);
DROP TABLE ts;
-- an unprivileged owner tracks, rebuilds and untracks its own table
GRANT CREATE ON SCHEMA public TO regress_bf_track_user;
SET ROLE regress_bf_track_user;
CREATE TABLE ts_own (id int);
INSERT INTO ts_own VALUES (1);
SELECT bf_track('ts_own', 'id', method => 'trigger');
INSERT INTO ts_own VALUES (2);
SELECT bf_rebuild('ts_own', 'id');
SELECT bf_might_contain('ts_own', 'id', 1), bf_might_contain('ts_own', 'id', 2);
SELECT bf_untrack('ts_own', 'id');
DROP TABLE ts_own;
RESET ROLE;
REVOKE CREATE ON SCHEMA public FROM regress_bf_track_user;
DROP ROLE regress_bf_track_user;

-- ---- bf_sync_into: per-user filters of the articles they have read
CREATE TABLE users (user_id int PRIMARY KEY, seen_articles bloomfilter);
INSERT INTO users SELECT g FROM generate_series(1, 3) g;
CREATE TABLE article_reads (user_id int, article_id bigint);
CREATE TRIGGER sync_seen AFTER INSERT ON article_reads
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION bf_sync_into('users', 'user_id', 'seen_articles',
                                'user_id', 'article_id', 100, 0.01);
INSERT INTO article_reads VALUES (1, 10), (1, 11), (2, 20), (NULL, 5), (3, NULL), (4, 40);
INSERT INTO article_reads VALUES (1, 12);
SELECT user_id, seen_articles @> 10::bigint AS a10, seen_articles @> 11::bigint AS a11,
       seen_articles @> 12::bigint AS a12, seen_articles @> 20::bigint AS a20,
       seen_articles IS NULL AS none
FROM users ORDER BY 1;
-- the NULL filter was created with the trigger's size
SELECT substring(seen_articles::text FROM 'nbits=\d+ seed=\d+ capacity=\d+ fpr=[0-9.]+') AS sized,
       substring(bf_create(100, 0.01)::text FROM 'nbits=\d+ seed=\d+ capacity=\d+ fpr=[0-9.]+') AS created
FROM users WHERE user_id = 1;
-- "articles user 1 has not seen"
SELECT a FROM generate_series(9, 13) a, users u
WHERE u.user_id = 1 AND NOT u.seen_articles @> a::bigint ORDER BY a;
-- unqualified target: the source table's schema, whatever the search_path
SET search_path = pg_catalog;
INSERT INTO public.article_reads VALUES (3, 30);
RESET search_path;
SELECT user_id, seen_articles @> 30::bigint FROM users ORDER BY 1;
CREATE TRIGGER bad AFTER INSERT ON article_reads FOR EACH ROW
  EXECUTE FUNCTION bf_sync_into('users', 'user_id', 'seen_articles', 'user_id', 'article_id');
INSERT INTO article_reads VALUES (1, 1);
DROP TRIGGER bad ON article_reads;
CREATE TRIGGER bad AFTER INSERT ON article_reads REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into('users', 'user_id', 'nope', 'user_id', 'article_id');
INSERT INTO article_reads VALUES (1, 1);
DROP TRIGGER bad ON article_reads;
CREATE TRIGGER bad AFTER INSERT ON article_reads REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into('users', 'user_id', 'user_id', 'user_id', 'article_id');
INSERT INTO article_reads VALUES (1, 1);
DROP TRIGGER bad ON article_reads;
DROP TABLE users, article_reads;
