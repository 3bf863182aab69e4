--
-- bf_tracked_changes: patches that take a copy of bf_tracked_filter(tbl,
-- col) from its state at a position to its state now.  Every patched
-- copy is compared with a fresh bf_tracked_filter.  For the trigger
-- method the filter is kept in chunks of 128 bytes of bits, each row
-- naming the transaction that last wrote it, and a position is the xmin
-- of the snapshot a patch was made from.
--
SET client_min_messages = warning;
\i test/sql/include/change_client.sql
CREATE TABLE tcc_client (copy bytea, lsn pg_lsn, full_refresh bool, runs int, sent int, last bytea);
CREATE FUNCTION tcc_refresh(tbl regclass, col name) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT * INTO c FROM bf_tracked_changes(tbl, col, (SELECT lsn FROM tcc_client));
	UPDATE tcc_client SET copy = bfc_apply(copy, c.patch), lsn = c.next_lsn,
		full_refresh = c.full_refresh, runs = bfc_le(c.patch, 16, 4),
		sent = length(c.patch), last = c.patch;
END $$;
CREATE FUNCTION tcc_check(tbl regclass, col name)
RETURNS TABLE (full_refresh bool, runs int, sent int, same bool)
LANGUAGE sql AS $$
	SELECT full_refresh, runs, sent, copy = bf_tracked_filter(tbl, col)::bytea FROM tcc_client $$;
RESET client_min_messages;

-- capacity 100 000 at 1 %: 124 032 bytes of bits, so 969 chunks of 128 bytes
CREATE TABLE tcc (k bigint, note text);
INSERT INTO tcc SELECT g, 'n' FROM generate_series(1, 2000) g;
SELECT bf_track('tcc', 'k', 100000, 0.01, method => 'trigger');
SELECT length(bf_tracked_filter('tcc', 'k')::bytea) AS value_bytes;

-- first call (since NULL): the whole value, one run
INSERT INTO tcc_client VALUES (NULL, NULL);
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
-- nothing changed: no runs, not even the header
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
-- one key: the header and the chunk that holds its block
INSERT INTO tcc VALUES (100001, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
SELECT * FROM bfc_runs((SELECT last FROM tcc_client));
-- five keys in one statement, then two more statements before the next
-- refresh: every chunk any of them changed
INSERT INTO tcc SELECT g, 'n' FROM generate_series(200001, 200005) g;
INSERT INTO tcc VALUES (300001, 'n');
INSERT INTO tcc VALUES (300002, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
SELECT * FROM bfc_runs((SELECT last FROM tcc_client));
-- statements that change no bit do not write the filter: nothing to send
UPDATE tcc SET note = 'm' WHERE k < 10;
DELETE FROM tcc WHERE k = 5;
INSERT INTO tcc VALUES (7, 'again');
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
-- an older position (six transactions back: the writes of 300002 and
-- after) gets the chunks of the writes since, a newer one nothing
SELECT a.full_refresh, bfc_le(a.patch, 16, 4) >= 2 AS older_gets_runs,
	   bfc_le(b.patch, 16, 4)::int AS newer_runs
FROM bf_tracked_changes('tcc', 'k', (SELECT lsn FROM tcc_client) - 6) a,
	 bf_tracked_changes('tcc', 'k', (SELECT lsn FROM tcc_client)) b;
-- a key this transaction added is in the patch it reads
BEGIN;
INSERT INTO tcc VALUES (400001, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');
SELECT bf_contains(copy::bloomfilter, 400001::bigint) FROM tcc_client;
COMMIT;
-- a rolled-back write is not seen, and its chunk is never sent (the
-- chunk of 400001 is sent again: the position read inside that
-- transaction was below its id)
BEGIN;
INSERT INTO tcc VALUES (500001, 'n');
ROLLBACK;
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
-- positions the stamps cannot answer: in the future, before the value was
-- last replaced
SELECT full_refresh, bfc_le(patch, 16, 4)::int AS runs
FROM bf_tracked_changes('tcc', 'k', 'FFFFFFFF/0');
SELECT full_refresh FROM bf_tracked_changes('tcc', 'k', '0/0');

-- bf_rebuild replaces the value: the whole of it, then patches again
SELECT bf_rebuild('tcc', 'k');
SELECT tcc_refresh('tcc', 'k');
SELECT * FROM tcc_check('tcc', 'k');
INSERT INTO tcc VALUES (600001, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, runs, same FROM tcc_check('tcc', 'k');
-- rebuilt without a capacity it is a growing filter: a write that makes it
-- grow changes its length, so the next change set is the whole value;
-- then patches again
SELECT (bf_info(bf_tracked_filter('tcc', 'k'))).layout;
INSERT INTO tcc SELECT g, 'n' FROM generate_series(700001, 720000) g;
SELECT count(*) > 1 AS grew FROM bf_layers(bf_tracked_filter('tcc', 'k'));
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');
INSERT INTO tcc VALUES (800001, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');
-- TRUNCATE empties it: in full
TRUNCATE tcc;
SELECT tcc_refresh('tcc', 'k');
SELECT c.full_refresh, c.same, bf_contains(copy::bloomfilter, 1::bigint) AS has_1
FROM tcc_check('tcc', 'k') c, tcc_client;
INSERT INTO tcc VALUES (1, 'n');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');
-- untracked and tracked anew: the old position is not one of the new row's
SELECT bf_untrack('tcc', 'k');
SELECT bf_track('tcc', 'k', 100000, 0.01, method => 'trigger');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');

-- a column tracked by an index: the index's change sets
CREATE TABLE tcc_i (k text);
INSERT INTO tcc_i SELECT 'k' || g FROM generate_series(1, 1000) g;
SELECT bf_track('tcc_i', 'k', 100000, 0.01, method => 'index');
UPDATE tcc_client SET copy = NULL, lsn = NULL;
SELECT tcc_refresh('tcc_i', 'k');
SELECT full_refresh, same FROM tcc_check('tcc_i', 'k');
INSERT INTO tcc_i VALUES ('new');
SELECT tcc_refresh('tcc_i', 'k');
SELECT full_refresh, runs, same FROM tcc_check('tcc_i', 'k');

-- NULL table or column: no row
SELECT count(*) FROM bf_tracked_changes(NULL, 'k');
SELECT count(*) FROM bf_tracked_changes('tcc', NULL);
-- not tracked: an error
SELECT * FROM bf_tracked_changes('tcc', 'note');

-- rights: those of bf_tracked_filter (SELECT on the column; the filter
-- holds the keys of every row, whatever row-level security hides)
CREATE ROLE tcc_nobody;
SET ROLE tcc_nobody;
SELECT next_lsn IS NOT NULL FROM bf_tracked_changes('tcc', 'k');
RESET ROLE;
GRANT SELECT (k) ON tcc TO tcc_nobody;
SET ROLE tcc_nobody;
SELECT full_refresh FROM bf_tracked_changes('tcc', 'k');
RESET ROLE;
-- a writer without SELECT writes the filter (so that its writes do not
-- tell whether its keys were there): a new version, no chunk changed
GRANT INSERT ON tcc TO tcc_nobody;
UPDATE tcc_client SET copy = NULL, lsn = NULL;
SELECT tcc_refresh('tcc', 'k');
REVOKE SELECT (k) ON tcc FROM tcc_nobody;
SET ROLE tcc_nobody;
INSERT INTO tcc VALUES (1, 'dup');
RESET ROLE;
SELECT (SELECT next_lsn FROM bf_tracked_changes('tcc', 'k')) > lsn AS new_version FROM tcc_client;
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, runs, same FROM tcc_check('tcc', 'k');

-- a stale filter (a sync trigger disabled) is refused, as by
-- bf_tracked_filter, until bf_rebuild
SET client_min_messages = error;
DO $$ BEGIN
	EXECUTE format('ALTER TABLE tcc DISABLE TRIGGER %I',
				   (SELECT tgname FROM pg_trigger
					WHERE tgrelid = 'tcc'::regclass AND tgname LIKE 'bf_sync_%_ins'));
END $$;
RESET client_min_messages;
\set VERBOSITY sqlstate
SELECT full_refresh FROM bf_tracked_changes('tcc', 'k', (SELECT lsn FROM tcc_client));
\set VERBOSITY default
SELECT bf_rebuild('tcc', 'k');
SELECT tcc_refresh('tcc', 'k');
SELECT full_refresh, same FROM tcc_check('tcc', 'k');

SELECT bf_untrack('tcc', 'k');
SELECT bf_untrack('tcc_i', 'k');
DROP TABLE tcc, tcc_i, tcc_client;
DROP ROLE tcc_nobody;
DROP FUNCTION tcc_check(regclass, name), tcc_refresh(regclass, name), bfc_runs(bytea),
	bfc_apply(bytea, bytea), bfc_le(bytea, int, int);
