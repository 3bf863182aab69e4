--
-- Unions (the union form of bloomfilter, docs/FORMAT.md section 10): filters
-- of any sizes side by side, read only.  What bf_union_layered makes of
-- plain and growing filters, the answers (any layer), the rate bound, the
-- functions that take a union and those that refuse one, round trips and
-- bad input.  (The filters of distributed tables: test/suites/92-citus.sh.)
--
\i test/sql/include/errors.sql

-- two filters of different sizes and rates: a key of either is found
CREATE TEMP TABLE u AS
SELECT bf_union_layered(bf_add_all(bf_create(100, 0.01), ARRAY(SELECT g FROM generate_series(1, 100) g)),
						bf_add_all(bf_create(5000, 0.001), ARRAY(SELECT g FROM generate_series(1001, 6000) g))) AS f;
SELECT layout, nbits, nhashes, capacity, target_fpr, inserted, element_type, portable FROM u, bf_info(f);
SELECT layer, nbits, nhashes, capacity, target_fpr, inserted FROM u, bf_layers(f);
-- no false negative: every key of every layer
SELECT count(*) AS missed FROM u, generate_series(1, 100) g WHERE NOT bf_contains(f, g);
SELECT count(*) AS missed FROM u, generate_series(1001, 6000) g WHERE NOT bf_contains(f, g);
-- absent keys at about the rate bound (1 - 0.99 * 0.999 = 1.099 %; the
-- first layer is full, the second exactly at capacity)
SELECT count(*) FILTER (WHERE bf_contains(f, g)) BETWEEN 30 AND 300 AS rate_near_bound
FROM u, generate_series(100001, 120000) g;
-- the answers of bf_contains_all / _any / <@ are those of any layer
SELECT bf_contains_all(f, ARRAY[1, 1001]), bf_contains_any(f, ARRAY[-1, 6000]),
	   7::bigint <@ f AS contained FROM u;
-- a union of any form: a growing filter contributes every layer
SELECT count(*) AS layers,
	   bool_and(bf_contains(bf_union_layered(bf_create(10), g), 77)) AS found
FROM (SELECT bf_add_all(bf_create_growing(20, 0.01, 2), ARRAY(SELECT x FROM generate_series(1, 200) x)) g) s,
	 bf_layers(bf_union_layered(bf_create(10), g));
-- a union of unions: their layers, flattened
SELECT count(*) FROM u, bf_layers(bf_union_layered(f, f));
-- a filter nothing was added to takes the others' family
SELECT (bf_info(bf_union_layered(bf_create(10), bf_add(bf_create(10), 'x'::text)))).element_type;
-- NULL elements are skipped; none at all gives NULL
SELECT bf_contains(bf_union_layered(NULL, bf_add(bf_create(10), 1)), 1);
SELECT bf_union_layered(VARIADIC ARRAY[]::bloomfilter[]) IS NULL AS empty_is_null,
	   bf_union_layered(VARIADIC ARRAY[NULL]::bloomfilter[]) IS NULL AS nulls_only_is_null;

-- text and binary forms round-trip; the text is the one output prints
SELECT f::text::bloomfilter = f AS text_round_trip,
	   f::bytea::bloomfilter = f AS bytes_round_trip,
	   left(f::text, 48) AS text_starts
FROM u;
-- equality: a union never equals a filter of another form
SELECT bf_union_layered(bf_create(10)) = bf_create(10) AS equals_plain,
	   bf_union_layered(bf_create(10)) = bf_union_layered(bf_create(10)) AS equals_itself;
-- bf_clear empties every layer and keeps them
SELECT count(*) AS layers, sum(bits_set) AS bits_set FROM u, bf_layers(bf_clear(f));
SELECT bf_contains(bf_clear(f), 1) FROM u;

-- read only: adding, set algebra and the aggregates refuse a union
SELECT test_err($$SELECT bf_add(f, 1) FROM u$$);
SELECT test_err($$SELECT bf_add_all(f, ARRAY[1, 2]) FROM u$$);
SELECT test_err($$SELECT bf_union(f, f) FROM u$$);
SELECT test_err($$SELECT f | f FROM u$$);
SELECT test_err($$SELECT bf_union_agg(f) FROM u$$);
-- filters that cannot be side by side
SELECT test_err($$SELECT bf_union_layered(bf_add(bf_create(10), 1), bf_add(bf_create(10), 'a'::text))$$);
SELECT test_err($$SELECT bf_union_layered(bf_create(10, 0.01, 1), bf_create(10, 0.01, 2))$$);
-- (an empty filter first: the others are still compared with each other)
SELECT test_err($$SELECT bf_union_layered(bf_create(10), bf_add(bf_create(10), 1), bf_add(bf_create(10), 'a'::text))$$);
SELECT test_err($$SELECT bf_union_layered(VARIADIC ARRAY(SELECT bf_create(10) FROM generate_series(1, 65)))$$);
-- bad bytes: the capacity must be the layers' sum, reserved bytes 0
SELECT test_err($$SELECT overlay(f::bytea PLACING '\x01'::bytea FROM 17 FOR 1)::bloomfilter FROM u$$);
SELECT test_err($$SELECT overlay(f::bytea PLACING '\x02'::bytea FROM 9 FOR 1)::bloomfilter FROM u$$);
SELECT test_err($$SELECT overlay(f::bytea PLACING '\x01'::bytea FROM 33 FOR 1)::bloomfilter FROM u$$);
-- bad text
SELECT test_err($$SELECT 'bloomunion:1 capacity=10 fpr=0.01'::bloomfilter$$);
SELECT test_err($$SELECT replace(f::text, 'capacity=5100', 'capacity=5101')::bloomfilter FROM u$$);
DROP TABLE u;
DROP FUNCTION test_err(text), test_errcode(text);
