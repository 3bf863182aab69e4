-- Growing filters of the trigger method, kept in chunks: the registry row
-- holds the frame (the growing header and each layer's header), the chunk
-- table each layer's bits; writers add to the newest layer's chunks, and
-- a statement that fills it appends a layer.
SET client_min_messages = warning;

-- an empty table: capacity max(1000, 2 x rows) = 1000, growth 2
CREATE TABLE tg (k int);
SELECT bf_track('tg', 'k', method => 'trigger');
SELECT length(header) AS frame_bytes, chunk_bytes, filter IS NULL AS no_value
FROM bf_registry WHERE tbl = 'tg'::regclass;
SELECT id AS tg_id FROM bf_registry WHERE tbl = 'tg'::regclass \gset
-- the same keys, in the same order, added to the value it started as
CREATE TABLE tg_ref AS SELECT bf_tracked_filter('tg', 'k') AS f;

-- single-row inserts through two growths (layers of 1 000 and 2 000 keys,
-- each of at most 64 chunks: their counts are read exactly)
DO $$
BEGIN
  FOR i IN 1..3500 LOOP
    INSERT INTO tg VALUES (i);
  END LOOP;
END $$;
UPDATE tg_ref SET f = bf_add_all(f, ARRAY(SELECT g FROM generate_series(1, 3500) g));
SELECT layer, capacity, inserted FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT bf_tracked_filter('tg', 'k')::bytea = f::bytea AS same_bytes FROM tg_ref;
SELECT length(header) AS frame_bytes FROM bf_registry WHERE id = :tg_id;
SELECT count(*) AS chunks, sum(length(bits)) AS bits_bytes
FROM bf_registry_chunk WHERE id = :tg_id;
-- a statement of one key writes one chunk row of the newest layer
BEGIN;
INSERT INTO tg VALUES (100000);
SELECT c.chunk >= (SELECT count(*) FROM bf_registry_chunk WHERE id = :tg_id) -
                  (SELECT ceil(nbits / 8 / 128.0)::int FROM bf_layers(bf_tracked_filter('tg', 'k'))
                   ORDER BY layer DESC LIMIT 1) AS in_newest
FROM bf_registry_chunk c WHERE id = :tg_id AND written = pg_current_xact_id();
ROLLBACK;
-- a key an older layer holds is not added again (nothing is written)
BEGIN;
INSERT INTO tg VALUES (5);
SELECT count(*) AS chunks_written FROM bf_registry_chunk
WHERE id = :tg_id AND written = pg_current_xact_id();
ROLLBACK;

-- a bulk statement (20 000 keys) fills layers in memory, as a growing
-- value takes keys, and stores the new ones
INSERT INTO tg SELECT g FROM generate_series(3501, 23500) g;
UPDATE tg_ref SET f = bf_add_all(f, ARRAY(SELECT g FROM generate_series(3501, 23500) g));
SELECT layer, capacity, inserted FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT bf_tracked_filter('tg', 'k')::bytea = f::bytea AS same_bytes FROM tg_ref;
SELECT count(*) AS false_negatives FROM tg WHERE NOT bf_might_contain('tg', 'k', k);
-- the one-chunk-per-layer lookup and the whole-value one agree
SELECT bf_might_contain('tg', 'k', 1), bf_might_contain('tg', 'k', 23500),
       bf_contains(bf_tracked_filter('tg', 'k'), 23500);
SELECT count(*) FILTER (WHERE bf_might_contain('tg', 'k', g)) =
       count(*) FILTER (WHERE bf_contains(f, g)) AS same_answers
FROM generate_series(100001, 110000) g, tg_ref;

-- single-row inserts into a layer of more than 64 chunks (16 000 keys):
-- its count is estimated from its first 64 chunks; no key is missed and
-- the layer grows close to its capacity
DO $$
BEGIN
  FOR i IN 23501..40000 LOOP
    INSERT INTO tg VALUES (i);
  END LOOP;
END $$;
SELECT count(*) AS false_negatives FROM tg WHERE NOT bf_might_contain('tg', 'k', k);
SELECT layer, capacity, inserted BETWEEN capacity * 0.97 AND capacity * 1.03 AS about_full
FROM bf_layers(bf_tracked_filter('tg', 'k')) WHERE layer = 4;
SELECT count(*) > 5 AS grew FROM bf_layers(bf_tracked_filter('tg', 'k'));

-- change sets: a write sends its layer's header (its count) and chunk
CREATE TABLE tg_client (copy bytea, pos pg_lsn);
INSERT INTO tg_client SELECT bf_tracked_filter('tg', 'k')::bytea,
  (bf_tracked_changes('tg', 'k')).next_lsn;
INSERT INTO tg VALUES (200000);
SELECT full_refresh, length(patch) < 1000 AS small
FROM tg_client, bf_tracked_changes('tg', 'k', pos);

-- TRUNCATE empties it to one layer; bf_rebuild makes it anew
TRUNCATE tg;
SELECT count(*) AS layers FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT count(*) AS chunks FROM bf_registry_chunk WHERE id = :tg_id;
INSERT INTO tg SELECT g FROM generate_series(1, 5000) g;
SELECT bf_rebuild('tg', 'k');
SELECT layer, capacity FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT count(*) AS false_negatives FROM tg WHERE NOT bf_might_contain('tg', 'k', k);
-- online, a growing filter that grew is compacted into one layer
-- sized for the rows (2 x 20 000), and keeps growing from there
INSERT INTO tg SELECT g FROM generate_series(5001, 20000) g;
SELECT count(*) AS layers FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT bf_rebuild('tg', 'k', concurrently => true);
SELECT layer, capacity FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT count(*) AS false_negatives FROM tg WHERE NOT bf_might_contain('tg', 'k', k);
INSERT INTO tg SELECT g FROM generate_series(20001, 70000) g;
SELECT count(*) AS layers FROM bf_layers(bf_tracked_filter('tg', 'k'));
SELECT count(*) AS false_negatives FROM tg WHERE NOT bf_might_contain('tg', 'k', k);

-- a partition attached to a tracked partitioned table: its rows go into
-- the growing filter, through a growth
CREATE TABLE tgp (k int) PARTITION BY RANGE (k);
CREATE TABLE tgp1 PARTITION OF tgp FOR VALUES FROM (0) TO (10000);
INSERT INTO tgp SELECT generate_series(1, 100);
SELECT bf_track('tgp', 'k', method => 'trigger');
CREATE TABLE tgp2 (k int);
INSERT INTO tgp2 SELECT generate_series(10000, 14999);
ALTER TABLE tgp ATTACH PARTITION tgp2 FOR VALUES FROM (10000) TO (20000);
SELECT count(*) > 1 AS grew FROM bf_layers(bf_tracked_filter('tgp', 'k'));
SELECT count(*) AS false_negatives FROM tgp WHERE NOT bf_might_contain('tgp', 'k', k);

DROP TABLE tg, tg_ref, tg_client, tgp;

-- a malformed frame is refused with a clear error, not a crash
CREATE TABLE tgm (k int);
SELECT bf_track('tgm', 'k', method => 'trigger');
UPDATE bf_registry SET header = substr(header, 1, 100) WHERE tbl = 'tgm'::regclass;
SELECT bf_might_contain('tgm', 'k', 1);
INSERT INTO tgm VALUES (1);
SELECT bf_rebuild('tgm', 'k', concurrently => true);
-- bf_rebuild replaces it, bf_untrack removes it
SELECT bf_rebuild('tgm', 'k');
SELECT bf_might_contain('tgm', 'k', 1);
UPDATE bf_registry SET header = substr(header, 1, 100) WHERE tbl = 'tgm'::regclass;
SELECT bf_untrack('tgm', 'k');
SELECT count(*) AS left_behind FROM bf_registry WHERE tbl = 'tgm'::regclass;
DROP TABLE tgm;
