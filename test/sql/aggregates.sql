--
-- aggregates: bf_agg (sized and auto-sized), bf_union_agg,
-- bf_intersect_agg; accuracy of bf_cardinality and bf_fpr; parallel plans
-- giving the same bytes as serial ones.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
RESET client_min_messages;

--
-- bf_agg(value, capacity, fpr)
--
-- holds every non-NULL value, and has the size bf_create would give
SELECT (SELECT bool_and(bf_contains(f, g)) FROM generate_series(1, 1000) g) AS has_all,
	   (bf_info(f)).nbits = (bf_estimate(1000, 0.01)).nbits AS same_size,
	   (bf_info(f)).capacity AS capacity, (bf_info(f)).target_fpr AS target_fpr,
	   (bf_info(f)).seed AS seed
FROM (SELECT bf_agg(g, 1000, 0.01) AS f FROM generate_series(1, 1000) g) s;
-- the same bits as adding the values one by one
SELECT bf_agg(g, 1000, 0.01) = bf_add_all(bf_create(1000, 0.01), array_agg(g)) AS same_as_add
FROM generate_series(1, 700) g;
-- NULLs are skipped
SELECT bf_agg(v, 100, 0.01) = bf_add_all(bf_create(100, 0.01), ARRAY[1, 2]) AS nulls_skipped
FROM (VALUES (1), (NULL), (2), (NULL)) v(v);
-- zero rows, or only NULLs: an empty filter of the size asked
SELECT capacity, target_fpr, inserted, bits_set, element_type
FROM bf_info((SELECT bf_agg(g, 1000, 0.01) FROM generate_series(1, 0) g));
SELECT bf_agg(v, 1000, 0.01) = bf_create(1000, 0.01) AS all_null_is_empty
FROM (VALUES (NULL::int), (NULL)) v(v);
-- ... unless capacity or fpr are not constants: then zero rows give NULL
CREATE TABLE agg_empty (g int, c bigint);
SELECT bf_agg(g, c, 0.01) IS NULL AS nonconstant_zero_rows FROM agg_empty;
-- typed: text, records, non-portable types
SELECT bf_contains(f, 'k42'::text) AS text_member, bf_contains(f, 'k42'::varchar) AS varchar_member,
	   bf_contains(f, 'nope'::text) AS text_nonmember
FROM (SELECT bf_agg('k' || g, 100, 0.01) AS f FROM generate_series(1, 100) g) s;
SELECT bf_contains(f, ROW(7, 'v7'::text)) AS record_member,
	   bf_contains(f, ROW(7, 'v8'::text)) AS record_nonmember,
	   (bf_info(f)).element_type AS element_type
FROM (SELECT bf_agg(ROW(g, 'v' || g), 100, 0.01) AS f FROM generate_series(1, 100) g) s;
SELECT bf_contains(f, '10.0.0.7'::inet) AS inet_member, (bf_info(f)).portable AS portable
FROM (SELECT bf_agg(('10.0.0.' || g)::inet, 100, 0.01) AS f FROM generate_series(1, 100) g) s;
-- one filter per group
SELECT grp, bf_contains(f, grp) AS own, bf_contains(f, grp + 1) AS next
FROM (SELECT g % 3 AS grp, bf_agg(g, 100, 0.01) AS f FROM generate_series(0, 29) g GROUP BY 1) s
ORDER BY grp;
-- as a window function: the running filter
SELECT g, bf_contains(bf_agg(g, 100, 0.01) OVER (ORDER BY g), 3) AS has_3
FROM generate_series(1, 5) g;
-- errors
SELECT bf_agg(g, 0, 0.01) FROM generate_series(1, 3) g;
SELECT bf_agg(g, 1000, 1.5) FROM generate_series(1, 3) g;
SELECT bf_agg(g, NULL, 0.01) FROM generate_series(1, 3) g;
SELECT bf_agg(g, g, 0.01) FROM generate_series(1, 3) g;
SELECT bf_agg(g, 10000000000000, 0.0001) FROM generate_series(1, 3) g;
SELECT bf_agg(g::text::json, 10, 0.01) FROM generate_series(1, 3) g;

--
-- bf_agg(value) and bf_agg(value, fpr): sized for the distinct values seen
--
SELECT capacity, target_fpr, nbits = (bf_estimate(5000, 0.01)).nbits AS sized_for_distinct,
	   inserted BETWEEN 4950 AND 5000 AS inserted_ok, element_type
FROM bf_info((SELECT bf_agg(g % 5000) FROM generate_series(1, 20000) g));
SELECT capacity, target_fpr, nbits = (bf_estimate(5000, 0.001)).nbits AS sized_for_distinct
FROM bf_info((SELECT bf_agg(g % 5000, 0.001) FROM generate_series(1, 20000) g));
-- the bits are those of a sized filter of that capacity (seed 0)
SELECT bf_agg(g) = bf_add_all(bf_create(3000, 0.01), array_agg(g)) AS same_as_sized
FROM generate_series(1, 3000) g;
-- no false negatives, for several types
SELECT bool_and(bf_contains(f, g)) AS int_all
FROM (SELECT bf_agg(g) AS f FROM generate_series(1, 10000) g) s, generate_series(1, 10000) g;
SELECT bool_and(bf_contains(f, 'k' || g)) AS text_all
FROM (SELECT bf_agg('k' || g) AS f FROM generate_series(1, 10000) g) s, generate_series(1, 10000) g;
SELECT (SELECT bool_and(bf_contains(f, ROW(g, g % 7))) FROM generate_series(1, 1000) g) AS record_all,
	   (bf_info(f)).element_type
FROM (SELECT bf_agg(ROW(g, g % 7)) AS f FROM generate_series(1, 1000) g) s;
-- zero rows or only NULLs: NULL (there is no count to size for)
SELECT bf_agg(g) IS NULL AS zero_rows, bf_agg(g, 0.05) IS NULL AS zero_rows_fpr
FROM generate_series(1, 0) g;
SELECT bf_agg(v) IS NULL AS all_null FROM (VALUES (NULL::int), (NULL)) v(v);
-- groups and windows
SELECT grp, (bf_info(f)).capacity AS capacity, bf_contains(f, grp) AS own
FROM (SELECT g % 3 AS grp, bf_agg(g) AS f FROM generate_series(0, 29) g GROUP BY 1) s
ORDER BY grp;
SELECT g, bf_contains(f, 3) AS has_3, (bf_info(f)).capacity AS capacity
FROM (SELECT g, bf_agg(g) OVER (ORDER BY g) AS f FROM generate_series(1, 5) g) s;
-- errors
SELECT bf_agg(g, 0.0) FROM generate_series(1, 3) g;
SELECT bf_agg(g, NULL::float8) FROM generate_series(1, 3) g;
SELECT bf_agg(g, g / 10.0) FROM generate_series(1, 3) g;

--
-- bf_union_agg and bf_intersect_agg
--
-- five filters of 1..100 plus 100 values of their own each
CREATE TABLE agg_parts AS
SELECT p, bf_agg(v, 1000, 0.01) AS f
FROM (SELECT p, v FROM generate_series(1, 5) p, generate_series(1, 100) v
	  UNION ALL
	  SELECT p, p * 1000 + v FROM generate_series(1, 5) p, generate_series(1, 100) v) s
GROUP BY p;
SELECT bf_union_agg(f) = (SELECT f FROM agg_parts WHERE p = 1) | (SELECT f FROM agg_parts WHERE p = 2)
		 | (SELECT f FROM agg_parts WHERE p = 3) | (SELECT f FROM agg_parts WHERE p = 4)
		 | (SELECT f FROM agg_parts WHERE p = 5) AS union_is_or,
	   bf_intersect_agg(f) = (SELECT f FROM agg_parts WHERE p = 1) & (SELECT f FROM agg_parts WHERE p = 2)
		 & (SELECT f FROM agg_parts WHERE p = 3) & (SELECT f FROM agg_parts WHERE p = 4)
		 & (SELECT f FROM agg_parts WHERE p = 5) AS intersect_is_and
FROM agg_parts;
CREATE TABLE agg_parts_ui AS
SELECT bf_union_agg(f) AS u, bf_intersect_agg(f) AS i FROM agg_parts;
CREATE TABLE agg_parts_vals AS
SELECT v FROM generate_series(1, 100) v
UNION ALL SELECT p * 1000 + v FROM generate_series(1, 5) p, generate_series(1, 100) v;
SELECT bool_and(bf_contains(u, v)) AS union_has_all,
	   bool_and(bf_contains(i, v)) FILTER (WHERE v <= 100) AS intersection_has_common,
	   count(*) FILTER (WHERE v > 1000 AND bf_contains(i, v)) < 10 AS intersection_rejects,
	   bool_and(abs(bf_cardinality(u) - 600) / 600 < 0.05) AS union_card
FROM agg_parts_ui, agg_parts_vals;
-- NULL filters are skipped; zero rows give NULL
SELECT bf_union_agg(f) = bf_union_agg(f) FILTER (WHERE p <> 3) | (SELECT f FROM agg_parts WHERE p = 3)
		 AS null_skipped
FROM (SELECT p, CASE WHEN p = 3 THEN NULL ELSE f END AS f FROM agg_parts
	  UNION ALL SELECT 3, f FROM agg_parts WHERE p = 3) s;
SELECT bf_union_agg(f) IS NULL AS union_zero, bf_intersect_agg(f) IS NULL AS intersect_zero
FROM agg_parts WHERE p < 0;
SELECT bf_intersect_agg(f) = (SELECT f FROM agg_parts WHERE p = 2) AS intersect_one
FROM agg_parts WHERE p = 2;
-- mismatched parameters
SELECT bf_union_agg(f) FROM (SELECT bf_create(1000) AS f UNION ALL SELECT bf_create(2000)) s;
SELECT bf_intersect_agg(f)
FROM (SELECT bf_add(bf_create(10), 1) AS f UNION ALL SELECT bf_add(bf_create(10), 'a'::text)) s;

--
-- accuracy of bf_cardinality at the sized capacity: within 5 %.  At
-- capacity (half the bits set) the estimate's standard error is about
-- 0.44 / sqrt(n): 0.4 % at n = 10 000, so 5 % is over ten standard errors.
--
SELECT n, abs(bf_cardinality(f) - n) / n < 0.05 AS card_within_5pct
FROM (SELECT 10000 AS n, bf_agg(g, 10000, 0.01) AS f FROM generate_series(1, 10000) g
	  UNION ALL
	  SELECT 30000, bf_agg(g, 30000, 0.01) FROM generate_series(1, 30000) g
	  UNION ALL
	  SELECT 20000, bf_agg('t' || g, 20000, 0.001) FROM generate_series(1, 20000) g) s;
-- and below capacity
SELECT abs(bf_cardinality(f) - 4000) / 4000 < 0.05 AS card_at_fifth
FROM (SELECT bf_agg(g, 20000, 0.01) AS f FROM generate_series(1, 4000) g) s;

--
-- accuracy of bf_fpr: predicted vs measured over 300 000 non-members,
-- within a factor of 1.3.  The rarest case ("half capacity", about 0.07 %)
-- expects some 200 hits, a standard error of 7 %: 1.3 is over three
-- standard errors away; the others expect thousands.
--
CREATE TABLE agg_fpr AS
SELECT 'at capacity' AS what, bf_agg(g, 10000, 0.01) AS f FROM generate_series(1, 10000) g
UNION ALL
SELECT 'half capacity', bf_agg(g, 20000, 0.01) FROM generate_series(1, 10000) g
UNION ALL
SELECT 'twice capacity', bf_agg(g, 5000, 0.01) FROM generate_series(1, 10000) g
UNION ALL
SELECT 'auto-sized', bf_agg(g) FROM generate_series(1, 10000) g
UNION ALL
SELECT 'intersection', bf_agg(g, 10000, 0.01) FROM generate_series(1, 10000) g;
UPDATE agg_fpr SET f = f & (SELECT bf_agg(g, 10000, 0.01) FROM generate_series(5001, 15000) g)
WHERE what = 'intersection';
SELECT what, measured / predicted BETWEEN 1 / 1.3 AND 1.3 AS within_1_3,
	   predicted > 0.005 AS above_half_pct
FROM (SELECT what, bf_fpr(f) AS predicted,
			 (SELECT count(*) FILTER (WHERE bf_contains(f, g)) FROM generate_series(1000001, 1300000) g)
			   / 3e5 AS measured
	  FROM agg_fpr) s
ORDER BY what;

--
-- parallel plans give the same bytes as serial ones
--
CREATE TABLE agg_par AS
SELECT g, 'k' || g AS t, g % 100 AS grp FROM generate_series(1, 30000) g;
CREATE TABLE agg_par_f AS
SELECT grp, bf_agg(g, 10000, 0.01) AS f
FROM (SELECT grp, g FROM agg_par UNION ALL SELECT grp, -c FROM agg_par, generate_series(1, 5) c
	  WHERE g <= 1000) s
GROUP BY grp;
ANALYZE agg_par;
ANALYZE agg_par_f;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT bf_agg(g, 30000, 0.01), bf_agg(t), bf_agg(g, 0.001) FROM agg_par;
SELECT bf_agg(g, 30000, 0.01) AS p_sized, md5(bf_agg(g, 30000, 0.01)::bytea) AS p_sized_md5,
	   bf_agg(t) AS p_auto, md5(bf_agg(t)::bytea) AS p_auto_md5,
	   bf_agg(g, 0.001) AS p_auto_fpr, md5(bf_agg(g, 0.001)::bytea) AS p_auto_fpr_md5
FROM agg_par \gset
EXPLAIN (COSTS OFF)
SELECT bf_union_agg(f), bf_intersect_agg(f) FROM agg_par_f;
SELECT bf_union_agg(f) AS p_union, md5(bf_union_agg(f)::bytea) AS p_union_md5,
	   bf_intersect_agg(f) AS p_inter, md5(bf_intersect_agg(f)::bytea) AS p_inter_md5
FROM agg_par_f \gset
-- zero rows in parallel: the sized form still returns an empty filter
EXPLAIN (COSTS OFF)
SELECT bf_agg(g, 1000, 0.01) FROM agg_par WHERE g < 0;
SELECT bf_agg(g, 1000, 0.01) = bf_create(1000, 0.01) AS parallel_zero_rows,
	   bf_agg(g) IS NULL AS parallel_zero_rows_auto
FROM agg_par WHERE g < 0;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT bf_agg(g, 30000, 0.01), bf_agg(t), bf_agg(g, 0.001) FROM agg_par;
SELECT bf_agg(g, 30000, 0.01) = :'p_sized'::bloomfilter AS sized_eq,
	   md5(bf_agg(g, 30000, 0.01)::bytea) = :'p_sized_md5' AS sized_bytes,
	   bf_agg(t) = :'p_auto'::bloomfilter AS auto_eq,
	   md5(bf_agg(t)::bytea) = :'p_auto_md5' AS auto_bytes,
	   bf_agg(g, 0.001) = :'p_auto_fpr'::bloomfilter AS auto_fpr_eq,
	   md5(bf_agg(g, 0.001)::bytea) = :'p_auto_fpr_md5' AS auto_fpr_bytes
FROM agg_par;
SELECT bf_union_agg(f) = :'p_union'::bloomfilter AS union_eq,
	   md5(bf_union_agg(f)::bytea) = :'p_union_md5' AS union_bytes,
	   bf_intersect_agg(f) = :'p_inter'::bloomfilter AS inter_eq,
	   md5(bf_intersect_agg(f)::bytea) = :'p_inter_md5' AS inter_bytes
FROM agg_par_f;
-- and the results are right: all members present, common values in the
-- intersection
SELECT bool_and(bf_contains(:'p_sized'::bloomfilter, g)) AS sized_all,
	   bool_and(bf_contains(:'p_auto'::bloomfilter, t)) AS auto_all,
	   bool_and(bf_contains(:'p_union'::bloomfilter, g)) AS union_all,
	   (bf_info(:'p_auto'::bloomfilter)).capacity AS auto_capacity
FROM agg_par;
SELECT bool_and(bf_contains(:'p_inter'::bloomfilter, -c)) AS intersection_common
FROM generate_series(1, 5) c;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- the support functions cannot be called outside an aggregate (the
-- server refuses a value of type internal, in words that differ between
-- minor releases: show only whether the call was refused)
DO $$
BEGIN
	PERFORM bf_agg_filter_serialize(NULL::internal);
	RAISE EXCEPTION 'bf_agg_filter_serialize ran outside an aggregate';
EXCEPTION WHEN OTHERS THEN
	RAISE NOTICE 'refused: %', SQLERRM NOT LIKE 'bf_agg_filter_serialize ran%';
END
$$;

-- the auto-sized form stops at 2^24 distinct values, or fewer if the
-- setting says so (the same code, with a cheaper test)
SELECT min_val, max_val, boot_val, context FROM pg_settings
WHERE name = 'bloomfilter.agg_max_distinct';
SET bloomfilter.agg_max_distinct = 10000;
SELECT bf_agg(x) IS NULL FROM (SELECT generate_series(1, 30000) AS x) s;
SELECT (bf_info(bf_agg(x))).capacity FROM (SELECT generate_series(1, 10000) AS x) s;
RESET bloomfilter.agg_max_distinct;
SHOW bloomfilter.agg_max_distinct;
