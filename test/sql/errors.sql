--
-- Every kind of bad input gets a clear error, never a crash.
--
\set VERBOSITY default
-- constructor arguments
SELECT bf_create(0);
SELECT bf_create(-5);
SELECT bf_create(100, 0);
SELECT bf_create(100, 1);
SELECT bf_create(100, -0.1);
SELECT bf_create(100, 'NaN');
SELECT bf_create(100, 'Infinity');
SELECT bf_create(9223372036854775807);
SELECT bf_create(100000000000, 0.01);
SELECT bf_create(100, 1e-300);
SELECT * FROM bf_estimate(0);
SELECT bf_create_sized(0, 3);
SELECT bf_create_sized(-1, 3);
SELECT bf_create_sized(1024, 0);
SELECT bf_create_sized(1024, 65);
SELECT bf_create_sized(4294967297, 3);
-- the largest allowed size is accepted by bf_estimate-style arithmetic (not allocated here)
SELECT nbits <= 4294967296 AS fits FROM bf_estimate(400000000, 0.01);

-- family mismatches
SELECT bf_contains(bf_add(bf_create(10), 'abc'::text), 42);
SELECT bf_add(bf_add(bf_create(10), 42), 'abc'::text);
SELECT bf_contains(bf_add(bf_create(10), 42), 42.0);
SELECT bf_contains(bf_add(bf_create(10), 42), 42.0::float8);
SELECT bf_contains(bf_add(bf_create(10), ROW(1, 'a'::text)), ROW('1'::text, 'a'::text));
SELECT bf_contains(bf_add(bf_create(10), '10.0.0.1'::inet), '10.0.0.1'::cidr);
SELECT bf_contains_all(bf_add(bf_create(10), 1), ARRAY['x']);
-- types that cannot be hashed
SELECT bf_add(bf_create(10), point(1, 2));
SELECT bf_hash(point(1, 2));
SELECT bf_add(bf_create(10), ROW(1, ROW(2, 3)));
SELECT bf_add(bf_create(10), ROW(1, 2, 3, 4, 5, 6, 7, 8, 9));
-- nondeterministic collations (ICU collations need a UTF8 database, and
-- the test cluster's may be SQL_ASCII: use one of our own)
\set regress_db :DBNAME
CREATE DATABASE bf_errors_icu TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' LOCALE_PROVIDER libc;
\c bf_errors_icu
CREATE EXTENSION bloomfilter;
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT bf_add(bf_create(10), 'abc'::text COLLATE ci);
SELECT bf_contains(bf_add(bf_create(10), 'abc'::text), 'abc' COLLATE ci);
SELECT bf_hash('abc'::text COLLATE ci);
SELECT bf_hash('abc'::text COLLATE "C") = bf_hash('abc'::text) AS deterministic_ok;
\c :regress_db
DROP DATABASE bf_errors_icu;

-- malformed text input
SELECT 'garbage'::bloomfilter;
SELECT 'bloomfilter:2 layout=blocked'::bloomfilter;
SELECT 'bloomfilter:1 layout=classic hash=xxh3_64'::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=md5'::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=colour nhashes=3'::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=0 nbits=512 seed=0 capacity=0 fpr=0 inserted=0 bits=='::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=500 seed=0 capacity=0 fpr=0 inserted=0 bits=='::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=x capacity=0 fpr=0 inserted=0 bits=='::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=1.5 inserted=0 bits=='::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=0 inserted=0 bits=AAAA'::bloomfilter;
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=0 inserted=0 bits=!AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=='::bloomfilter;
-- no family but elements counted
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=0 inserted=7 bits=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=='::bloomfilter;
-- trailing junk
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=512 seed=0 capacity=0 fpr=0 inserted=0 bits=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA== x=1'::bloomfilter;
-- one text per filter: what the output function would not print is refused
CREATE TABLE canon AS SELECT f::text AS t FROM (VALUES
	(bf_add(bf_create(10), 1)),
	(bf_add(bf_create(10), ROW(1, 'x'::text))),
	(bf_add(bf_create(10), '10.0.0.1'::inet))) v(f);
SELECT count(*) AS canonical_forms_read_back FROM canon WHERE t::bloomfilter::text = t;
SELECT replace(t, 'inserted=1 ', 'inserted=01 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'nhashes=2 ', 'nhashes=02 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'nbits=512 ', 'nbits=0512 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'seed=0 ', 'seed=-0 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'seed=0 ', 'seed=+0 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'capacity=10 ', 'capacity=010 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=0.010 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=1e-02 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=.01 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=0.0100000000000000002 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=1e-400 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=0x1p-7 ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'fpr=0.01 ', 'fpr=nan ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'inserted=1 ', 'inserted=9223372036854775808 ')::bloomfilter FROM canon WHERE t ~ 'integer';
-- the largest count is valid, and adding to it keeps it there (no overflow
-- into an invalid value)
SELECT (bf_info(bf_add(f, 987654))).inserted AS add_at_max,
	   (bf_info(bf_add_all(f, ARRAY[987654, 987655]))).inserted AS add_all_at_max,
	   bf_contains(bf_add(f, 987654), 987654) AS added
FROM (SELECT replace(t, 'inserted=1 ', 'inserted=9223372036854775807 ')::bloomfilter AS f
	  FROM canon WHERE t ~ 'family=integer ') s;
SELECT replace(t, 'family=integer ', 'family=integer() ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'family=integer ', 'family=Integer ')::bloomfilter FROM canon WHERE t ~ 'integer';
SELECT replace(t, 'record(integer,text)', 'record(integer,text,)')::bloomfilter FROM canon WHERE t ~ 'record';
SELECT replace(t, 'record(integer,text)', 'record(,integer,text)')::bloomfilter FROM canon WHERE t ~ 'record';
SELECT replace(t, 'record(integer,text)', 'record()')::bloomfilter FROM canon WHERE t ~ 'record';
SELECT replace(t, 'record(integer,text)', 'record(integer, text)')::bloomfilter FROM canon WHERE t ~ 'record';
SELECT replace(t, 'record(integer,text)', 'record(integer,record)')::bloomfilter FROM canon WHERE t ~ 'record';
-- family=other names a type that exists, as printed, and that a filter can hold
SELECT replace(t, 'pg_catalog.inet', 'pg_catalog.no_such_type')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'no_schema.inet')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'pg_catalog.int4')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'character varying(10)')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'pg_catalog.anyelement')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'inet')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'PG_CATALOG.INET')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'pg_catalog.inet[][]')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', 'pg_catalog.select')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'pg_catalog.inet', '"pg_catalog"."inet"')::bloomfilter::text = t AS quoted_parts_accepted FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'other(pg_catalog.inet)', 'other()')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'other(pg_catalog.inet)', 'other(pg_catalog.inet')::bloomfilter FROM canon WHERE t ~ 'inet';
SELECT replace(t, 'other(pg_catalog.inet)', 'other("pg_catalog.inet)')::bloomfilter FROM canon WHERE t ~ 'inet';
CREATE DOMAIN inet_domain AS inet;
SELECT replace(t, 'pg_catalog.inet', 'public.inet_domain')::bloomfilter FROM canon WHERE t ~ 'inet';
-- a size far past the limit is refused before anything is allocated
SELECT 'bloomfilter:1 layout=blocked hash=xxh3_64 family=none nhashes=3 nbits=999999999999999488 seed=0 capacity=0 fpr=0 inserted=0 bits=AAAA'::bloomfilter;

-- corrupted binary input (bytea cast; COPY BINARY uses the same checks)
CREATE TABLE good AS SELECT bf_add(bf_create_sized(512, 3), 1)::bytea AS b;
SELECT ''::bytea::bloomfilter;
SELECT '\x424c4d46'::bytea::bloomfilter;
SELECT overlay(b PLACING '\x58' FROM 1)::bloomfilter FROM good;                 -- magic
SELECT overlay(b PLACING '\x02' FROM 5)::bloomfilter FROM good;                 -- version 2
SELECT overlay(b PLACING '\x02' FROM 7)::bloomfilter FROM good;                 -- layout
SELECT overlay(b PLACING '\x09' FROM 8)::bloomfilter FROM good;                 -- hash function
SELECT overlay(b PLACING '\x63' FROM 9)::bloomfilter FROM good;                 -- family
SELECT overlay(b PLACING '\x01' FROM 10)::bloomfilter FROM good;                -- flags vs family
SELECT overlay(b PLACING '\x0000' FROM 11)::bloomfilter FROM good;              -- nhashes 0
SELECT overlay(b PLACING '\x4100' FROM 11)::bloomfilter FROM good;              -- nhashes 65
SELECT overlay(b PLACING '\x05000000' FROM 13)::bloomfilter FROM good;          -- detail on a plain family
SELECT overlay(b PLACING '\x0000000000000000' FROM 25)::bloomfilter FROM good;  -- nblocks 0
SELECT overlay(b PLACING '\x0200000000000000' FROM 25)::bloomfilter FROM good;  -- nblocks vs length
SELECT overlay(b PLACING '\xffffffffffffffff' FROM 25)::bloomfilter FROM good;  -- nblocks huge
SELECT overlay(b PLACING '\xffffffffffffffff' FROM 41)::bloomfilter FROM good;  -- capacity negative
SELECT overlay(b PLACING '\x000000000000f87f' FROM 49)::bloomfilter FROM good;  -- fpr NaN
SELECT overlay(b PLACING '\x01' FROM 57)::bloomfilter FROM good;                -- reserved
SELECT substring(b FROM 1 FOR 100)::bloomfilter FROM good;                      -- bits too short
SELECT (b || '\x00'::bytea)::bloomfilter FROM good;                             -- bits too long
SELECT (b::bloomfilter)::bytea = b AS intact FROM good;
-- a non-portable filter naming a type OID that does not exist
SELECT overlay(bf_add(bf_create_sized(512, 3), '10.0.0.1'::inet)::bytea PLACING '\x00286bee' FROM 13)::bloomfilter;
-- or a type no non-portable filter can hold (int4, a domain): one rule for every input
SELECT overlay(bf_add(bf_create_sized(512, 3), '10.0.0.1'::inet)::bytea PLACING '\x17000000' FROM 13)::bloomfilter;
CREATE FUNCTION le32(int) RETURNS bytea LANGUAGE sql AS
	$$ SELECT set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
		0, $1 & 255), 1, ($1 >> 8) & 255), 2, ($1 >> 16) & 255), 3, ($1 >> 24) & 255) $$;
\set VERBOSITY terse
SELECT overlay(bf_add(bf_create_sized(512, 3), '10.0.0.1'::inet)::bytea
	PLACING le32('inet_domain'::regtype::oid::int) FROM 13)::bloomfilter;
\set VERBOSITY default
SELECT overlay(bf_add(bf_create_sized(512, 3), '10.0.0.1'::inet)::bytea
	PLACING le32('inet'::regtype::oid::int) FROM 13)::bloomfilter = bf_add(bf_create_sized(512, 3), '10.0.0.1'::inet) AS le32_ok;
-- an inserted count of 2^63 or more (bf_info would show it negative)
SELECT overlay(b PLACING '\x0000000000000080' FROM 33)::bloomfilter FROM good;
SELECT overlay(b PLACING '\xffffffffffffffff' FROM 33)::bloomfilter FROM good;
SELECT (bf_info(overlay(b PLACING '\xffffffffffffff7f' FROM 33)::bloomfilter)).inserted FROM good;
-- a subnormal fpr is a valid double in [0, 1): accepted, and its text reads back
SELECT f::text::bloomfilter = f AS subnormal_roundtrip
	FROM (SELECT overlay(b PLACING '\x0100000000000000' FROM 49)::bloomfilter AS f FROM good) x;

-- a filter of a non-portable type that was dropped: clear errors, and no
-- text form that could not be read back (pg_dump fails rather than write one)
CREATE TYPE doomed AS RANGE (subtype = int8);
CREATE TABLE doomed_filters AS SELECT bf_add(bf_create(10), '[1,2)'::doomed) AS f;
DROP TYPE doomed;
\set VERBOSITY terse
SELECT f FROM doomed_filters;
SELECT bf_contains(f, 1) FROM doomed_filters;
SELECT bf_contains(f, '10.0.0.1'::inet) FROM doomed_filters;
SELECT bf_add(f, 1) FROM doomed_filters;
\set VERBOSITY default
SELECT (bf_info(f)).element_type ~ '^other\(type with OID [0-9]+\)$' AS info_names_the_oid,
	(bf_info(f)).portable FROM doomed_filters;
SELECT length(f::bytea) AS bytes_still_readable FROM doomed_filters;
