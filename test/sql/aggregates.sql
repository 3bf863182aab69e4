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

--
-- transition states of SQL types (1.2): bloomfilter, bytea for the
-- auto-sized form, bloomwindow; a distributed planner (Citus) combines
-- partial states only when the state is not a pseudo-type, and runs them
-- only when the argument types are exactly the aggregate's: the overloads
-- for the common key types have such states, the polymorphic forms keep
-- their internal states (Citus gathers their rows)
--
\i test/sql/include/errors.sql
SELECT aggtranstype::regtype AS state,
	   pg_catalog.pg_get_function_identity_arguments(aggfnoid) LIKE 'anyelement%' AS polymorphic,
	   count(*) AS aggregates, count(DISTINCT p.proname) AS names
FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname LIKE 'bf\_%agg'
GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) AS internal_states_of_overloads FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
WHERE p.proname LIKE 'bf\_%agg' AND aggtranstype = 'internal'::regtype
  AND pg_catalog.pg_get_function_identity_arguments(aggfnoid) NOT LIKE 'anyelement%';
-- which form a call takes: the overload of the value's type, or the
-- polymorphic one
SELECT pg_typeof(x) AS value_type, (SELECT aggtranstype::regtype FROM pg_aggregate
	WHERE aggfnoid = 'bf_agg(text, bigint, float8)'::regprocedure) AS text_state
FROM (SELECT 'a'::text AS x) s;

-- every key type takes exactly one form and hashes as bf_add does (no
-- implicit cast changes a key: timestamp, "char", smallint have their own
-- overloads; varchar, char(n) and name take text's, which hashes them alike)
SELECT t, f = g AS same_as_bf_add_all FROM (
	SELECT 'smallint' AS t, bf_agg(x::int2, 100, 0.01) AS f, bf_add_all(bf_create(100, 0.01), array_agg(x::int2)) AS g FROM generate_series(1, 50) x
	UNION ALL SELECT 'timestamp', bf_agg(timestamp '2026-01-01' + x * interval '1 hour', 100, 0.01),
		bf_add_all(bf_create(100, 0.01), array_agg(timestamp '2026-01-01' + x * interval '1 hour')) FROM generate_series(1, 50) x
	UNION ALL SELECT '"char"', bf_agg(chr(64 + x)::"char", 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(chr(64 + x)::"char")) FROM generate_series(1, 26) x
	UNION ALL SELECT 'varchar', bf_agg(x::text::varchar, 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(x::text::varchar)) FROM generate_series(1, 50) x
	UNION ALL SELECT 'char(4)', bf_agg(x::text::char(4), 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(x::text::char(4))) FROM generate_series(1, 50) x
	UNION ALL SELECT 'name', bf_agg(x::text::name, 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(x::text::name)) FROM generate_series(1, 50) x
	UNION ALL SELECT 'float8', bf_agg(x::float8, 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(x::float8)) FROM generate_series(1, 50) x
	UNION ALL SELECT 'date', bf_agg(date '2026-01-01' + x, 100, 0.01), bf_add_all(bf_create(100, 0.01), array_agg(date '2026-01-01' + x)) FROM generate_series(1, 50) x
) s ORDER BY t;
SELECT bf_contains(bf_agg(timestamp '2026-01-01 10:00', 100, 0.01), timestamp '2026-01-01 10:00') AS timestamp_found,
	   bf_contains(bf_agg(7::int2), 7) AS smallint_found;

-- serial and parallel plans, many groups: the same bytes for every group
CREATE TABLE agg_grp AS
SELECT g, g % 500 AS grp, timestamptz '2024-03-01' + g * interval '17 seconds' AS at
FROM generate_series(1, 60000) g;
CREATE TABLE agg_grp_f AS
SELECT grp, sub, bf_agg(g, 200, 0.01) AS f
FROM (SELECT g, g % 100 AS grp, g % 7 AS sub FROM generate_series(1, 20000) g) s
GROUP BY grp, sub;
ANALYZE agg_grp;
ANALYZE agg_grp_f;
CREATE VIEW agg_grp_digest AS
SELECT 'sized' AS agg, md5(string_agg(md5(f::bytea), ',' ORDER BY grp)) AS digest, count(*) AS groups
FROM (SELECT grp, bf_agg(g, 200, 0.01) AS f FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'auto', md5(string_agg(md5(f::bytea), ',' ORDER BY grp)), count(*)
FROM (SELECT grp, bf_agg(g) AS f FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'auto fpr', md5(string_agg(md5(f::bytea), ',' ORDER BY grp)), count(*)
FROM (SELECT grp, bf_agg(g, 0.001) AS f FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'window', md5(string_agg(md5(w::bytea), ',' ORDER BY grp)), count(*)
FROM (SELECT grp, bf_window_agg(g, at, '1 hour', 200) AS w FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'union', md5(string_agg(md5(f::bytea), ',' ORDER BY grp)), count(*)
FROM (SELECT grp, bf_union_agg(f) AS f FROM agg_grp_f GROUP BY grp) s
UNION ALL
SELECT 'intersect', md5(string_agg(md5(f::bytea), ',' ORDER BY grp)), count(*)
FROM (SELECT grp, bf_intersect_agg(f) AS f FROM agg_grp_f GROUP BY grp) s;
CREATE TABLE agg_grp_serial AS SELECT * FROM agg_grp_digest;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT grp, bf_agg(g, 200, 0.01), bf_agg(g), bf_window_agg(g, at, '1 hour', 200) FROM agg_grp GROUP BY grp;
EXPLAIN (COSTS OFF)
SELECT grp, bf_union_agg(f), bf_intersect_agg(f) FROM agg_grp_f GROUP BY grp;
SELECT p.agg, p.groups, p.digest = s.digest AS same_as_serial
FROM agg_grp_digest p JOIN agg_grp_serial s USING (agg) ORDER BY p.agg;
-- sorted groups in parallel too (Partial GroupAggregate)
SET enable_hashagg = off;
EXPLAIN (COSTS OFF)
SELECT grp, bf_agg(g, 200, 0.01), bf_agg(g), bf_window_agg(g, at, '1 hour', 200) FROM agg_grp GROUP BY grp;
SELECT p.agg, p.digest = s.digest AS same_as_serial
FROM agg_grp_digest p JOIN agg_grp_serial s USING (agg) ORDER BY p.agg;
RESET enable_hashagg;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- A partial state crosses nodes in its text form, as Citus sends it: each
-- part's state by an aggregate without a final function, printed and read
-- back, combined, finished: the bytes of the whole table's aggregate.
CREATE AGGREGATE agg_part_sized(integer, bigint, float8) (
	SFUNC = bf_agg_sized_step, STYPE = bloomfilter);
CREATE AGGREGATE agg_part_auto(integer) (SFUNC = bf_agg_auto_step, STYPE = bytea);
CREATE AGGREGATE agg_part_window(integer, timestamptz, interval, bigint) (
	SFUNC = bf_window_agg_step, STYPE = bloomwindow);
CREATE TABLE agg_text_parts AS
SELECT g % 3 AS part, agg_part_sized(g, 20000, 0.01)::text AS sized,
	   agg_part_auto(g)::text AS auto, agg_part_window(g, at, '1 hour', 20000)::text AS win
FROM agg_grp GROUP BY g % 3;
SELECT md5(bf_agg_sized_finish(bf_union_agg_step(bf_union_agg_step(bf_union_agg_step(NULL,
		   (SELECT sized FROM agg_text_parts WHERE part = 0)::bloomfilter),
		   (SELECT sized FROM agg_text_parts WHERE part = 1)::bloomfilter),
		   (SELECT sized FROM agg_text_parts WHERE part = 2)::bloomfilter))::bytea) =
	   (SELECT md5(bf_agg(g, 20000, 0.01)::bytea) FROM agg_grp) AS sized_via_text,
	   md5(bf_agg_auto_finish(bf_agg_auto_merge(bf_agg_auto_merge(bf_agg_auto_merge(NULL,
		   (SELECT auto FROM agg_text_parts WHERE part = 0)::bytea),
		   (SELECT auto FROM agg_text_parts WHERE part = 1)::bytea),
		   (SELECT auto FROM agg_text_parts WHERE part = 2)::bytea))::bytea) =
	   (SELECT md5(bf_agg(g)::bytea) FROM agg_grp) AS auto_via_text,
	   md5(bf_window_agg_finish(bf_window_agg_merge(bf_window_agg_merge(bf_window_agg_merge(NULL,
		   (SELECT win FROM agg_text_parts WHERE part = 0)::bloomwindow),
		   (SELECT win FROM agg_text_parts WHERE part = 1)::bloomwindow),
		   (SELECT win FROM agg_text_parts WHERE part = 2)::bloomwindow))::bytea) =
	   (SELECT md5(bf_window_agg(g, at, '1 hour', 20000)::bytea) FROM agg_grp) AS window_via_text;
-- a state read back is an ordinary value: every function takes it
SELECT bf_contains(sized::bloomfilter, 3) AS has_3, bf_contains(sized::bloomfilter, 4) AS has_4,
	   (bf_info(sized::bloomfilter)).capacity
FROM agg_text_parts WHERE part = 0;

-- The support functions called from SQL: a flat state is copied, never
-- modified; outside an aggregate they return a new value.
SELECT bf_contains(s, 7) AS state_has_7, bf_contains(f, 7) AS input_has_7,
	   bf_contains(t, 7) AS step_has_7, (bf_info(f)).inserted AS input_inserted
FROM (SELECT f, bf_union_agg_step(f, bf_add(bf_create(1000, 0.01), 7)) AS s,
			 bf_agg_sized_step(f, 7, 1000, 0.01) AS t
	  FROM (SELECT bf_create(1000, 0.01) AS f OFFSET 0) a) b;
SELECT md5(h) = md5(h0) AS auto_input_unchanged,
	   bf_contains(bf_agg_auto_finish(m), 7) AS merged_has_7,
	   bf_contains(bf_agg_auto_finish(h), 7) AS input_has_7
FROM (SELECT h, h0, bf_agg_auto_merge(h, bf_agg_auto_step(NULL, 7)) AS m
	  FROM (SELECT bf_agg_auto_step(NULL, 1)::bytea AS h, bf_agg_auto_step(NULL, 1)::bytea AS h0
			OFFSET 0) a) b;
-- an aggregate of users' own whose initial state is a flat filter: each
-- group starts from the same unmodified filter
CREATE AGGREGATE agg_union_from(bloomfilter) (
	SFUNC = bf_union_agg_step, STYPE = bloomfilter, FINALFUNC = bf_union_agg_finish,
	INITCOND = 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=5 nbits=1024 seed=0 capacity=100 fpr=0.01 inserted=0 bits=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
SELECT grp, bf_contains(u, grp) AS own, bf_contains(u, 1 - grp) AS other
FROM (SELECT grp, agg_union_from(bf_add(bf_create(100, 0.01), grp)) AS u
	  FROM (VALUES (0), (1), (0), (1)) v(grp) GROUP BY grp) s
ORDER BY grp;

-- malformed flat states are refused with the error of a bad value
-- (data_corrupted), by transition, combine and final functions alike
CREATE FUNCTION agg_raw_filter(bytea, int) RETURNS bloomfilter
	LANGUAGE internal IMMUTABLE STRICT AS 'bytea_substr_no_len';
CREATE FUNCTION agg_raw_window(bytea, int) RETURNS bloomwindow
	LANGUAGE internal IMMUTABLE STRICT AS 'bytea_substr_no_len';
SELECT test_err($$SELECT bf_agg_sized_step(agg_raw_filter('\x424c4d46', 1), 1, 100, 0.01)$$);
SELECT test_err($$SELECT bf_union_agg_step(agg_raw_filter('\x00', 1), bf_create(100))$$);
SELECT test_err($$SELECT bf_union_agg_step(bf_create(100), agg_raw_filter('\x00', 1))$$);
SELECT test_err($$SELECT bf_intersect_agg_step(NULL, agg_raw_filter(substring(bf_create(100)::bytea FROM 1 FOR 100), 1))$$);
SELECT test_err($$SELECT bf_agg_sized_finish(agg_raw_filter('\x0102', 1))$$);
SELECT test_err($$SELECT bf_agg_auto_step('\x00'::bytea, 1)$$);
SELECT test_err($$SELECT bf_agg_auto_merge(NULL, '\x4246414800'::bytea)$$);
SELECT test_err($$SELECT bf_agg_auto_merge(bf_agg_auto_step(NULL, 1), overlay(bf_agg_auto_step(NULL, 1) placing '\x01' from 7))$$);
SELECT test_err($$SELECT bf_agg_auto_finish(overlay(bf_agg_auto_merge(bf_agg_auto_step(NULL, 1), bf_agg_auto_step(NULL, 2)) placing '\x0000000000000000' from 41))$$);
SELECT test_err($$SELECT bf_agg_auto_merge(NULL, overlay(bf_agg_auto_step(NULL, 1) placing '\x0000000000000000' from 17))$$);
SELECT test_err($$SELECT bf_window_agg_step(agg_raw_window('\x00', 1), 1, now(), '1 day', 10)$$);
SELECT test_err($$SELECT bf_window_agg_merge(NULL, agg_raw_window('\x0102030405', 1))$$);
SELECT test_err($$SELECT bf_window_agg_finish(agg_raw_window(substring(bf_window_create('1 day', 10)::bytea FROM 1 FOR 80), 1))$$);
-- mismatched states: the errors of mismatched rows
SELECT test_err($$SELECT bf_union_agg_step(bf_create(100), bf_create(200))$$);
SELECT test_err($$SELECT bf_agg_auto_merge(bf_agg_auto_step(NULL, 1, 0.01), bf_agg_auto_step(NULL, 1, 0.02))$$);
SELECT test_err($$SELECT bf_agg_auto_merge(bf_agg_auto_step(NULL, 1), bf_agg_auto_step(NULL, 'x'::text))$$);
SELECT test_err($$SELECT bf_agg_sized_step(bf_create(100), 1, 200, 0.01)$$);
SELECT test_err($$SELECT bf_agg_sized_step(bf_create_growing(100), 1, 100, 0.01)$$);

-- The support functions of the 1.0 and 1.1 catalogs (`internal` states),
-- which a database keeps until ALTER EXTENSION UPDATE: the library still
-- has them, and they give the bytes of 1.2's, in parallel plans too.
CREATE FUNCTION agg_v1_filter_serialize(internal) RETURNS bytea
	AS '$libdir/bloomfilter', 'bf_agg_filter_serialize' LANGUAGE C STRICT;
CREATE FUNCTION agg_v1_filter_deserialize(bytea, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_filter_deserialize' LANGUAGE C STRICT;
CREATE FUNCTION agg_v1_sized_trans(internal, anyelement, bigint, float8) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_sized_trans' LANGUAGE C;
CREATE FUNCTION agg_v1_sized_final(internal) RETURNS bloomfilter
	AS '$libdir/bloomfilter', 'bf_agg_sized_final' LANGUAGE C;
CREATE FUNCTION agg_v1_sized_combine(internal, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_sized_combine' LANGUAGE C;
CREATE FUNCTION agg_v1_auto_trans(internal, anyelement) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_auto_trans' LANGUAGE C;
CREATE FUNCTION agg_v1_auto_final(internal) RETURNS bloomfilter
	AS '$libdir/bloomfilter', 'bf_agg_auto_final' LANGUAGE C;
CREATE FUNCTION agg_v1_auto_combine(internal, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_auto_combine' LANGUAGE C;
CREATE FUNCTION agg_v1_auto_serialize(internal) RETURNS bytea
	AS '$libdir/bloomfilter', 'bf_agg_auto_serialize' LANGUAGE C STRICT;
CREATE FUNCTION agg_v1_auto_deserialize(bytea, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_agg_auto_deserialize' LANGUAGE C STRICT;
CREATE FUNCTION agg_v1_union_trans(internal, bloomfilter) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_union_agg_trans' LANGUAGE C;
CREATE FUNCTION agg_v1_union_final(internal) RETURNS bloomfilter
	AS '$libdir/bloomfilter', 'bf_union_agg_final' LANGUAGE C;
CREATE FUNCTION agg_v1_union_combine(internal, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_union_agg_combine' LANGUAGE C;
CREATE FUNCTION agg_v1_intersect_trans(internal, bloomfilter) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_intersect_agg_trans' LANGUAGE C;
CREATE FUNCTION agg_v1_intersect_final(internal) RETURNS bloomfilter
	AS '$libdir/bloomfilter', 'bf_intersect_agg_final' LANGUAGE C;
CREATE FUNCTION agg_v1_intersect_combine(internal, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_intersect_agg_combine' LANGUAGE C;
CREATE FUNCTION agg_v1_window_trans(internal, anyelement, timestamptz, interval, bigint)
	RETURNS internal AS '$libdir/bloomfilter', 'bf_window_agg_trans' LANGUAGE C;
CREATE FUNCTION agg_v1_window_final(internal) RETURNS bloomwindow
	AS '$libdir/bloomfilter', 'bf_window_agg_final' LANGUAGE C;
CREATE FUNCTION agg_v1_window_combine(internal, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_window_agg_combine' LANGUAGE C;
CREATE FUNCTION agg_v1_window_serialize(internal) RETURNS bytea
	AS '$libdir/bloomfilter', 'bf_window_agg_serialize' LANGUAGE C STRICT;
CREATE FUNCTION agg_v1_window_deserialize(bytea, internal) RETURNS internal
	AS '$libdir/bloomfilter', 'bf_window_agg_deserialize' LANGUAGE C STRICT;
CREATE AGGREGATE agg_v1_sized(anyelement, bigint, float8) (
	SFUNC = agg_v1_sized_trans, STYPE = internal, FINALFUNC = agg_v1_sized_final,
	COMBINEFUNC = agg_v1_sized_combine, SERIALFUNC = agg_v1_filter_serialize,
	DESERIALFUNC = agg_v1_filter_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE agg_v1_auto(anyelement) (
	SFUNC = agg_v1_auto_trans, STYPE = internal, FINALFUNC = agg_v1_auto_final,
	COMBINEFUNC = agg_v1_auto_combine, SERIALFUNC = agg_v1_auto_serialize,
	DESERIALFUNC = agg_v1_auto_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE agg_v1_union(bloomfilter) (
	SFUNC = agg_v1_union_trans, STYPE = internal, FINALFUNC = agg_v1_union_final,
	COMBINEFUNC = agg_v1_union_combine, SERIALFUNC = agg_v1_filter_serialize,
	DESERIALFUNC = agg_v1_filter_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE agg_v1_intersect(bloomfilter) (
	SFUNC = agg_v1_intersect_trans, STYPE = internal, FINALFUNC = agg_v1_intersect_final,
	COMBINEFUNC = agg_v1_intersect_combine, SERIALFUNC = agg_v1_filter_serialize,
	DESERIALFUNC = agg_v1_filter_deserialize, PARALLEL = SAFE);
CREATE AGGREGATE agg_v1_window(anyelement, timestamptz, interval, bigint) (
	SFUNC = agg_v1_window_trans, STYPE = internal, FINALFUNC = agg_v1_window_final,
	COMBINEFUNC = agg_v1_window_combine, SERIALFUNC = agg_v1_window_serialize,
	DESERIALFUNC = agg_v1_window_deserialize, PARALLEL = SAFE);
CREATE VIEW agg_v1_digest AS
SELECT 'sized' AS agg, md5(string_agg(md5(f::bytea), ',' ORDER BY grp)) AS digest
FROM (SELECT grp, agg_v1_sized(g, 200, 0.01) AS f FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'auto', md5(string_agg(md5(f::bytea), ',' ORDER BY grp))
FROM (SELECT grp, agg_v1_auto(g) AS f FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'window', md5(string_agg(md5(w::bytea), ',' ORDER BY grp))
FROM (SELECT grp, agg_v1_window(g, at, '1 hour', 200) AS w FROM agg_grp GROUP BY grp) s
UNION ALL
SELECT 'union', md5(string_agg(md5(f::bytea), ',' ORDER BY grp))
FROM (SELECT grp, agg_v1_union(f) AS f FROM agg_grp_f GROUP BY grp) s
UNION ALL
SELECT 'intersect', md5(string_agg(md5(f::bytea), ',' ORDER BY grp))
FROM (SELECT grp, agg_v1_intersect(f) AS f FROM agg_grp_f GROUP BY grp) s;
SELECT v.agg, v.digest = s.digest AS serial_same_as_1_2
FROM agg_v1_digest v JOIN agg_grp_serial s USING (agg) ORDER BY v.agg;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT grp, agg_v1_sized(g, 200, 0.01), agg_v1_auto(g), agg_v1_window(g, at, '1 hour', 200)
FROM agg_grp GROUP BY grp;
SELECT v.agg, v.digest = s.digest AS parallel_same_as_1_2
FROM agg_v1_digest v JOIN agg_grp_serial s USING (agg) ORDER BY v.agg;
-- zero rows: the sized form's empty filter
SELECT agg_v1_sized(g, 1000, 0.01) = bf_create(1000, 0.01) AS v1_zero_rows,
	   agg_v1_auto(g) IS NULL AS v1_auto_zero_rows
FROM agg_grp WHERE g < 0;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
DROP VIEW agg_v1_digest;
DROP AGGREGATE agg_v1_sized(anyelement, bigint, float8), agg_v1_auto(anyelement),
	agg_v1_union(bloomfilter), agg_v1_intersect(bloomfilter),
	agg_v1_window(anyelement, timestamptz, interval, bigint);
DROP FUNCTION agg_v1_filter_serialize(internal), agg_v1_filter_deserialize(bytea, internal),
	agg_v1_sized_trans(internal, anyelement, bigint, float8), agg_v1_sized_final(internal),
	agg_v1_sized_combine(internal, internal), agg_v1_auto_trans(internal, anyelement),
	agg_v1_auto_final(internal), agg_v1_auto_combine(internal, internal),
	agg_v1_auto_serialize(internal), agg_v1_auto_deserialize(bytea, internal),
	agg_v1_union_trans(internal, bloomfilter), agg_v1_union_final(internal),
	agg_v1_union_combine(internal, internal), agg_v1_intersect_trans(internal, bloomfilter),
	agg_v1_intersect_final(internal), agg_v1_intersect_combine(internal, internal),
	agg_v1_window_trans(internal, anyelement, timestamptz, interval, bigint),
	agg_v1_window_final(internal), agg_v1_window_combine(internal, internal),
	agg_v1_window_serialize(internal), agg_v1_window_deserialize(bytea, internal);

DROP AGGREGATE agg_part_sized(integer, bigint, float8);
DROP AGGREGATE agg_part_auto(integer);
DROP AGGREGATE agg_part_window(integer, timestamptz, interval, bigint);
DROP AGGREGATE agg_union_from(bloomfilter);
DROP FUNCTION agg_raw_filter(bytea, int);
DROP FUNCTION agg_raw_window(bytea, int);
DROP VIEW agg_grp_digest;
DROP TABLE agg_grp, agg_grp_f, agg_grp_serial, agg_text_parts;
DROP FUNCTION test_err(text);
DROP FUNCTION test_errcode(text);
