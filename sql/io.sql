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
