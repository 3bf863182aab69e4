--
-- Growing filters (the layered form of bloomfilter, docs/FORMAT.md section
-- 9): layers appended as keys arrive, no false negative before, during or
-- after a growth, the rate bound, the functions that take both forms and
-- those that refuse, round trips and bad input.
--
\i test/sql/include/errors.sql

--
-- a new growing filter: one empty layer sized for capacity at fpr / 10
--
SELECT * FROM bf_layers(bf_create_growing(1000));
SELECT layout, nbits, nhashes, capacity, target_fpr, inserted, bits_set,
	   estimated_cardinality, estimated_fpr, saturated, element_type, portable
FROM bf_info(bf_create_growing(1000, 0.02, 3, 7));
-- its first layer is the filter bf_create gives for capacity at fpr * (1 - 0.9)
SELECT l.nbits = e.nbits AND l.nhashes = e.nhashes AS first_layer_as_bf_create
FROM bf_layers(bf_create_growing(1000)) l, bf_estimate(1000, 0.01 * (1 - 0.9)) e;
-- bad parameters
SELECT test_err($$SELECT bf_create_growing(1000, 0.01, 1)$$);
SELECT test_err($$SELECT bf_create_growing(1000, 0.01, 17)$$);
SELECT test_err($$SELECT bf_create_growing(0)$$);
SELECT test_err($$SELECT bf_create_growing(1000, 0)$$);
SELECT test_err($$SELECT bf_create_growing(1000, 1)$$);
SELECT test_err($$SELECT bf_create_growing(1000, 'NaN')$$);
SELECT test_err($$SELECT bf_create_growing(1000, 5e-324)$$);

--
-- growth: 1 000 keys into capacity 20, growth 2 make layers of 20, 40,
-- 80, 160, 320 and 640 keys; a layer only gets a successor once it holds
-- its capacity, so every layer but the newest is exactly full
--
CREATE TABLE bg (id int PRIMARY KEY, f bloomfilter);
INSERT INTO bg SELECT 1, bf_add_all(bf_create_growing(20, 0.01, 2, 11),
								   ARRAY(SELECT g::int8 FROM generate_series(1, 1000) g));
SELECT layer, nbits, nhashes, capacity, target_fpr, inserted FROM bg, bf_layers(f) WHERE id = 1;
SELECT layer FROM bg, bf_layers(f) WHERE id = 1 AND layer < 5 AND inserted <> capacity;
-- every key found; the rates of the layers add up to less than 0.01
SELECT count(*) FILTER (WHERE NOT bf_contains(f, g::int8)) AS false_negatives
FROM bg, generate_series(1, 1000) g WHERE id = 1;
SELECT sum(target_fpr) < 0.01 AS bound FROM bg, bf_layers(f) WHERE id = 1;
SELECT layout, nbits, capacity, target_fpr, inserted, saturated, element_type
FROM bg, bf_info(f) WHERE id = 1;
SELECT bf_fpr(f) = (bf_info(f)).estimated_fpr AS fpr_is_info,
	   bf_cardinality(f) = (bf_info(f)).estimated_cardinality AS cardinality_is_info,
	   abs(bf_cardinality(f) - 1000) < 50 AS cardinality_near_1000,
	   bf_saturated(f)
FROM bg WHERE id = 1;
-- one-by-one adds give the bytes of bf_add_all
WITH RECURSIVE r(i, f) AS (
	SELECT 0, bf_create_growing(20, 0.01, 2, 11)
	UNION ALL
	SELECT i + 1, bf_add(f, (i + 1)::int8) FROM r WHERE i < 1000)
SELECT r.f::bytea = (SELECT f::bytea FROM bg WHERE id = 1) AS same_as_add_all FROM r WHERE i = 1000;

--
-- no false negative before, during or after a growth: after every single
-- add, every key added so far is found (random keys, duplicates, NULLs)
--
DO $$
DECLARE
	f bloomfilter := bf_create_growing(5, 0.01, 2, -4);
	keys int8[] := '{}';
	k int8;
	missed int := 0;
	layers int;
BEGIN
	PERFORM setseed(0.25);
	FOR i IN 1 .. 400 LOOP
		k := CASE WHEN i % 50 = 0 THEN NULL
				  WHEN i % 7 = 0 AND i > 1 THEN keys[1 + floor(random() * (array_length(keys, 1)))::int]
				  ELSE floor(random() * 1e12)::int8 END;
		f := bf_add(f, k);
		IF k IS NOT NULL THEN
			keys := keys || k;
		END IF;
		SELECT count(*) INTO STRICT missed FROM unnest(keys) u WHERE NOT bf_contains(f, u);
		IF missed > 0 THEN
			RAISE EXCEPTION 'after add % (%): % keys not found', i, k, missed;
		END IF;
	END LOOP;
	SELECT count(*) INTO layers FROM bf_layers(f);
	RAISE NOTICE '392 adds of % distinct keys, % layers, no key ever missed',
		(SELECT count(DISTINCT u) FROM unnest(keys) u), layers;
END $$;

--
-- the rate: 20 000 keys into capacity 100 (8 layers) answer at most 1 %
-- of 100 000 absent keys
--
INSERT INTO bg SELECT 2, bf_add_all(bf_create_growing(100, 0.01),
								   ARRAY(SELECT 'key-' || g FROM generate_series(1, 20000) g));
SELECT count(*) AS layers FROM bg, bf_layers(f) WHERE id = 2;
SELECT count(*) FILTER (WHERE bf_contains(f, 'absent-' || g))::float8 / 100000 <= 0.01 AS rate_within_target,
	   count(*) FILTER (WHERE bf_contains(f, 'key-' || (g % 20000 + 1))) = 100000 AS members_found
FROM bg, generate_series(1, 100000) g WHERE id = 2;
-- stored and TOASTed: probed one key per statement through the filter cache
SELECT pg_column_size(f) > 2000 AS toasted FROM bg WHERE id = 2;
SELECT bf_contains((SELECT f FROM bg WHERE id = 2), 'key-' || g) FROM generate_series(1, 3) g;
SELECT bf_contains((SELECT f FROM bg WHERE id = 2), 'absent-3');
SELECT 'key-17' <@ f, bf_contains_all(f, ARRAY['key-1', 'key-20000']),
	   bf_contains_any(f, ARRAY['absent-3', 'key-5']), bf_contains_all(f, ARRAY['key-1', NULL])
FROM bg WHERE id = 2;

--
-- adds: a key held already changes nothing; NULLs are skipped; records
--
SELECT (bf_info(bf_add(bf_add(bf_create_growing(10), 'a'::text), 'a'::text))).inserted AS one_insert;
SELECT bf_add(bf_create_growing(10), NULL::int) = bf_create_growing(10) AS null_adds_nothing,
	   bf_add(NULL::bloomfilter, 1) IS NULL AS null_filter_stays_null;
SELECT (bf_info(bf_add_all(bf_create_growing(2), ARRAY[1, NULL, 2, 3, NULL]))).inserted;
-- "has this user seen this attribute": (user, attribute) pairs
WITH f AS (SELECT bf_add_all(bf_create_growing(10, 0.01, 4),
							 ARRAY(SELECT ROW(u, 'attr-' || a) FROM generate_series(1, 30) u,
								   generate_series(1, 5) a)) AS f)
SELECT bf_contains(f, ROW(7, 'attr-3')) AS seen, bf_contains(f, ROW(7, 'attr-9')) AS not_seen,
	   (SELECT count(*) FROM bf_layers(f)) AS layers, (bf_info(f)).element_type
FROM f;
-- the family is fixed by the first add, in every layer
SELECT test_err($$SELECT bf_add(bf_add_all(bf_create_growing(2), ARRAY[1, 2, 3, 4, 5]), 'x'::text)$$);
SELECT test_err($$SELECT bf_contains(bf_add(bf_create_growing(2), 1), 'x'::text)$$);
-- nothing added: false for every key, of any family
SELECT bf_contains(bf_create_growing(10), 1), bf_contains(bf_create_growing(10), 'x'::text);

--
-- per-group growing filters kept by bf_sync_into: a target row whose
-- filter starts as bf_create_growing keeps growing, statement by statement
--
CREATE TABLE bg_users (user_id int PRIMARY KEY, seen bloomfilter);
CREATE TABLE bg_reads (user_id int, article_id bigint);
CREATE TRIGGER bg_sync AFTER INSERT ON bg_reads
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
	EXECUTE FUNCTION bf_sync_into('bg_users', 'user_id', 'seen', 'user_id', 'article_id');
INSERT INTO bg_users VALUES (1, bf_create_growing(10)), (2, NULL);
INSERT INTO bg_reads SELECT 1 + g % 2, g FROM generate_series(1, 100) g;
INSERT INTO bg_reads SELECT 1 + g % 2, g FROM generate_series(101, 400) g;
SELECT user_id, (bf_info(seen)).layout, (SELECT count(*) FROM bf_layers(seen)) AS layers,
	   (SELECT count(*) FROM bg_reads r WHERE r.user_id = u.user_id AND NOT bf_contains(u.seen, r.article_id)) AS missed
FROM bg_users u ORDER BY user_id;
DROP TABLE bg_reads, bg_users;

--
-- bf_clear keeps the first layer, emptied, and the family
--
SELECT layer, capacity, inserted, bits_set FROM bf_layers(bf_clear((SELECT f FROM bg WHERE id = 1)));
SELECT bf_contains(bf_clear((SELECT f FROM bg WHERE id = 1)), 5::int8) AS found_after_clear,
	   (bf_info(bf_clear((SELECT f FROM bg WHERE id = 1)))).element_type;

--
-- equality: bytes but the inserted counters; never equal to a plain filter
--
SELECT f = f AS same, f = bf_add(f, 1::int8) AS readd_is_same, f = bf_add(f, -1::int8) AS other_key,
	   f <> bf_create(20) AS not_plain, bf_create_growing(20) = bf_create(20) AS plain_equal
FROM bg WHERE id = 1;

--
-- set algebra refuses a growing filter (either side)
--
SELECT test_err($$SELECT bf_create_growing(10) | bf_create_growing(10)$$);
SELECT test_err($$SELECT bf_intersect(bf_create(10), bf_create_growing(10))$$);
SELECT test_err($$SELECT bf_union_agg(f) FROM (VALUES (bf_create_growing(10))) v(f)$$);

--
-- round trips: text, bytea, binary COPY
--
SELECT f::text::bloomfilter = f AS text_round_trip,
	   f::text::bloomfilter::bytea = f::bytea AS text_same_bytes,
	   f::bytea::bloomfilter::bytea = f::bytea AS bytea_round_trip
FROM bg;
SELECT f::text FROM (SELECT bf_add(bf_create_growing(3, 0.05, 2, 9), 42) f) s;
CREATE TEMP TABLE bg_copy (id int, f bloomfilter);
COPY bg TO '/tmp/bloomfilter_growing_regress.bin' WITH (FORMAT binary);
COPY bg_copy FROM '/tmp/bloomfilter_growing_regress.bin' WITH (FORMAT binary);
SELECT id, c.f::bytea = b.f::bytea AS binary_round_trip FROM bg b JOIN bg_copy c USING (id) ORDER BY id;

--
-- bad input: one error per broken rule, never a value that answers wrongly
--
CREATE FUNCTION bg_patch(b bytea, off int, hex text) RETURNS bytea LANGUAGE sql AS
	$$ SELECT overlay(b PLACING decode(hex, 'hex') FROM off + 1) $$;
CREATE TEMP TABLE bg_good AS
	SELECT f::bytea AS b FROM (SELECT bf_add_all(bf_create_growing(5, 0.01, 2, 3),
												 ARRAY(SELECT generate_series(1, 20))) f) s;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 4, '0200'))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 6, '0100'))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 8, '01000000'))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 16, '0600000000000000'))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 40, '01'))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', substr(b, 1, length(b) - 1))) FROM bg_good;
SELECT test_err(format('SELECT %L::bytea::bloomfilter', substr(b, 1, 64))) FROM bg_good;
-- a layer with another seed (layer 1 starts after layer 0's 64 + 64 bytes)
SELECT test_err(format('SELECT %L::bytea::bloomfilter', bg_patch(b, 64 + 128 + 16, '04'))) FROM bg_good;
-- the text form: one spelling per value
SELECT test_err(format('SELECT %L::bloomfilter', replace(f::text, 'fpr=0.05 ', 'fpr=0.050 ')))
FROM (SELECT bf_add(bf_create_growing(3, 0.05), 42) f) s;
SELECT test_err(format('SELECT %L::bloomfilter', replace(f::text, 'growth=2', 'growth=02')))
FROM (SELECT bf_add(bf_create_growing(3, 0.05), 42) f) s;
SELECT test_err(format('SELECT %L::bloomfilter', f::text || ' ')) FROM (SELECT bf_create_growing(3) f) s;
SELECT test_err($$SELECT 'bloomgrowing:1 capacity=3 fpr=0.01 ratio=0.9 growth=2'::bloomfilter$$);
SELECT test_err(format('SELECT %L::bloomfilter', replace(f::text, 'layer=bloomfilter:1', 'layer=bloomgrowing:1')))
FROM (SELECT bf_create_growing(3) f) s;
SELECT test_err(format('SELECT %L::bloomfilter', replace(f::text, 'capacity=3 fpr=0.01', 'capacity=4 fpr=0.01')))
FROM (SELECT bf_create_growing(3) f) s;

DROP TABLE bg;
DROP FUNCTION bg_patch(bytea, int, text);
DROP FUNCTION test_err(text), test_errcode(text);
