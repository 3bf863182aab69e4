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
