--
-- Constructors, bf_add / bf_contains and the operators.
--

-- sizing: bf_estimate agrees with what bf_create allocates
SELECT * FROM bf_estimate(1000);
SELECT * FROM bf_estimate(1000000, 0.01);
SELECT * FROM bf_estimate(1000000, 0.001);
SELECT e.bytes = pg_column_size(bf_create(1000000, 0.001)) AS estimate_matches
FROM bf_estimate(1000000, 0.001) e;
-- blocked filters need more bits than the classic -n ln p / ln^2 2 (9.59 bits per element at 1 %)
SELECT nbits::float8 / 1000000 > 9.59 AS more_than_classic FROM bf_estimate(1000000, 0.01);
-- explicit sizes round up to whole 512-bit blocks
SELECT pg_column_size(bf_create_sized(1, 1)) AS one_block, pg_column_size(bf_create_sized(513, 4)) AS two_blocks;
SELECT bf_create_sized(1000, 4, 7)::text;
SELECT bf_create(10)::text;

-- add and contains
CREATE TABLE f (id int PRIMARY KEY, f bloomfilter);
INSERT INTO f VALUES (1, bf_create(1000));
UPDATE f SET f = bf_add(f, 42) WHERE id = 1;
UPDATE f SET f = bf_add(f, 7::int8) WHERE id = 1;
SELECT bf_contains(f, 42) AS has42, bf_contains(f, 42::int2) AS has42_int2, bf_contains(f, 7) AS has7,
       bf_contains(f, 43) AS has43 FROM f;
-- NULLs: adding NULL keeps the filter, testing NULL gives NULL
UPDATE f SET f = bf_add(f, NULL::int) WHERE id = 1;
SELECT f IS NOT NULL AS kept, bf_contains(f, 42) AS still42, bf_contains(f, NULL::int) AS null_test FROM f;
SELECT bf_add(NULL::bloomfilter, 1) IS NULL AS null_filter_stays_null;
SELECT bf_add_all(bf_create(10), NULL::int[]) IS NOT NULL AS null_array_keeps;
-- the input value is never modified in place
WITH s AS (SELECT bf_create(100) AS e)
SELECT bf_contains(bf_add(e, 5), 5) AS added, e::text = bf_create(100)::text AS original_unchanged FROM s;
SELECT bf_contains(f, 99) AS before, bf_contains(bf_add(f, 99), 99) AS added, bf_contains(f, 99) AS after FROM f;

-- the inserted counter counts adds that changed a bit
SELECT (regexp_match(bf_add_all(bf_create(1000), ARRAY[1, 2, 3, 1, 2, 3])::text, 'inserted=(\d+)'))[1] AS inserted;

-- arrays
SELECT bf_contains_all(bf_add_all(bf_create(100), ARRAY[1, 2, NULL, 3]), ARRAY[1, 2, 3]) AS all_in,
       bf_contains_all(bf_add_all(bf_create(100), ARRAY[1, 2, 3]), ARRAY[1, 2, 1000]) AS not_all,
       bf_contains_any(bf_add_all(bf_create(100), ARRAY[1, 2, 3]), ARRAY[1000, 3]) AS any_in,
       bf_contains_any(bf_add_all(bf_create(100), ARRAY[1, 2, 3]), ARRAY[1000, 2000]) AS none_in;
-- NULL elements: as in = ALL / = ANY
SELECT bf_contains_all(bf_add(bf_create(10), 1), ARRAY[1, NULL]) AS all_with_null,
       bf_contains_all(bf_add(bf_create(10), 1), ARRAY[1000, NULL]) AS all_decided,
       bf_contains_any(bf_add(bf_create(10), 1), ARRAY[1000, NULL]) AS any_with_null,
       bf_contains_any(bf_add(bf_create(10), 1), ARRAY[1, NULL]) AS any_decided,
       bf_contains_all(bf_create(10), '{}'::int[]) AS all_empty, bf_contains_any(bf_create(10), '{}'::int[]) AS any_empty;
-- multi-dimensional arrays add every element
SELECT bf_contains_all(bf_add_all(bf_create(100), ARRAY[[1, 2], [3, 4]]), ARRAY[4, 1]) AS md;

-- an empty filter answers false to everything, of any type
SELECT bf_contains(bf_create(10), 1) AS e1, bf_contains(bf_create(10), 'x'::text) AS e2;

-- operators
SELECT bf_create(10) || 5 @> 5 AS op_add_contains, 5 <@ (bf_create(10) || 5) AS op_contained,
       6 <@ (bf_create(10) || 5) AS op_not;
SELECT (bf_create(10) || 'abc') @> 'abc' AS unknown_literal_is_text;
SELECT bf_contains(bf_create(10) || 'abc'::text, 'abc'::varchar) AS varchar_probe,
       bf_contains(bf_create(10) || 'abc'::text, 'abc'::name) AS name_probe;

-- clear keeps the parameters and the family, drops the bits
SELECT bf_contains(bf_clear(f), 42) AS cleared,
       regexp_replace(bf_clear(f)::text, ' bits=.*', '') AS params FROM f;

-- seeds change the bits, not the answers
SELECT bf_contains(bf_add(bf_create(100, 0.01, 12345), 'k'::text), 'k'::text) AS seeded,
       bf_add(bf_create(100, 0.01, 1), 1)::bytea <> bf_add(bf_create(100, 0.01, 2), 1)::bytea AS seeds_differ;

-- every family, member and non-member
SELECT bf_contains(bf_add(bf_create(10), 1.5::float4), 1.5::float8) AS float,
       bf_contains(bf_add(bf_create(10), 2.50), 2.5) AS numeric,
       bf_contains(bf_add(bf_create(10), 'ab  '::char(4)), 'ab'::text) AS bpchar,
       bf_contains(bf_add(bf_create(10), '\xdead'::bytea), '\xdead'::bytea) AS bytea,
       bf_contains(bf_add(bf_create(10), 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid),
                   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid) AS uuid,
       bf_contains(bf_add(bf_create(10), true), false) AS bool_false,
       bf_contains(bf_add(bf_create(10), '2024-01-01'::date), '2024-01-01'::date) AS date,
       bf_contains(bf_add(bf_create(10), now()::timestamp(0)), now()::timestamp(0)) AS ts;
SELECT bf_contains(bf_add(bf_create(10), 'happy'::mood), 'happy'::mood) AS enum_member,
       bf_contains(bf_add(bf_create(10), 'happy'::mood), 'sad'::mood) AS enum_other;
SELECT bf_contains(bf_add(bf_create(10), ROW(1, 'sports'::text)), ROW(1::int8, 'sports'::text)) AS rec,
       bf_contains(bf_add(bf_create(10), ROW(1, 'sports'::text)), ROW(2, 'sports'::text)) AS rec_other;
SELECT regexp_replace(bf_add(bf_create(10), ROW(1, 'x'::text))::text, ' nhashes.*', '') AS rec_family,
       regexp_replace(bf_add(bf_create(10), '10.0.0.1'::inet)::text, ' nhashes.*', '') AS other_family;
SELECT bf_contains(bf_add(bf_create(10), '10.0.0.1'::inet), '10.0.0.1'::inet) AS inet_member;

-- a filter kept in a table keeps answering after TOAST (120 kB, stored out of line)
CREATE TABLE big (id int, f bloomfilter);
INSERT INTO big SELECT 1, bf_add_all(bf_create(100000), ARRAY(SELECT generate_series(1, 50000)));
SELECT pg_column_size(f) > 50000 AS toasted_size FROM big;
SELECT count(*) AS members_found FROM generate_series(1, 50000) g WHERE bf_contains((SELECT f FROM big), g);
SELECT count(*) < 100 AS few_false_positives FROM generate_series(50001, 100000) g WHERE (SELECT f FROM big) @> g;
-- the same with two different stored filters alternating (the cache is keyed by the TOAST pointer)
INSERT INTO big SELECT 2, bf_add_all(bf_create(100000), ARRAY(SELECT generate_series(100001, 150000)));
SELECT b.id, count(*) FROM big b, generate_series(1, 150000, 1000) g WHERE bf_contains(b.f, g) GROUP BY b.id ORDER BY b.id;
-- untyped literals are text; other string types resolve to the same family
SELECT bf_contains(bf_create(10) || 'abc', 'abc') AS literal, bf_hash('abc') = bf_hash('abc'::varchar) AS varchar_hash,
       bf_contains(bf_add(bf_create(10), 'abc'), 'abc  '::char(5)) AS bpchar_probe,
       bf_contains(bf_create(10) || 'abc', NULL) AS null_literal;
