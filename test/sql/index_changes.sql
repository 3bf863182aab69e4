--
-- bf_index_changes: patches that take a copy of bf_index_filter(index)
-- from its state at a WAL position to its state now.  A client's apply
-- (docs/FORMAT.md, "Change sets") is in test/sql/include/change_client.sql,
-- and every patched copy is compared with a fresh bf_index_filter.
--
SET client_min_messages = warning;
\i test/sql/include/change_client.sql
-- a client: its copy, its position, what the last call sent
CREATE TABLE bfc_client (copy bytea, lsn pg_lsn, full_refresh bool, runs int, sent int, last bytea);
CREATE FUNCTION bfc_refresh(idx regclass) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT * INTO c FROM bf_index_changes(idx, (SELECT lsn FROM bfc_client));
	UPDATE bfc_client SET copy = bfc_apply(copy, c.patch), lsn = c.next_lsn,
		full_refresh = c.full_refresh, runs = bfc_le(c.patch, 16, 4),
		sent = length(c.patch), last = c.patch;
END $$;
CREATE FUNCTION bfc_check(idx regclass) RETURNS TABLE (full_refresh bool, runs int, sent int, same bool)
LANGUAGE sql AS $$
	SELECT full_refresh, runs, sent, copy = bf_index_filter(idx)::bytea FROM bfc_client $$;
RESET client_min_messages;

-- 4 000 keys, capacity 200 000 at 1 %: 3 875 blocks of 64 bytes, 127 a page:
-- 31 data pages; the value: 64 header bytes, then page p from 64 + p * 8 128
CREATE TABLE bfc (k text);
INSERT INTO bfc SELECT 'k' || g FROM generate_series(1, 4000) g;
CREATE INDEX bfc_k ON bfc USING bloomfilter (k) WITH (capacity = 200000, fpr = 0.01);
SELECT nbits, (nbits / 512 + 126) / 127 AS pages FROM bf_index_info('bfc_k');

-- first call (since NULL): the whole value, one run
INSERT INTO bfc_client VALUES (NULL, NULL);
SELECT bfc_refresh('bfc_k');
SELECT * FROM bfc_check('bfc_k');
SELECT * FROM bfc_runs((SELECT patch FROM bf_index_changes('bfc_k')));
-- nothing changed: no runs, not even the header
SELECT bfc_refresh('bfc_k');
SELECT * FROM bfc_check('bfc_k');
-- one key: its page and the header (the header's "inserted" follows the bits)
INSERT INTO bfc VALUES ('new1');
SELECT bfc_refresh('bfc_k');
SELECT * FROM bfc_check('bfc_k');
SELECT * FROM bfc_runs((SELECT last FROM bfc_client));
-- a few keys in one transaction (buffered, written page by page at commit)
INSERT INTO bfc SELECT 'batch' || g FROM generate_series(1, 5) g;
SELECT bfc_refresh('bfc_k');
SELECT * FROM bfc_check('bfc_k');
SELECT * FROM bfc_runs((SELECT last FROM bfc_client));
-- keys inserted by this transaction are in the patch (this backend's
-- buffered keys are written before the pages are read)
BEGIN;
INSERT INTO bfc VALUES ('in-xact');
SELECT bfc_refresh('bfc_k');
SELECT full_refresh, same FROM bfc_check('bfc_k');
SELECT bf_contains(bfc_client.copy::bloomfilter, 'in-xact'::text) FROM bfc_client;
COMMIT;
-- since in the future of this server's WAL: the whole value
SELECT full_refresh, bfc_le(patch, 16, 4)::int AS runs FROM bf_index_changes('bfc_k', 'FFFFFFFF/0');
-- an older position sends at least what a newer one does
SELECT a.full_refresh, length(a.patch) >= length(b.patch) AS superset
FROM bf_index_changes('bfc_k', '0/1') a, bf_index_changes('bfc_k', (SELECT lsn FROM bfc_client)) b;

-- REINDEX (a new build): the whole value, even with the same size
SELECT bfc_refresh('bfc_k');
REINDEX INDEX bfc_k;
SELECT bfc_refresh('bfc_k');
SELECT * FROM bfc_check('bfc_k');
-- TRUNCATE: an empty filter, in full
TRUNCATE bfc;
SELECT bfc_refresh('bfc_k');
SELECT c.full_refresh, c.runs, c.same, bf_contains(copy::bloomfilter, 'k1'::text) AS has_k1
FROM bfc_check('bfc_k') c, bfc_client;
INSERT INTO bfc VALUES ('after');
SELECT bfc_refresh('bfc_k');
SELECT full_refresh, same FROM bfc_check('bfc_k');

-- an unlogged index: pages change without new LSNs, so always in full
CREATE UNLOGGED TABLE bfc_u (k int);
INSERT INTO bfc_u SELECT generate_series(1, 100);
CREATE INDEX bfc_u_k ON bfc_u USING bloomfilter (k) WITH (capacity = 1000);
UPDATE bfc_client SET copy = NULL, lsn = NULL;
SELECT bfc_refresh('bfc_u_k');
INSERT INTO bfc_u VALUES (1000);
SELECT bfc_refresh('bfc_u_k');
SELECT * FROM bfc_check('bfc_u_k');
SELECT full_refresh FROM bf_index_changes('bfc_u_k', (SELECT lsn FROM bfc_client));

-- a NULL index: no row; not a bloomfilter index: an error
SELECT count(*) FROM bf_index_changes(NULL);
CREATE INDEX bfc_bt ON bfc (k);
SELECT * FROM bf_index_changes('bfc_bt');

-- rights: those of bf_index_filter (SELECT on the indexed column; the
-- filter holds the keys of every row, whatever row-level security hides)
CREATE ROLE bfc_nobody;
SET ROLE bfc_nobody;
SELECT next_lsn IS NOT NULL FROM bf_index_changes('bfc_k');
RESET ROLE;
GRANT SELECT (k) ON bfc TO bfc_nobody;
SET ROLE bfc_nobody;
SELECT full_refresh FROM bf_index_changes('bfc_k');
RESET ROLE;
DROP TABLE bfc, bfc_u, bfc_client;
DROP ROLE bfc_nobody;
DROP FUNCTION bfc_check(regclass), bfc_refresh(regclass), bfc_runs(bytea),
	bfc_apply(bytea, bytea), bfc_le(bytea, int, int);
