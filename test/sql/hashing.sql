--
-- Typed hashing: golden vectors (XXH3-64 of the canonical bytes of
-- docs/FORMAT.md section 3, checked independently with python3-xxhash by
-- test/reference_check.py) and equality across the types of a family.
--

-- integers: 8-byte little-endian int64, whatever the width
SELECT bf_hash(42::int2) AS i2, bf_hash(42::int4) AS i4, bf_hash(42::int8) AS i8;
SELECT bf_hash(0::int8), bf_hash(-1::int8), bf_hash(9223372036854775807::int8), bf_hash((-9223372036854775808)::int8);
-- seeds
SELECT bf_hash(42, 1) AS seed1, bf_hash(42, -1) AS seed_minus1, bf_hash(42, 4611686018427387911) AS seed_big;
-- floats: float4 widened to float8; -0 = 0; one NaN
SELECT bf_hash(1.5::float4) = bf_hash(1.5::float8) AS widened,
       bf_hash('-0'::float8) = bf_hash(0::float8) AS negzero,
       bf_hash('NaN'::float4) = bf_hash('NaN'::float8) AS nan;
SELECT bf_hash(1.5::float8), bf_hash('Infinity'::float8), bf_hash('NaN'::float8);
-- 0.1::float4 is not 0.1::float8 in SQL either
SELECT (0.1::float4 = 0.1::float8) AS sql_equal, bf_hash(0.1::float4) = bf_hash(0.1::float8) AS hash_equal;
-- numeric: normalized decimal text
SELECT bf_hash(1::numeric) = bf_hash(1.0::numeric) AND bf_hash(1.0) = bf_hash(1.00) AS one,
       bf_hash(-2.50) = bf_hash('-2.5'::numeric) AS neg,
       bf_hash(0.000) = bf_hash(0::numeric) AS zero,
       bf_hash(100::numeric) <> bf_hash(1::numeric) AS hundred;
SELECT bf_hash(1.5::numeric), bf_hash('NaN'::numeric), bf_hash('Infinity'::numeric), bf_hash('-Infinity'::numeric);
-- text family: text, varchar, name, bpchar (trailing blanks ignored)
SELECT bf_hash('abc'::text) AS t, bf_hash('abc'::varchar) AS v, bf_hash('abc'::name) AS n, bf_hash('abc  '::char(6)) AS c;
SELECT bf_hash(''::text), bf_hash('héllo wörld'::text), bf_hash('abc '::text) <> bf_hash('abc'::text) AS text_keeps_blanks;
-- bytea, uuid, bool
SELECT bf_hash('\x00ff'::bytea), bf_hash('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid), bf_hash(true), bf_hash(false);
-- date/time: internal int64 since 2000-01-01
SELECT bf_hash('2000-01-01'::date) = bf_hash(0::int8) AS date_epoch_is_zero,
       bf_hash('2000-01-02'::date) = bf_hash(1::int8) AS date_one,
       bf_hash('2000-01-01 00:00:01'::timestamp) = bf_hash(1000000::int8) AS ts_one_second,
       bf_hash('2000-01-01 00:00:00+00'::timestamptz) = bf_hash(0::int8) AS tstz_epoch;
SELECT bf_hash('infinity'::date), bf_hash('infinity'::timestamp), bf_hash('2024-02-29 12:34:56.789'::timestamptz);
-- enums hash their label, not their OID
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
SELECT bf_hash('happy'::mood) = bf_hash('happy'::text) AS enum_is_label;
-- domains hash as their base type
CREATE DOMAIN posint AS int4 CHECK (VALUE > 0);
SELECT bf_hash(42::posint) = bf_hash(42::int8) AS domain_as_base;
-- records: (family, length, bytes) per field
SELECT bf_hash(ROW(1, 'a'::text)), bf_hash(ROW(1::int2, 'a'::varchar)) = bf_hash(ROW(1::int8, 'a'::text)) AS same_families,
       bf_hash(ROW(NULL::int, 'a'::text)) <> bf_hash(ROW(0, 'a'::text)) AS null_differs;
-- non-portable types use their extended hash function with the seed
SELECT bf_hash('10.0.0.1'::inet) = bf_hash('10.0.0.1'::inet) AS stable,
       bf_hash('10.0.0.1'::inet, 0) <> bf_hash('10.0.0.1'::inet, 1) AS seeded;
-- golden filter bytes: one block, k = 3, seed 0, values 1..3 as integers
SELECT encode(bf_add_all(bf_create_sized(512, 3), ARRAY[1, 2, 3])::bytea, 'hex');
SELECT encode(bf_add_all(bf_create_sized(1024, 7, 5), ARRAY['x', 'y'])::bytea, 'hex');
-- untyped literals inside ROW(...) are text
SELECT bf_hash(ROW(1, 'a')) = bf_hash(ROW(1, 'a'::text)) AS unknown_field_is_text;
