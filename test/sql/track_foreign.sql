--
-- Tables whose rows do not live in their own heap cannot have a filter:
-- foreign tables, foreign partitions, Citus-distributed tables.  A filter
-- would never see their rows and answer false for them.
--
SET client_min_messages = warning;
CREATE EXTENSION file_fdw;
RESET client_min_messages;
CREATE SERVER fo_files FOREIGN DATA WRAPPER file_fdw;
COPY (SELECT g FROM generate_series(1000, 1004) g) TO '/tmp/bf_regress_track_foreign.csv';

-- ---- a foreign table, and a partitioned table with a foreign partition
CREATE FOREIGN TABLE fo_ft (k int) SERVER fo_files
  OPTIONS (filename '/tmp/bf_regress_track_foreign.csv');
SELECT bf_track('fo_ft', 'k');
CREATE TABLE fo_p (k int) PARTITION BY RANGE (k);
CREATE TABLE fo_p1 PARTITION OF fo_p FOR VALUES FROM (0) TO (1000);
ALTER TABLE fo_p ATTACH PARTITION fo_ft FOR VALUES FROM (1000) TO (2000);
INSERT INTO fo_p VALUES (1), (2);
SELECT count(*) AS rows_in_foreign_partition FROM fo_p WHERE k >= 1000;
SELECT bf_track('fo_p', 'k');
SELECT bf_track('fo_p', 'k', method => 'trigger');
-- an index of the user's covers the local partitions only: no answer
CREATE INDEX fo_p_k ON fo_p USING bloomfilter (k);
SELECT bf_might_contain('fo_p', 'k', 1002);
DROP INDEX fo_p_k;
ALTER TABLE fo_p DETACH PARTITION fo_ft;

-- ---- attaching a foreign partition to a tracked table is refused
SELECT bf_track('fo_p', 'k');
ALTER TABLE fo_p ATTACH PARTITION fo_ft FOR VALUES FROM (1000) TO (2000);
CREATE FOREIGN TABLE fo_ft2 PARTITION OF fo_p FOR VALUES FROM (2000) TO (3000)
  SERVER fo_files OPTIONS (filename '/tmp/bf_regress_track_foreign.csv');
SELECT bf_might_contain('fo_p', 'k', 1) AS one, bf_might_contain('fo_p', 'k', 1002) AS foreign_row;
SELECT bf_untrack('fo_p', 'k');
SELECT bf_track('fo_p', 'k', method => 'trigger');
ALTER TABLE fo_p ATTACH PARTITION fo_ft FOR VALUES FROM (1000) TO (2000);
SELECT bf_untrack('fo_p', 'k');

-- ---- a table distributed by Citus: its rows live on other nodes.  A
-- stand-in for Citus's catalog (only its first column is looked at).
SET allow_system_table_mods = on;
CREATE TABLE pg_catalog.pg_dist_partition (logicalrelid regclass, partmethod "char");
RESET allow_system_table_mods;
CREATE TABLE fo_dist (k int);
CREATE TABLE fo_local (k int);
INSERT INTO pg_catalog.pg_dist_partition VALUES ('fo_dist', 'h');
SELECT bf_track('fo_dist', 'k');
SELECT bf_track('fo_dist', 'k', method => 'trigger');
CREATE INDEX fo_dist_k ON fo_dist USING bloomfilter (k);
SELECT bf_might_contain('fo_dist', 'k', 1);
-- a local table is fine
SELECT bf_track('fo_local', 'k');
SELECT bf_might_contain('fo_local', 'k', 1);
SET allow_system_table_mods = on;
DROP TABLE pg_catalog.pg_dist_partition;
RESET allow_system_table_mods;

DROP TABLE fo_p, fo_dist, fo_local;
DROP FOREIGN TABLE fo_ft;
DROP SERVER fo_files;
DROP EXTENSION file_fdw;
-- ---- inheritance children: a query of the parent returns their rows too
CREATE TABLE fo_parent (k int);
INSERT INTO fo_parent VALUES (1);
SELECT bf_track('fo_parent', 'k');
CREATE TABLE fo_child () INHERITS (fo_parent);
CREATE TABLE fo_other (k int);
INSERT INTO fo_other VALUES (7);
ALTER TABLE fo_other INHERIT fo_parent;
SELECT bf_might_contain('fo_parent', 'k', 1);
SELECT bf_untrack('fo_parent', 'k');
SELECT bf_track('fo_parent', 'k', method => 'trigger');
CREATE TABLE fo_child () INHERITS (fo_parent);
SELECT bf_untrack('fo_parent', 'k');
-- a table that has children already cannot be tracked, nor answer
ALTER TABLE fo_other INHERIT fo_parent;
SELECT count(*) AS rows_with_children FROM fo_parent WHERE k = 7;
SELECT bf_track('fo_parent', 'k');
SELECT bf_track('fo_parent', 'k', method => 'trigger');
CREATE INDEX fo_parent_k ON fo_parent USING bloomfilter (k);
SELECT bf_might_contain('fo_parent', 'k', 7);
-- the child on its own is a table like any other
SELECT bf_track('fo_other', 'k');
SELECT bf_might_contain('fo_other', 'k', 7);
DROP TABLE fo_parent, fo_other;
