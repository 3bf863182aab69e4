--
-- The bloomfilter index access method: build, writes, scans and plans,
-- bf_index_filter, operator classes, options, REINDEX, partitions and
-- privileges.
--
SET client_min_messages = warning;

-- build on an existing table, then INSERT, COPY and UPDATE afterwards
CREATE TABLE users (id int PRIMARY KEY, email text NOT NULL);
INSERT INTO users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 1000) g;
CREATE INDEX users_email_bf ON users USING bloomfilter (email) WITH (capacity = 10000, fpr = 0.01);
SELECT bf_index_contains('users_email_bf'::regclass, 'user1@example.com') AS built,
       bf_index_contains('users_email_bf'::regclass, 'user1000@example.com') AS built_last,
       bf_index_contains('users_email_bf'::regclass, 'nobody@example.com') AS absent;
-- no false negatives among the 1000 rows
SELECT count(*) FILTER (WHERE bf_index_contains('users_email_bf'::regclass, email)) AS present FROM users;
INSERT INTO users VALUES (1001, 'new@example.com');
COPY users FROM stdin;
1002	copied@example.com
1003	copied2@example.com
\.
UPDATE users SET email = 'changed@example.com' WHERE id = 5;
SELECT bf_index_contains('users_email_bf'::regclass, 'new@example.com') AS inserted,
       bf_index_contains('users_email_bf'::regclass, 'copied2@example.com'::varchar) AS copied,
       bf_index_contains('users_email_bf'::regclass, 'changed@example.com') AS updated,
       bf_index_contains('users_email_bf'::regclass, 'user5@example.com') AS old_value_stays;
-- the keys a transaction inserts are written to the index at commit (or
-- when the backend's buffer fills): a rolled-back insert usually leaves
-- no bits (and when it does, the filter answers "probably", never a false "no")
BEGIN;
INSERT INTO users VALUES (1004, 'rolledback@example.com');
ROLLBACK;
SELECT bf_index_contains('users_email_bf'::regclass, 'rolledback@example.com') AS rolled_back_unwritten;
-- the planner uses the index only to rule out a key the filter says is absent
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE email = 'nobody@example.com';
SELECT count(*) AS nobody FROM users WHERE email = 'nobody@example.com';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE email = 'new@example.com';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE email <> 'nobody@example.com';
-- (the plan's lines alike on every version: 19 adds the scan it replaces)
\i test/sql/include/explain.sql
SELECT test_explain('SELECT * FROM users WHERE email = NULL::text', '(Result|One-Time Filter)');
DROP FUNCTION test_explain(text, text, boolean);
-- a plan cached while the key was absent stays correct once it is inserted
-- (the scan then hands every table page to the recheck)
PREPARE later AS SELECT count(*) FROM users WHERE email = 'later@example.com';
EXECUTE later;
INSERT INTO users VALUES (1005, 'later@example.com');
EXPLAIN (COSTS OFF) EXECUTE later;
EXECUTE later;
DEALLOCATE later;
DELETE FROM users WHERE id = 1005;

-- parameters and estimates
SELECT capacity, fpr, nbits, nhashes, estimated_cardinality BETWEEN 950 AND 1060 AS card_ok,
       fill > 0 AND fill < 0.2 AS fill_ok, estimated_fpr < 0.01 AS fpr_ok, saturated
FROM bf_index_info('users_email_bf');
-- bf_index_size: the index's pages (a table of Citus's: its shards')
SELECT bf_index_size('users_email_bf') = pg_relation_size('users_email_bf') AS same_size,
       bf_index_size('users_email_bf') / 8192 AS pages;
SELECT nbits, nhashes FROM bf_estimate(10000, 0.01);

-- bf_index_filter: the same filter as a value; bf_contains agrees with bf_index_contains on every key
SELECT split_part(bf_index_filter('users_email_bf')::text, ' inserted=', 1) AS header;
SELECT count(*) AS disagreements
FROM (SELECT 'user' || g || '@example.com' AS k FROM generate_series(1, 20000) g) s
WHERE bf_index_contains('users_email_bf'::regclass, k) IS DISTINCT FROM
      bf_contains((SELECT bf_index_filter('users_email_bf')), k);
-- ... and it has the bits bf_add_all sets for the same keys (the header's
-- "inserted" is an estimate from the bits, the index counts no inserts)
SELECT substring(bf_index_filter('users_email_bf')::bytea FROM 65) =
       (SELECT substring(bf_add_all(bf_create(10000, 0.01), array_agg(e))::bytea FROM 65)
        FROM (SELECT email FROM users UNION ALL SELECT 'user5@example.com'
              UNION ALL SELECT 'later@example.com') s(e)) AS same_bits,
       substring(bf_index_filter('users_email_bf')::text FROM ' inserted=(\d+) ')::int
         BETWEEN 950 AND 1060 AS inserted_estimate_ok;

-- integers: an int8 index answers int2/int4 probes; NULL keys are skipped
CREATE TABLE nums (a int8, b int4, f float8, n numeric);
INSERT INTO nums SELECT g, g, g / 2.0, g * 1.5 FROM generate_series(1, 500) g;
INSERT INTO nums VALUES (NULL, NULL, NULL, NULL);
CREATE INDEX nums_a ON nums USING bloomfilter (a);
CREATE INDEX nums_f ON nums USING bloomfilter (f);
CREATE INDEX nums_n ON nums USING bloomfilter (n);
SELECT bf_index_contains('nums_a', 42) AS int4_probe, bf_index_contains('nums_a', 42::int2) AS int2_probe,
       bf_index_contains('nums_a', 42::int8) AS int8_probe, bf_index_contains('nums_a', 100000) AS absent,
       bf_index_contains('nums_a', NULL::int) AS null_probe;
SELECT bf_index_contains('nums_f', 1.5::float4) AS float4_probe, bf_index_contains('nums_n', 3.00) AS numeric_scale;
SELECT bf_index_contains('nums_a', 'x'::text);
SELECT bf_index_contains('nums_a', 4.2::float8);

-- composite keys hash like bf_add(f, ROW(...))
CREATE TABLE user_attrs (user_id int, attr text, since date);
INSERT INTO user_attrs SELECT g, 'attr' || (g % 7), date '2020-01-01' + g FROM generate_series(1, 3000) g;
INSERT INTO user_attrs VALUES (42, 'sports', NULL), (43, NULL, NULL);
CREATE INDEX ON user_attrs USING bloomfilter (user_id, attr);
SELECT bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW(42, 'sports')) AS pair,
       bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW(42::int8, 'sports'::varchar)) AS pair_other_types,
       bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW(43, NULL::text)) AS null_field,
       bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW(42, 'chess')) AS other_pair;
SELECT count(*) AS disagreements
FROM (SELECT g AS u, 'attr' || (g % 9) AS a FROM generate_series(1, 400) g) s
WHERE bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW(u, a)) IS DISTINCT FROM
      bf_contains((SELECT bf_index_filter('user_attrs_user_id_attr_idx')), ROW(u, a));
SELECT substring(bf_index_filter('user_attrs_user_id_attr_idx')::bytea FROM 65) =
       (SELECT substring(bf_add_all(bf_create(c.capacity, 0.01), array_agg(ROW(user_id, attr)))::bytea FROM 65)
        FROM user_attrs, bf_index_info('user_attrs_user_id_attr_idx') c GROUP BY c.capacity) AS same_as_bf_add_all;
-- scans need every key column: (42, 'chess') is absent; user_id alone is not enough
EXPLAIN (COSTS OFF) SELECT * FROM user_attrs WHERE user_id = 42::int8 AND attr = 'chess';
SELECT count(*) FROM user_attrs WHERE user_id = 42::int8 AND attr = 'chess';
EXPLAIN (COSTS OFF) SELECT * FROM user_attrs WHERE user_id = 42;
SELECT bf_index_contains('user_attrs_user_id_attr_idx'::regclass, 42);
SELECT bf_index_contains('user_attrs_user_id_attr_idx'::regclass, ROW('42', 'sports', 1));
CREATE INDEX ON user_attrs USING bloomfilter (user_id, attr, since, user_id, attr, since, user_id, attr, since);
-- expression index
CREATE INDEX user_attrs_lower ON user_attrs USING bloomfilter (lower(attr));
SELECT bf_index_contains('user_attrs_lower', 'attr3') AS expr_key;

-- other families: uuid, bytea, bool, date/time, bpchar, enum
CREATE TYPE bfi_mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE misc (u uuid, b bytea, t bool, d date, ts timestamp, tz timestamptz, c char(5), m bfi_mood, v varchar(10));
INSERT INTO misc VALUES ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0102', true, '2024-02-29',
                         '2024-02-29 12:00', '2024-02-29 12:00+00', 'ab', 'happy', 'vc');
CREATE INDEX misc_u ON misc USING bloomfilter (u);
CREATE INDEX misc_b ON misc USING bloomfilter (b);
CREATE INDEX misc_t ON misc USING bloomfilter (t);
CREATE INDEX misc_d ON misc USING bloomfilter (d);
CREATE INDEX misc_ts ON misc USING bloomfilter (ts);
CREATE INDEX misc_tz ON misc USING bloomfilter (tz);
CREATE INDEX misc_c ON misc USING bloomfilter (c);
CREATE INDEX misc_m ON misc USING bloomfilter (m);
CREATE INDEX misc_v ON misc USING bloomfilter (v);
SELECT bf_index_contains('misc_u', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid) AS u,
       bf_index_contains('misc_b', '\x0102'::bytea) AS b,
       bf_index_contains('misc_t', true) AS t, bf_index_contains('misc_t', false) AS f,
       bf_index_contains('misc_d', '2024-02-29'::date) AS d,
       bf_index_contains('misc_ts', '2024-02-29 12:00'::timestamp) AS ts,
       bf_index_contains('misc_tz', '2024-02-29 13:00+01'::timestamptz) AS tz,
       bf_index_contains('misc_c', 'ab') AS bpchar_as_text,
       bf_index_contains('misc_m', 'happy'::bfi_mood) AS enum,
       bf_index_contains('misc_v', 'vc') AS varchar_as_text;
-- types without a portable hash have no operator class
CREATE TABLE noidx (p point, i inet);
CREATE INDEX ON noidx USING bloomfilter (i);
-- a nondeterministic collation cannot be hashed (ICU collations need a
-- UTF8 database, and the test cluster's may be SQL_ASCII: use one of our own)
\set regress_db :DBNAME
CREATE DATABASE bf_index_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER libc;
\c bf_index_icu
CREATE EXTENSION bloomfilter;
CREATE COLLATION bf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE ci (s text COLLATE bf_ci);
CREATE INDEX ON ci USING bloomfilter (s);
\c :regress_db
DROP DATABASE bf_index_icu;
SET client_min_messages = warning;

-- the operator classes pass amvalidate
SELECT opcname, amvalidate(c.oid) FROM pg_opclass c JOIN pg_am a ON a.oid = c.opcmethod
WHERE a.amname = 'bloomfilter' ORDER BY opcname;

-- bad reloptions
CREATE INDEX ON users USING bloomfilter (email) WITH (fpr = 0);
CREATE INDEX ON users USING bloomfilter (email) WITH (fpr = 1);
CREATE INDEX ON users USING bloomfilter (email) WITH (fpr = 1.5);
CREATE INDEX ON users USING bloomfilter (email) WITH (capacity = -1);
CREATE INDEX ON users USING bloomfilter (email) WITH (capacity = 2000000000, fpr = 0.000001);
CREATE INDEX ON users USING bloomfilter (email) WITH (colour = 'red');
ALTER INDEX users_email_bf SET (fpr = 2);
-- the default capacity: twice the table's estimated rows, at least 100000
CREATE INDEX users_default ON users USING bloomfilter (email);
SELECT capacity, fpr FROM bf_index_info('users_default');
CREATE TABLE bfi_big AS SELECT g AS id FROM generate_series(1, 60000) g;
ANALYZE bfi_big;
CREATE INDEX big_bf ON bfi_big USING bloomfilter (id);
SELECT capacity FROM bf_index_info('big_bf');

-- statistics of an empty and of a saturated filter
CREATE TABLE sat (g int);
CREATE INDEX sat_bf ON sat USING bloomfilter (g) WITH (capacity = 1, fpr = 0.5);
SELECT estimated_cardinality, fill, estimated_fpr, saturated, nbits FROM bf_index_info('sat_bf');
INSERT INTO sat SELECT generate_series(1, 20000);
SELECT estimated_cardinality, fill, estimated_fpr, saturated, nbits FROM bf_index_info('sat_bf');
SELECT bf_index_contains('sat_bf', -1) AS saturated_says_probably;
SELECT substring(bf_index_filter('sat_bf')::text FROM ' inserted=(\d+) ') AS inserted_when_saturated;
DROP TABLE sat;

-- not a bloomfilter index
SELECT bf_index_contains('users_pkey', 1);
SELECT bf_index_contains('users', 1);
SELECT bf_index_filter('users_pkey');

-- REINDEX drops deleted keys and applies new options; CONCURRENTLY
DELETE FROM users WHERE id > 1000;
ALTER INDEX users_email_bf SET (capacity = 2000);
REINDEX INDEX users_email_bf;
SELECT bf_index_contains('users_email_bf'::regclass, 'new@example.com') AS deleted_gone,
       bf_index_contains('users_email_bf'::regclass, 'user1@example.com') AS kept;
SELECT capacity FROM bf_index_info('users_email_bf');
REINDEX INDEX CONCURRENTLY users_email_bf;
SELECT bf_index_contains('users_email_bf'::regclass, 'user2@example.com') AS after_concurrently;
DROP INDEX users_email_bf;
CREATE INDEX CONCURRENTLY users_email_bf ON users USING bloomfilter (email) WITH (capacity = 5000);
SELECT count(*) FILTER (WHERE bf_index_contains('users_email_bf'::regclass, email)) = count(*) AS all_present
FROM users;
SELECT indisvalid FROM pg_index WHERE indexrelid = 'users_email_bf'::regclass;
VACUUM users;
VACUUM FULL users;
SELECT bf_index_contains('users_email_bf'::regclass, 'user3@example.com') AS after_vacuum_full;
TRUNCATE users;
SELECT bf_index_contains('users_email_bf'::regclass, 'user3@example.com') AS after_truncate;

-- UNLOGGED tables
CREATE UNLOGGED TABLE ul (k text);
INSERT INTO ul SELECT 'k' || g FROM generate_series(1, 100) g;
CREATE INDEX ul_bf ON ul USING bloomfilter (k) WITH (capacity = 1000);
INSERT INTO ul VALUES ('later');
SELECT bf_index_contains('ul_bf', 'k50') AS built, bf_index_contains('ul_bf', 'later') AS inserted,
       bf_index_contains('ul_bf', 'nope') AS absent;
SELECT relpersistence FROM pg_class WHERE oid = 'ul_bf'::regclass;

-- partitioned tables: each partition has its own filter
CREATE TABLE events (id int, kind text) PARTITION BY RANGE (id);
CREATE TABLE events_1 PARTITION OF events FOR VALUES FROM (0) TO (1000);
CREATE TABLE events_2 PARTITION OF events FOR VALUES FROM (1000) TO (2000);
INSERT INTO events SELECT g, 'k' || g FROM generate_series(0, 1999) g;
CREATE INDEX events_kind_bf ON events USING bloomfilter (kind);
SELECT c.relname, i.capacity FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid,
       bf_index_info(c.oid) i WHERE h.inhparent = 'events_kind_bf'::regclass ORDER BY 1;
CREATE TABLE events_3 PARTITION OF events FOR VALUES FROM (2000) TO (3000);
INSERT INTO events VALUES (2500, 'third');
SELECT bf_index_contains('events_kind_bf', 'k5') AS in_first, bf_index_contains('events_kind_bf', 'k1500') AS in_second,
       bf_index_contains('events_kind_bf', 'third') AS in_new_partition, bf_index_contains('events_kind_bf', 'none') AS absent;
SELECT bf_index_contains('events_1_kind_idx', 'k1500') AS other_partition;
SELECT bf_index_filter('events_kind_bf');

-- privileges: SELECT on the indexed columns is required
CREATE ROLE bf_reader;
CREATE TABLE secret (id int, email text, note text);
INSERT INTO secret VALUES (1, 'a@b.c', 'x');
CREATE INDEX secret_email ON secret USING bloomfilter (email);
CREATE INDEX secret_note ON secret USING bloomfilter (note) WHERE id > 0;
GRANT SELECT (email) ON secret TO bf_reader;
SET ROLE bf_reader;
SELECT bf_index_contains('secret_email', 'a@b.c') AS column_grant;
SELECT bf_index_filter('secret_email') IS NOT NULL AS column_grant_filter;
SELECT bf_index_contains('secret_note', 'x');
SELECT bf_index_info('secret_note');
RESET ROLE;
GRANT SELECT (note) ON secret TO bf_reader;
SET ROLE bf_reader;
-- the predicate's column id is needed too
SELECT bf_index_contains('secret_note', 'x');
RESET ROLE;
GRANT SELECT ON secret TO bf_reader;
SET ROLE bf_reader;
SELECT bf_index_contains('secret_note', 'x') AS table_grant;
RESET ROLE;
DROP TABLE secret;
DROP ROLE bf_reader;

DROP TABLE users, nums, user_attrs, misc, noidx, bfi_big, ul, events;
DROP TYPE bfi_mood;
