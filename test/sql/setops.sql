--
-- setops: bf_union / |, bf_intersect / &, = / <>, and the introspection
-- functions bf_cardinality, bf_fpr, bf_saturated, bf_info.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
RESET client_min_messages;

\i test/sql/include/errors.sql

-- a holds 1..300, b holds 201..500: 100 values in common
CREATE TABLE so_f AS
SELECT bf_add_all(bf_create(1000, 0.01), ARRAY(SELECT generate_series(1, 300))) AS a,
	   bf_add_all(bf_create(1000, 0.01), ARRAY(SELECT generate_series(201, 500))) AS b;

--
-- union and intersection
--
-- no false negatives: the union has all 500, the intersection the common 100
SELECT bool_and(bf_contains(a | b, g)) AS union_has_all
FROM so_f, generate_series(1, 500) g;
SELECT bool_and(bf_contains(a & b, g)) AS intersection_has_common
FROM so_f, generate_series(201, 300) g;
-- values in only one of them are (almost all) rejected by the intersection
SELECT count(*) FILTER (WHERE bf_contains(a & b, g)) < 10 AS intersection_rejects
FROM so_f, generate_series(1, 200) g;
-- the functions and the operators agree
SELECT bf_union(a, b) = (a | b) AS union_op, bf_intersect(a, b) = (a & b) AS intersect_op
FROM so_f;
-- same bits whichever side (both sides have the same capacity here)
SELECT (a | b) = (b | a) AS union_commutes, (a & b) = (b & a) AS intersect_commutes
FROM so_f;
-- idempotent; the empty filter is the identity of | and the zero of &
SELECT (a | a) = a AS union_idem, (a & a) = a AS intersect_idem,
	   (a | bf_create(1000, 0.01)) = a AS union_empty_right,
	   (bf_create(1000, 0.01) | a) = a AS union_empty_left,
	   (a & bf_create(1000, 0.01)) = bf_clear(a) AS intersect_empty_right,
	   (bf_create(1000, 0.01) & a) = bf_clear(a) AS intersect_empty_left
FROM so_f;
-- an empty filter takes the family of the other side
SELECT (bf_info(bf_create(1000, 0.01) | a)).element_type AS union_family,
	   (bf_info(bf_create(1000, 0.01) & a)).element_type AS intersect_family,
	   (bf_info(bf_create(1000, 0.01) | bf_create(1000, 0.01))).element_type AS both_empty
FROM so_f;
-- the result keeps the capacity and target rate of the left input
SELECT (bf_info(a | bf_create_sized(10240, 5))).capacity AS left_capacity,
	   (bf_info(bf_create_sized(10240, 5) | a)).capacity AS left_sized_capacity
FROM so_f;
-- inserted of a union is its rounded cardinality estimate; of an
-- intersection at most the smaller input's
SELECT (bf_info(a | b)).inserted = round(bf_cardinality(a | b)) AS union_inserted,
	   (bf_info(a & b)).inserted <= least((bf_info(a)).inserted, (bf_info(b)).inserted)
		 AS intersect_inserted
FROM so_f;
-- cardinality: the union estimates |a ∪ b| = 500; the intersection
-- estimate is biased upwards (bits of non-common values that happen to
-- be set in the other filter count too): above the true 100
SELECT abs(bf_cardinality(a | b) - 500) / 500 < 0.05 AS union_card,
	   bf_cardinality(a & b) > 100 AS intersect_card_upper
FROM so_f;
-- the inputs are not modified
SELECT bf_contains(a, 301) AS a_unchanged, bf_contains(b, 200) AS b_unchanged
FROM so_f, LATERAL (SELECT a | b, a & b) x;

-- mismatched parameters: an error naming the first difference
SELECT bf_create(1000) | bf_create(2000);
SELECT bf_create(1000) & bf_create(2000);
SELECT bf_create_sized(1024, 3) | bf_create_sized(1024, 4);
SELECT bf_create(1000, 0.01, 1) | bf_create(1000, 0.01, -2);
SELECT bf_add(bf_create(1000), 1) | bf_add(bf_create(1000), 'x'::text);
SELECT bf_add(bf_create(1000), 1) & bf_add(bf_create(1000), 1.5::float8);
SELECT bf_add(bf_create(1000), ROW(1, 'a'::text)) | bf_add(bf_create(1000), ROW('a'::text, 1));
-- nbits is reported before nhashes and seed
SELECT bf_create_sized(1024, 3, 1) | bf_create_sized(2048, 4, 2);
SELECT test_errcode('SELECT bf_create(1000) | bf_create(2000)') AS size_state,
	   test_errcode('SELECT bf_add(bf_create(10), 1) & bf_add(bf_create(10), true)') AS family_state;
-- NULL in, NULL out
SELECT bf_union(NULL, bf_create(10)) IS NULL AS union_null,
	   (bf_create(10) & NULL) IS NULL AS intersect_null;

--
-- equality: same parameters and same bits; inserted does not take part
--
SELECT a = a AS eq_self, a = b AS eq_other, a <> b AS ne_other, a <> a AS ne_self
FROM so_f;
-- the same filter with another inserted counter (bytes 32..39) is equal
SELECT overlay(a::bytea PLACING '\x0700000000000000'::bytea FROM 33 FOR 8)::bloomfilter = a
		 AS inserted_ignored,
	   (bf_info(overlay(a::bytea PLACING '\x0700000000000000'::bytea FROM 33 FOR 8)::bloomfilter)).inserted
		 AS inserted_there
FROM so_f;
SELECT bf_create(1000, 0.01) = bf_create(1000, 0.01) AS same_params,
	   bf_create(1000, 0.01, 1) = bf_create(1000, 0.01, 2) AS other_seed,
	   bf_create(1000, 0.01) = bf_create(2000, 0.01) AS other_size,
	   bf_create_sized(10240, 5) = bf_create(1000, 0.01) AS other_capacity,
	   bf_create(1000) = bf_clear(bf_add(bf_create(1000), 1)) AS other_family,
	   bf_create(1000) <> bf_clear(bf_add(bf_create(1000), 1)) AS ne_other_family;
-- the same values added in another order give equal filters
SELECT bf_add_all(bf_create(100), ARRAY[1, 2, 3]) = bf_add_all(bf_create(100), ARRAY[3, 1, 2, 2])
		 AS order_free;
-- usable in WHERE and joins
SELECT count(*) AS self_join FROM so_f x JOIN so_f y ON x.a = y.a;

--
-- introspection
--
SELECT layout, nbits, nhashes, seed, bytes, capacity, target_fpr, element_type, portable
FROM bf_info(bf_add(bf_create(1000, 0.01), 42));
SELECT inserted, bits_set, fill_ratio, estimated_cardinality > 0.9 AND estimated_cardinality < 1.1 AS card_one,
	   estimated_fpr < 1e-10 AS fpr_tiny, saturated
FROM bf_info(bf_add(bf_create(1000, 0.01), 42));
-- an empty filter
SELECT bytes, inserted, bits_set, fill_ratio, estimated_cardinality, estimated_fpr, saturated,
	   element_type, portable
FROM bf_info(bf_create(1000, 0.01));
-- a filter sized explicitly has no capacity or target rate
SELECT nbits, nhashes, seed, capacity, target_fpr, saturated
FROM bf_info(bf_create_sized(1000, 3, -5));
-- the columns agree with the functions
SELECT i.bytes = pg_column_size(a) AS bytes_ok,
	   i.inserted BETWEEN 290 AND 300 AS inserted_ok,
	   i.bits_set BETWEEN 1300 AND 1500 AS bits_set_ok,
	   i.fill_ratio = i.bits_set / 10240.0 AS fill_ok,
	   i.estimated_cardinality = bf_cardinality(a) AS card_ok,
	   i.estimated_fpr = bf_fpr(a) AS fpr_ok,
	   i.saturated = bf_saturated(a) AS saturated_ok,
	   abs(i.estimated_cardinality - 300) / 300 < 0.05 AS card_close
FROM so_f, LATERAL bf_info(a) i;
-- element types as in the text form
SELECT (bf_info(bf_add(bf_create(10), 'x'::varchar))).element_type AS text_family,
	   (bf_info(bf_add(bf_create(10), ROW(1, 'a'::text)))).element_type AS record_family,
	   (bf_info(bf_add(bf_create(10), '10.0.0.1'::inet))).element_type AS other_family,
	   (bf_info(bf_add(bf_create(10), '10.0.0.1'::inet))).portable AS other_portable;

-- bf_cardinality and bf_fpr of an empty filter; saturation by fill
SELECT bf_cardinality(bf_create(1000)) AS empty_card, bf_fpr(bf_create(1000)) AS empty_fpr,
	   bf_saturated(bf_create(1000)) AS empty_saturated;
SELECT bf_saturated(bf_add_all(bf_create(1000, 0.01), ARRAY(SELECT generate_series(1, 500))))
		 AS half_full,
	   bf_saturated(bf_add_all(bf_create(1000, 0.01), ARRAY(SELECT generate_series(1, 2000))))
		 AS twice_full;
-- without a target: saturated once more than half the bits are set
SELECT bf_saturated(bf_add_all(bf_create_sized(10240, 5), ARRAY(SELECT generate_series(1, 300))))
		 AS sized_light,
	   bf_saturated(bf_add_all(bf_create_sized(10240, 5), ARRAY(SELECT generate_series(1, 3000))))
		 AS sized_heavy;
-- every bit set: cardinality Infinity, fpr 1, saturated; the inserted
-- count of a union stays finite
CREATE TABLE so_full AS
SELECT bf_add_all(bf_create_sized(512, 1), ARRAY(SELECT generate_series(1, 20000))) AS f;
SELECT (bf_info(f)).bits_set AS bits_set, bf_cardinality(f) AS card, bf_fpr(f) AS fpr,
	   bf_saturated(f) AS saturated, (bf_info(f | f)).inserted BETWEEN 3000 AND 5000 AS union_inserted
FROM so_full;
-- fpr of a partly filled filter: (bits set in the block / 512)^k averaged
-- over the blocks; one block with c bits set and k = 1 gives c / 512
SELECT bf_fpr(f) = (bf_info(f)).fill_ratio AS one_block_k1
FROM (SELECT bf_add_all(bf_create_sized(512, 1), ARRAY[1, 2, 3, 4, 5]) AS f) s;
DROP FUNCTION test_err(text), test_errcode(text);
