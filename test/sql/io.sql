--
-- Text form, binary send/recv (COPY BINARY) and the bytea casts.
--
CREATE TABLE io (id int, f bloomfilter);
INSERT INTO io VALUES
	(1, bf_create(100)),
	(2, bf_add_all(bf_create(100, 0.001, -5), ARRAY['a', 'b', 'c'])),
	(3, bf_add_all(bf_create_sized(2048, 9, 9223372036854775807), ARRAY[1.5, 2.25])),
	(4, bf_add(bf_create(10), ROW(1, 'x'::text))),
	(5, bf_add(bf_create(10), '192.168.0.1'::inet)),
	(6, bf_add_all(bf_create(50, 0.3), ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 20) g)));
-- one filter of every other family, and non-portable types whose names
-- have spaces, brackets, quotes or a parenthesis
CREATE TYPE io_colour AS ENUM ('red', 'green');
CREATE SCHEMA "odd schema";
CREATE TYPE "odd schema"."span (days)" AS RANGE (subtype = int4);
INSERT INTO io VALUES
	(7, bf_add_all(bf_create(100), ARRAY[1, 2, 3])),
	(8, bf_add(bf_create(100), 2.5::float8)),
	(9, bf_add(bf_create(100), '\xdeadbeef'::bytea)),
	(10, bf_add(bf_create(100), true)),
	(11, bf_add(bf_create(100), '2024-02-29'::date)),
	(12, bf_add(bf_create(100), '2024-02-29 12:00'::timestamp)),
	(13, bf_add(bf_create(100), '2024-02-29 12:00+00'::timestamptz)),
	(14, bf_add(bf_create(100), 'green'::io_colour)),
	(15, bf_add(bf_create(100), '10:30'::time)),
	(16, bf_add(bf_create(100), '10:30+02'::timetz)),
	(17, bf_add(bf_create(100), ARRAY[1.5, 2.5]::float8[])),
	(18, bf_add(bf_create(100), ARRAY['a', 'b']::varchar[])),
	(19, bf_add(bf_create(100), '[1,5)'::"odd schema"."span (days)")),
	(20, bf_add(bf_create(100), '1 day'::interval)),
	(21, bf_add(bf_create(100), ROW(1, '10:30'::time))),
	(22, bf_add(bf_create(100), '"a"=>"1"'::text::name)),
	(23, bf_add(bf_create(100), '(1,2)'::tid)),
	(24, bf_add(bf_create(100), '{"a": 1}'::jsonb)),
	(25, bf_add(bf_create(100), ARRAY['[1,5)']::"odd schema"."span (days)"[])),
	(26, bf_add(bf_create(100), '0/16B3748'::pg_lsn)),
	(30, bf_add(bf_create(100), ARRAY['ab']::char(2)[]));
-- extreme header fields, made through the bytea cast: a subnormal fpr, a
-- negative-zero fpr, the largest inserted count, seed and capacity
INSERT INTO io SELECT 27, overlay(bf_add(bf_create(10), 1)::bytea PLACING '\x0100000000000000' FROM 49)::bloomfilter;
INSERT INTO io SELECT 28, overlay(bf_create_sized(512, 3)::bytea PLACING '\x0000000000000080' FROM 49)::bloomfilter;
INSERT INTO io SELECT 29, overlay(bf_add(bf_create(10, 0.3, -9223372036854775808), 1)::bytea
	PLACING '\xffffffffffffff7fffffffffffffff7f' FROM 33)::bloomfilter;

-- the text form reads back to the same bytes
SELECT id, f::text::bloomfilter::bytea = f::bytea AS text_roundtrip FROM io ORDER BY id;
-- parameters first, readable at a glance
SELECT id, regexp_replace(f::text, ' bits=.*', '') FROM io ORDER BY id;
SELECT length(f::text) - length(regexp_replace(f::text, ' bits=.*', '')) - 6 AS b64_chars,
       (pg_column_size(f) - 4 - 64 + 2) / 3 * 4 AS padded_base64_of_bits FROM io WHERE id = 1;
-- a fixed text value (checked by hand: one block with nothing set)
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=0 inserted=0 bits=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=='::bloomfilter::bytea
     = bf_create_sized(512, 3)::bytea AS fixed_text;

-- bytea casts carry the portable bytes: magic BLMF, version 1 little-endian
SELECT encode(substring(f::bytea FROM 1 FOR 8), 'hex') AS head FROM io WHERE id = 1;
SELECT id, f::bytea::bloomfilter::bytea = f::bytea AS bytea_roundtrip FROM io ORDER BY id;
SELECT length(f::bytea) = pg_column_size(f) - 4 AS payload_only FROM io WHERE id = 2;

-- binary COPY uses send/recv
COPY io TO '/tmp/bloomfilter_regress_io.bin' WITH (FORMAT binary);
CREATE TABLE io2 (LIKE io);
COPY io2 FROM '/tmp/bloomfilter_regress_io.bin' WITH (FORMAT binary);
SELECT a.id, a.f::bytea = b.f::bytea AS binary_roundtrip FROM io a JOIN io2 b USING (id) ORDER BY a.id;
-- text COPY, as pg_dump does
COPY io TO '/tmp/bloomfilter_regress_io.txt';
TRUNCATE io2;
COPY io2 FROM '/tmp/bloomfilter_regress_io.txt';
SELECT a.id, a.f::bytea = b.f::bytea AS text_copy_roundtrip FROM io a JOIN io2 b USING (id) ORDER BY a.id;
-- and the answers survive
SELECT bf_contains_all(f, ARRAY['a', 'b', 'c']) FROM io2 WHERE id = 2;
SELECT bf_contains(f, ROW(1, 'x'::text)) FROM io2 WHERE id = 4;
SELECT bf_contains(f, '192.168.0.1'::inet) FROM io2 WHERE id = 5;
SELECT id, CASE id
	WHEN 7 THEN bf_contains_all(f, ARRAY[1, 2, 3])
	WHEN 8 THEN bf_contains(f, 2.5::float4)
	WHEN 9 THEN bf_contains(f, '\xdeadbeef'::bytea)
	WHEN 10 THEN bf_contains(f, true)
	WHEN 11 THEN bf_contains(f, '2024-02-29'::date)
	WHEN 12 THEN bf_contains(f, '2024-02-29 12:00'::timestamp)
	WHEN 13 THEN bf_contains(f, '2024-02-29 14:00+02'::timestamptz)
	WHEN 14 THEN bf_contains(f, 'green'::io_colour)
	WHEN 15 THEN bf_contains(f, '10:30'::time)
	WHEN 16 THEN bf_contains(f, '10:30+02'::timetz)
	WHEN 17 THEN bf_contains(f, ARRAY[1.5, 2.5]::float8[])
	WHEN 18 THEN bf_contains(f, ARRAY['a', 'b']::varchar[])
	WHEN 19 THEN bf_contains(f, '[1,5)'::"odd schema"."span (days)")
	WHEN 20 THEN bf_contains(f, '24 hours'::interval)
	WHEN 21 THEN bf_contains(f, ROW(1, '10:30'::time))
	WHEN 22 THEN bf_contains(f, '"a"=>"1"'::text)
	WHEN 23 THEN bf_contains(f, '(1,2)'::tid)
	WHEN 24 THEN bf_contains(f, '{"a":1}'::jsonb)
	WHEN 25 THEN bf_contains(f, ARRAY['[1,5)']::"odd schema"."span (days)"[])
	WHEN 26 THEN bf_contains(f, '0/16B3748'::pg_lsn)
	WHEN 27 THEN bf_contains(f, 1)
	WHEN 30 THEN bf_contains(f, ARRAY['ab   ']::bpchar[])
	END AS found
FROM io2 WHERE id BETWEEN 7 AND 30 AND id NOT IN (28, 29) ORDER BY id;
-- the extreme fields are printed so, and bf_info shows them as they are
SELECT id, (bf_info(f)).inserted, (bf_info(f)).seed, (bf_info(f)).capacity,
	(bf_info(f)).target_fpr, (bf_info(f)).target_fpr::text AS fpr_text
	FROM io2 WHERE id IN (27, 28, 29) ORDER BY id;
-- the fpr is printed as float8 output prints it
SELECT f::text ~ (' fpr=' || (bf_info(f)).target_fpr::text || ' ') AS same_as_float8_out
	FROM io2 WHERE id IN (2, 6, 27);
