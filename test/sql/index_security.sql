--
-- The bloomfilter index: what the planner may reveal, which indexes may
-- answer, which tables it can describe, enum probes.
--
SET client_min_messages = warning;
\i test/sql/include/explain.sql

-- EXPLAIN must not reveal whether rows hidden from the user have a key.
-- Plans for an absent and a present key must look alike wherever the
-- user cannot read every row (a plan that differs is a membership oracle).
CREATE ROLE bfs_reader;
CREATE TABLE bfs_people (id int, email text, owner name);
INSERT INTO bfs_people SELECT g, 'p' || g || '@x', CASE WHEN g % 2 = 0 THEN 'bfs_reader' ELSE 'someone' END
FROM generate_series(1, 2000) g;
CREATE INDEX bfs_people_email ON bfs_people USING bloomfilter (email);
ANALYZE bfs_people;
-- the owner, who reads every row, gets the filter plan for an absent key
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'nobody@x';
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'p1@x';
-- through a security-barrier view: the same plan for an absent key and
-- for one only a hidden row has ('p1@x' belongs to 'someone')
CREATE VIEW bfs_mine WITH (security_barrier) AS
	SELECT id, email FROM bfs_people WHERE owner = current_user;
GRANT SELECT ON bfs_mine TO bfs_reader;
SET ROLE bfs_reader;
EXPLAIN (COSTS OFF) SELECT id FROM bfs_mine WHERE email = 'nobody@x';
EXPLAIN (COSTS OFF) SELECT id FROM bfs_mine WHERE email = 'p1@x';
SELECT count(*) AS visible FROM bfs_mine;
RESET ROLE;
-- the view's owner reading through it gets no filter plan either
EXPLAIN (COSTS OFF) SELECT id FROM bfs_mine WHERE email = 'nobody@x';
-- row-level security: the policy's condition, or a condition without
-- columns (it hides every row from some users)
GRANT SELECT ON bfs_people TO bfs_reader;
ALTER TABLE bfs_people ENABLE ROW LEVEL SECURITY;
CREATE POLICY bfs_own ON bfs_people USING (owner = current_user);
SET ROLE bfs_reader;
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'nobody@x';
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'p1@x';
RESET ROLE;
DROP POLICY bfs_own ON bfs_people;
CREATE POLICY bfs_none ON bfs_people USING (current_user = 'bfs_nobody');
SET ROLE bfs_reader;
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'nobody@x';
SELECT count(*) AS visible FROM bfs_people;
-- nor may the lookup functions read the filter, which holds hidden rows' keys
SELECT bf_index_contains('bfs_people_email', 'nobody@x'::text);
SELECT bf_index_filter('bfs_people_email') IS NULL;
RESET ROLE;
-- the table's owner is not subject to the policies: filter plan
EXPLAIN (COSTS OFF) SELECT id FROM bfs_people WHERE email = 'nobody@x';
-- a partitioned table with a policy on the parent: its partitions carry
-- no policy of their own, the parent's applies
CREATE TABLE bfs_parts (id int, email text, owner name) PARTITION BY RANGE (id);
CREATE TABLE bfs_parts_1 PARTITION OF bfs_parts FOR VALUES FROM (0) TO (1000);
CREATE TABLE bfs_parts_2 PARTITION OF bfs_parts FOR VALUES FROM (1000) TO (3000);
INSERT INTO bfs_parts SELECT * FROM bfs_people;
CREATE INDEX ON bfs_parts USING bloomfilter (email);
ANALYZE bfs_parts;
ALTER TABLE bfs_parts ENABLE ROW LEVEL SECURITY;
CREATE POLICY bfs_own ON bfs_parts USING (owner = current_user);
GRANT SELECT ON bfs_parts TO bfs_reader;
EXPLAIN (COSTS OFF) SELECT id FROM bfs_parts WHERE email = 'nobody@x';
SET ROLE bfs_reader;
EXPLAIN (COSTS OFF) SELECT id FROM bfs_parts WHERE email = 'nobody@x';
EXPLAIN (COSTS OFF) SELECT id FROM bfs_parts WHERE email = 'p1@x';
RESET ROLE;
DROP TABLE bfs_parts;
DROP VIEW bfs_mine;
DROP TABLE bfs_people;

-- an enum-typed index: the executor's probe (an anyenum operator) hashes
-- as the column's enum type, so an absent key reads no table page
CREATE TYPE bfs_mood AS ENUM ('sad', 'ok', 'happy', 'ecstatic');
CREATE TABLE bfs_moods (m bfs_mood);
INSERT INTO bfs_moods SELECT (ARRAY['sad', 'ok', 'happy'])[1 + g % 3]::bfs_mood FROM generate_series(1, 3000) g;
CREATE INDEX bfs_moods_m ON bfs_moods USING bloomfilter (m);
ANALYZE bfs_moods;
SELECT test_explain($$SELECT * FROM bfs_moods WHERE m = 'ecstatic'$$);
SELECT count(*) FROM bfs_moods WHERE m = 'ecstatic';
DROP TABLE bfs_moods;
DROP TYPE bfs_mood;

-- tables whose rows are not in their own heap: a table distributed by
-- Citus (faked here by its catalog) has an empty shell locally, so its
-- index would answer "absent" for every row the shards hold
CREATE TABLE bfs_dist (k text);
INSERT INTO bfs_dist VALUES ('here');
CREATE INDEX bfs_dist_k ON bfs_dist USING bloomfilter (k);
SET allow_system_table_mods = on;
CREATE TABLE pg_catalog.pg_dist_partition (logicalrelid regclass);
RESET allow_system_table_mods;
INSERT INTO pg_catalog.pg_dist_partition VALUES ('bfs_dist');
SELECT bf_index_contains('bfs_dist_k', 'on a shard');
SELECT bf_index_filter('bfs_dist_k') IS NOT NULL;
SELECT nbits FROM bf_index_info('bfs_dist_k');
DELETE FROM pg_catalog.pg_dist_partition;
SELECT bf_index_contains('bfs_dist_k', 'here') AS local_again;
DROP TABLE pg_catalog.pg_dist_partition;
DROP TABLE bfs_dist;
-- a partitioned table with a foreign partition: CREATE INDEX skips the
-- foreign partition, whose rows the filters never see
CREATE FOREIGN DATA WRAPPER bfs_fdw;
CREATE SERVER bfs_srv FOREIGN DATA WRAPPER bfs_fdw;
CREATE TABLE bfs_mixed (id int, k text) PARTITION BY RANGE (id);
CREATE TABLE bfs_mixed_local PARTITION OF bfs_mixed FOR VALUES FROM (0) TO (10);
CREATE FOREIGN TABLE bfs_mixed_remote PARTITION OF bfs_mixed FOR VALUES FROM (10) TO (20) SERVER bfs_srv;
INSERT INTO bfs_mixed_local VALUES (1, 'local');
CREATE INDEX bfs_mixed_k ON bfs_mixed USING bloomfilter (k);
SELECT bf_index_contains('bfs_mixed_k', 'remote');
SELECT bf_index_contains('bfs_mixed_local_k_idx', 'local') AS local_partition;
DROP TABLE bfs_mixed;
DROP SERVER bfs_srv;
DROP FOREIGN DATA WRAPPER bfs_fdw;

-- only a valid index answers: a partitioned index with a partition left
-- without one (CREATE INDEX ON ONLY) is invalid
CREATE TABLE bfs_only (id int, k text) PARTITION BY RANGE (id);
CREATE TABLE bfs_only_1 PARTITION OF bfs_only FOR VALUES FROM (0) TO (10);
INSERT INTO bfs_only VALUES (1, 'one');
CREATE INDEX bfs_only_k ON ONLY bfs_only USING bloomfilter (k);
SELECT bf_index_contains('bfs_only_k', 'one');
CREATE INDEX bfs_only_1_k ON bfs_only_1 USING bloomfilter (k);
ALTER INDEX bfs_only_k ATTACH PARTITION bfs_only_1_k;
SELECT bf_index_contains('bfs_only_k', 'one') AS valid_once_attached;
DROP TABLE bfs_only;

DROP ROLE bfs_reader;
DROP FUNCTION test_explain(text, text, boolean);
