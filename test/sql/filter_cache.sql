-- The per-backend cache of detoasted filters: a filter read from a table
-- once per statement, or a tracked filter, is detoasted once, and never
-- answers from bits its value no longer has.
SET client_min_messages = warning;

CREATE TABLE fc_filters (id int PRIMARY KEY, f bloomfilter);
-- stored out of line and uncompressed, as a large filter is
ALTER TABLE fc_filters ALTER COLUMN f SET STORAGE EXTERNAL;
-- no autovacuum: pruning would make entries stale and change the counts
ALTER TABLE fc_filters SET (autovacuum_enabled = off, toast.autovacuum_enabled = off);
INSERT INTO fc_filters
	SELECT 1, bf_add_all(bf_create(100000, 0.01), ARRAY(SELECT generate_series(1, 1000)));
INSERT INTO fc_filters
	SELECT 2, bf_add_all(bf_create(100000, 0.01), ARRAY(SELECT generate_series(1001, 2000)));
SELECT id, pg_column_size(f) > 100000 AS out_of_line FROM fc_filters ORDER BY id;

CREATE FUNCTION fc_stats() RETURNS TABLE (entries bigint, hits bigint, misses bigint,
	stale bigint, evictions bigint, holds_bytes bool)
	LANGUAGE sql AS
	'SELECT entries, hits, misses, stale, evictions, bytes > 0 FROM bf_filter_cache_stats()';

SELECT bf_filter_cache_reset();
SELECT * FROM fc_stats();

-- one statement per key, as an application asks: one miss, then hits
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 5);
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 5000);
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 999);
SELECT * FROM fc_stats();

-- a prepared statement shares the entry
PREPARE probe(int, int) AS SELECT bf_contains((SELECT f FROM fc_filters WHERE id = $1), $2);
EXECUTE probe(1, 10);
EXECUTE probe(1, 1500);
EXECUTE probe(2, 1500);
SELECT * FROM fc_stats();

-- within one query the call site keeps the filter: no lookup per row
SELECT count(*) FILTER (WHERE bf_contains(f, g)) AS found
FROM fc_filters, generate_series(1, 3000) g WHERE id = 2;
SELECT hits, misses FROM fc_stats();

-- a changed value has a new TOAST pointer: the new bits answer
UPDATE fc_filters SET f = bf_add(f, 5000) WHERE id = 1;
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 5000);
SELECT * FROM fc_stats();

-- a rolled-back change leaves the old value, which still answers
BEGIN;
UPDATE fc_filters SET f = bf_add(f, 6000) WHERE id = 1;
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 6000);
ROLLBACK;
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 6000),
	   bf_contains((SELECT f FROM fc_filters WHERE id = 1), 5000);

-- VACUUM FULL rewrites the TOAST table keeping value OIDs: the pointers
-- are the same, the first chunks moved, so every entry is found stale,
-- read again, and answers the same
SELECT bf_filter_cache_reset();
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 2), 1500);
VACUUM FULL fc_filters;
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 2), 1500),
	   bf_contains((SELECT f FROM fc_filters WHERE id = 2), 1);
SELECT * FROM fc_stats();

-- bounded: room for one filter evicts the least recently used
SELECT bf_filter_cache_reset();
SET bloomfilter.filter_cache_size = '200kB';
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 1);
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 2), 1001);
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 2);
SELECT * FROM fc_stats();
-- lowering the setting frees at once
SET bloomfilter.filter_cache_size = '100kB';
SELECT entries, holds_bytes FROM fc_stats();
-- 0 turns it off: every statement reads the value, nothing is kept
SELECT bf_filter_cache_reset();
SET bloomfilter.filter_cache_size = 0;
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 1);
SELECT bf_contains((SELECT f FROM fc_filters WHERE id = 1), 1);
SELECT entries, misses, hits FROM fc_stats();
RESET bloomfilter.filter_cache_size;

-- bigint keys against a call site whose stored filter changes row by row:
-- the call site's fast path for bigints must follow every change (each
-- filter holds only its own keys, so any crossed answer shows)
CREATE TEMP TABLE fc_big (id int, f bloomfilter);
ALTER TABLE fc_big ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO fc_big
	SELECT i, bf_add_all(bf_create(20000, 1e-9), ARRAY(SELECT (i * 100000 + g)::int8 FROM generate_series(1, 1000) g))
	FROM generate_series(1, 2) i;
INSERT INTO fc_big SELECT 3, bf_add_all(bf_create(20000, 1e-9), ARRAY(SELECT i::int4 FROM generate_series(1, 1000) i));
INSERT INTO fc_big SELECT 4, bf_add_all(bf_create(20000, 1e-9), ARRAY(SELECT i::text FROM generate_series(1, 1000) i));
INSERT INTO fc_big SELECT 5, bf_add_all(bf_create_growing(100, 1e-6), ARRAY(SELECT (500000 + g)::int8 FROM generate_series(1, 1000) g));
SELECT pg_column_size(f) > 2000 AS toasted FROM fc_big ORDER BY id;
-- (the filters as the inner side of a join: they alternate key by key)
SELECT b.id, count(*) FILTER (WHERE bf_contains(b.f, k.k)) AS found
FROM (SELECT (i * 100000 + g)::int8 AS k FROM generate_series(1, 2) i, generate_series(1, 1000) g) k
	 CROSS JOIN LATERAL (SELECT * FROM fc_big WHERE id < 4 AND k.k > 0) b
GROUP BY b.id ORDER BY b.id;
-- a growing filter's bigint keys: never the shortcut, which reads one
-- plain bit array
SELECT count(*) FILTER (WHERE bf_contains(f, g::int8)) AS found
FROM fc_big, generate_series(500001, 501000) g WHERE id = 5;
SELECT bf_contains(f, 1::int8) FROM fc_big ORDER BY id;

-- the same for small filters stored in line (the shortcut for the plain
-- datum of last time): filters alternating at one call site, and a
-- correlated subquery whose values may come at the same address
CREATE TEMP TABLE fc_small (id int, f bloomfilter);
ALTER TABLE fc_small ALTER COLUMN f SET STORAGE PLAIN;
INSERT INTO fc_small
	SELECT i, bf_add_all(bf_create(100, 1e-9, i), ARRAY(SELECT (i * 1000 + g)::int8 FROM generate_series(1, 100) g))
	FROM generate_series(1, 3) i;
INSERT INTO fc_small SELECT 4, bf_add_all(bf_create(100, 1e-9, 1), ARRAY(SELECT (4000 + g)::int4 FROM generate_series(1, 100) g));
INSERT INTO fc_small SELECT 5, bf_add_all(bf_create(100, 1e-9, 1), ARRAY(SELECT (5000 + g)::text FROM generate_series(1, 100) g));
SELECT id, pg_column_size(f) < 2000 AND pg_column_size(f) = octet_length(f::bytea) + 4 AS in_line_plain
FROM fc_small ORDER BY id;
SELECT b.id, count(*) FILTER (WHERE bf_contains(b.f, k.k)) AS found
FROM (SELECT (i * 1000 + g)::int8 AS k FROM generate_series(1, 3) i, generate_series(1, 100) g) k
	 CROSS JOIN LATERAL (SELECT * FROM fc_small WHERE id <= 3 AND k.k > 0) b
GROUP BY b.id ORDER BY b.id;
SELECT k.i, count(*) FILTER (WHERE bf_contains((SELECT f FROM fc_small s WHERE s.id = k.i), k.k)) AS found
FROM (SELECT i, (((i + g) % 3 + 1) * 1000 + g)::int8 AS k FROM generate_series(1, 100) g, generate_series(1, 4) i) k
GROUP BY k.i ORDER BY k.i;

-- a temporary table's pages change without WAL: its values are not cached
SELECT bf_filter_cache_reset();
CREATE TEMP TABLE fc_temp (f bloomfilter);
ALTER TABLE fc_temp ALTER COLUMN f SET STORAGE EXTERNAL;
INSERT INTO fc_temp SELECT f FROM fc_filters WHERE id = 2;
SELECT bf_contains((SELECT f FROM fc_temp), 1500);
SELECT bf_contains((SELECT f FROM fc_temp), 1500);
SELECT entries, hits, misses FROM fc_stats();

-- a plain tracked filter (method 'trigger') is kept in chunks: a lookup
-- reads the key's chunk, never the cache
SELECT bf_filter_cache_reset();
CREATE TABLE fc_chunked (k int);
INSERT INTO fc_chunked SELECT generate_series(1, 1000);
SELECT bf_track('fc_chunked', 'k', 100000, 0.01, method => 'trigger');
SELECT bf_might_contain('fc_chunked', 'k', 5), bf_might_contain('fc_chunked', 'k', 5000);
SELECT entries, hits, misses FROM fc_stats();
SELECT bf_untrack('fc_chunked', 'k');
DROP TABLE fc_chunked;
-- a growing one (no capacity) is kept in chunks too: a lookup reads the
-- key's chunk of each layer, and the cache holds nothing of it
SELECT bf_filter_cache_reset();
CREATE TABLE fc_tracked (k int);
ALTER TABLE fc_tracked SET (autovacuum_enabled = off);
INSERT INTO fc_tracked SELECT generate_series(1, 50000);
SELECT bf_track('fc_tracked', 'k', NULL, 0.01, method => 'trigger');
SELECT (bf_info(bf_tracked_filter('fc_tracked', 'k'))).layout;
SELECT bf_filter_cache_reset();
SELECT bf_might_contain('fc_tracked', 'k', 5);
SELECT bf_might_contain('fc_tracked', 'k', 100001);
SELECT bf_might_contain('fc_tracked', 'k', 999);
SELECT * FROM fc_stats();
-- a write changes a chunk: the new key is found at once
INSERT INTO fc_tracked VALUES (100001);
SELECT bf_might_contain('fc_tracked', 'k', 100001);
SELECT entries, hits, misses FROM fc_stats();
-- a cache too small to keep anything: every lookup still answers, and a
-- call site that asks many keys reads the whole filter once for its
-- statement
SET bloomfilter.filter_cache_size = '100kB';
SELECT bf_filter_cache_reset();
SELECT bf_might_contain('fc_tracked', 'k', 1), bf_might_contain('fc_tracked', 'k', 100001),
	   bf_might_contain('fc_tracked', 'k', 0);
SELECT count(*) FILTER (WHERE bf_might_contain('fc_tracked', 'k', g)) AS found
FROM generate_series(1, 1000) g;
SELECT entries, misses, holds_bytes FROM fc_stats();
RESET bloomfilter.filter_cache_size;
SELECT bf_untrack('fc_tracked', 'k');
DROP TABLE fc_tracked;

RESET client_min_messages;
DROP TABLE fc_filters, fc_temp, fc_big;
DROP FUNCTION fc_stats();
