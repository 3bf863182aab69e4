--
-- Growing bloomfilter indexes (reloption growth): layers appended as keys
-- arrive, no false negative across growths, the rate bound, lookups,
-- scans, REINDEX, the exported value and its change sets.
--
SET client_min_messages = warning;
\i test/sql/include/errors.sql
\i test/sql/include/change_client.sql
CREATE TABLE bfc_client (copy bytea, lsn pg_lsn, full_refresh bool);
CREATE FUNCTION bfc_refresh(idx regclass) RETURNS TABLE (full_refresh bool, same bool)
LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT * INTO c FROM bf_index_changes(idx, (SELECT lsn FROM bfc_client));
	UPDATE bfc_client SET copy = bfc_apply(copy, c.patch), lsn = c.next_lsn,
		full_refresh = c.full_refresh;
	RETURN QUERY SELECT b.full_refresh, b.copy = bf_index_filter(idx)::bytea FROM bfc_client b;
END $$;
RESET client_min_messages;

-- options: growth 0 (the default) or 2 to 16
CREATE TABLE ig (id bigint, email text);
SELECT test_err($$CREATE INDEX ig_bad ON ig USING bloomfilter (email) WITH (growth = 1)$$);
SELECT test_errcode($$CREATE INDEX ig_bad ON ig USING bloomfilter (email) WITH (growth = 17)$$);

-- a new growing index: one layer sized for capacity at a tenth of the rate
CREATE INDEX ig_email ON ig USING bloomfilter (email) WITH (capacity = 1000, growth = 2);
SELECT layer, nbits, nhashes, capacity, target_fpr, inserted FROM bf_layers(bf_index_filter('ig_email'));
SELECT (bf_info(bf_index_filter('ig_email'))).layout;

-- 20 000 keys in one statement (a bulk load: buffered, set in parts at
-- commit): the index grows to layers of 1 000, 2 000, 4 000, 8 000 and
-- 16 000 keys, each filled to about its capacity before the next
INSERT INTO ig SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 20000) g;
SELECT layer, capacity, target_fpr,
	   inserted BETWEEN capacity * 0.9 AND capacity * 1.25 AS about_full
FROM bf_layers(bf_index_filter('ig_email')) WHERE layer < 4;
SELECT count(*) AS layers FROM bf_layers(bf_index_filter('ig_email'));
-- every key found, by bf_index_contains and by the exported value
SELECT count(*) FILTER (WHERE NOT bf_index_contains('ig_email', 'user' || g || '@example.com')) AS missed,
	   count(*) FILTER (WHERE NOT bf_contains(bf_index_filter('ig_email'), 'user' || g || '@example.com')) AS missed_value
FROM generate_series(1, 20000) g;
-- at most 1 % of absent keys answer "probably"; the same answers as the value
SELECT count(*) FILTER (WHERE bf_index_contains('ig_email', 'absent' || g))::float8 / 100000 <= 0.01 AS rate_within_target,
	   count(*) FILTER (WHERE bf_index_contains('ig_email', 'absent' || g) <>
							  bf_contains((SELECT bf_index_filter('ig_email')), 'absent' || g)) AS differ
FROM generate_series(1, 100000) g;
SELECT capacity, fpr, fill > 0, estimated_fpr < 0.01 AS within, saturated, nbits > 0, nhashes
FROM bf_index_info('ig_email');

-- the planner: an absent key is a one-page bitmap probe per layer
SET enable_seqscan = off;
EXPLAIN (costs off) SELECT * FROM ig WHERE email = 'nobody@example.com';
SELECT count(*) FROM ig WHERE email = 'nobody@example.com';
RESET enable_seqscan;
SELECT id FROM ig WHERE email = 'user777@example.com';

-- change sets: a client's copy follows the index across a growth (the
-- metapage changes: a full refresh) and between growths (a partial one)
INSERT INTO bfc_client VALUES (NULL, NULL);
SELECT * FROM bfc_refresh('ig_email');
INSERT INTO ig VALUES (20001, 'user20001@example.com');
SELECT * FROM bfc_refresh('ig_email');
INSERT INTO ig SELECT g, 'user' || g || '@example.com' FROM generate_series(20002, 60000) g;
SELECT count(*) AS layers FROM bf_layers(bf_index_filter('ig_email'));
SELECT * FROM bfc_refresh('ig_email');
SELECT * FROM bfc_refresh('ig_email');

-- single-row writes (an unlogged index sets each key at once), one
-- statement each, across growths: no key ever missed
CREATE UNLOGGED TABLE igu (k int);
CREATE INDEX igu_k ON igu USING bloomfilter (k) WITH (capacity = 100, growth = 3);
DO $$
DECLARE
	missed int;
BEGIN
	FOR i IN 1 .. 3000 LOOP
		INSERT INTO igu VALUES (i);
		IF i % 100 = 0 THEN
			SELECT count(*) INTO missed FROM generate_series(1, i) g
			WHERE NOT bf_index_contains('igu_k', g);
			IF missed > 0 THEN
				RAISE EXCEPTION 'after % inserts: % keys missed', i, missed;
			END IF;
		END IF;
	END LOOP;
END $$;
SELECT count(*) >= 3 AS grew, bool_and(target_fpr < 0.01) FROM bf_layers(bf_index_filter('igu_k'));

-- tracked, the grown index is due for a rebuild (4 layers or more)
SELECT bf_track('ig', 'email');
SELECT bf_index_layer_count('ig_email') AS layers, rebuild_due FROM bf_tracked WHERE tbl = 'ig'::regclass;
-- REINDEX compacts the grown index: its first layer sized for twice the
-- table's estimated rows (60 000 keys), so they fit in one layer again (the
-- count estimated from its bits); it stays a growing index, with capacity
-- 1 000 left for a build on an empty table
REINDEX INDEX ig_email;
SELECT count(*) AS layers, sum(inserted) BETWEEN 58000 AND 62000 AS keys,
	   min(capacity) >= 60000 AS room FROM bf_layers(bf_index_filter('ig_email'));
SELECT (SELECT reloptions FROM pg_class WHERE oid = 'ig_email'::regclass),
	   (bf_info(bf_index_filter('ig_email'))).layout;
SELECT bf_index_layer_count('ig_email') AS layers, rebuild_due FROM bf_tracked WHERE tbl = 'ig'::regclass;
SELECT bf_untrack('ig', 'email');
SELECT count(*) FILTER (WHERE NOT bf_index_contains('ig_email', 'user' || g || '@example.com')) AS missed
FROM generate_series(1, 60000) g;

-- bf_index_layers: the layers, as bf_layers of the index's value (of the
-- index that grew by single-row inserts, and of the compacted one); one
-- for an index that does not grow
SELECT layer, capacity, target_fpr, inserted > 0 AS holds_keys FROM bf_index_layers('igu_k');
SELECT (SELECT array_agg(l ORDER BY layer) FROM bf_index_layers(i) l) =
	   (SELECT array_agg(l ORDER BY layer) FROM bf_layers(bf_index_filter(i)) l) AS same_as_value
FROM (VALUES ('igu_k'::regclass), ('ig_email')) v(i);
CREATE TABLE igf (k int);
CREATE INDEX igf_k ON igf USING bloomfilter (k) WITH (capacity = 1000);
SELECT layer, nbits, nhashes, capacity, target_fpr, inserted FROM bf_index_layers('igf_k');
DROP TABLE igf;

-- bf_track without a capacity makes a growing index; with one, a fixed one
CREATE TABLE igt (email text);
SELECT bf_track('igt', 'email');
SELECT c.reloptions FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
WHERE i.indrelid = 'igt'::regclass;
SELECT bf_untrack('igt', 'email');
SELECT bf_track('igt', 'email', 5000);
SELECT c.reloptions FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
WHERE i.indrelid = 'igt'::regclass;
SELECT bf_untrack('igt', 'email');

DROP TABLE ig, igu, igt, bfc_client;
DROP FUNCTION test_err(text), test_errcode(text), bfc_refresh(regclass), bfc_runs(bytea),
	bfc_apply(bytea, bytea), bfc_le(bytea, int, int);
