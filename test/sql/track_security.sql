--
-- Tracked filters as seen by roles with few rights: the sync trigger
-- cannot be borrowed, is no membership oracle, bf_track creates indexes
-- with the caller's rights, bf_tracked hides what the user may not read,
-- and bf_sync_into writes only where its table's owner may.
--
SET client_min_messages = notice;
CREATE ROLE regress_bf_owner;
CREATE ROLE regress_bf_other;
GRANT CREATE ON SCHEMA public TO regress_bf_owner, regress_bf_other;

SET ROLE regress_bf_owner;
CREATE TABLE sec_secret (v int);
INSERT INTO sec_secret VALUES (42);
SELECT bf_track('sec_secret', 'v', method => 'trigger');
RESET ROLE;
SELECT id AS secret_id FROM bf_registry WHERE tbl = 'sec_secret'::regclass \gset

-- ---- the sync trigger acts only where bf_track installed it
SET ROLE regress_bf_other;
CREATE TABLE sec_mine (v int);
-- named like bf_track's own, with the secret filter's id: it must not
-- add 777 to that filter, nor count deletes, nor clear it
SELECT format('CREATE TRIGGER bf_sync_%s_ins AFTER INSERT ON sec_mine REFERENCING NEW TABLE AS n '
              'FOR EACH STATEMENT EXECUTE FUNCTION bf_track_sync(%L)', :'secret_id', :'secret_id') \gexec
SELECT format('CREATE TRIGGER bf_sync_%s_del AFTER DELETE ON sec_mine REFERENCING OLD TABLE AS o '
              'FOR EACH STATEMENT EXECUTE FUNCTION bf_track_sync(%L)', :'secret_id', :'secret_id') \gexec
SELECT format('CREATE TRIGGER bf_sync_%s_trunc AFTER TRUNCATE ON sec_mine '
              'FOR EACH STATEMENT EXECUTE FUNCTION bf_track_sync(%L)', :'secret_id', :'secret_id') \gexec
INSERT INTO sec_mine VALUES (777);
DELETE FROM sec_mine;
TRUNCATE sec_mine;
-- and while it runs, no lock on the registry that the owner's writers wait for
BEGIN;
INSERT INTO sec_mine VALUES (778);
SELECT count(*) AS registry_locks FROM pg_locks
WHERE relation = 'bf_registry'::regclass AND pid = pg_backend_pid();
ROLLBACK;
-- a trigger with another name is refused outright
SELECT format('CREATE TRIGGER borrowed AFTER INSERT ON sec_mine REFERENCING NEW TABLE AS n '
              'FOR EACH STATEMENT EXECUTE FUNCTION bf_track_sync(%L)', :'secret_id') \gexec
INSERT INTO sec_mine VALUES (779);
-- disabling, renaming and dropping the look-alikes on its own table does
-- not make the owner's filter stale (no denial of service either)
SELECT format('ALTER TABLE sec_mine DISABLE TRIGGER bf_sync_%s_ins', :'secret_id') \gexec
SELECT format('ALTER TRIGGER bf_sync_%s_del ON sec_mine RENAME TO gone', :'secret_id') \gexec
SELECT format('DROP TRIGGER bf_sync_%s_trunc ON sec_mine', :'secret_id') \gexec
DROP TABLE sec_mine;
RESET ROLE;
SELECT bf_might_contain('sec_secret', 'v', 777) AS borrowed_insert,
       bf_might_contain('sec_secret', 'v', 42) AS kept_value,
       deleted_since_rebuild, stale
FROM bf_tracked WHERE tbl = 'sec_secret'::regclass;

-- ---- no membership oracle for writers who cannot read the column
-- regress_bf_other may insert but not read: whether its statement writes
-- (and so locks) a chunk of the filter must not depend on whether the
-- value was in the filter already (42 is, 4242 is not); the filter of
-- sec_secret is a growing one, whose newest layer takes the writes
CREATE FUNCTION sec_chunks_written() RETURNS bigint LANGUAGE sql AS
$$ SELECT count(*) FROM bf_registry_chunk WHERE written = pg_current_xact_id() $$;
GRANT INSERT ON sec_secret TO regress_bf_other;
BEGIN;
SET LOCAL ROLE regress_bf_other;
INSERT INTO sec_secret VALUES (42);
RESET ROLE;
SELECT sec_chunks_written() AS other_present_writes;
ROLLBACK;
BEGIN;
SET LOCAL ROLE regress_bf_other;
INSERT INTO sec_secret VALUES (4242);
RESET ROLE;
SELECT sec_chunks_written() AS other_absent_writes;
ROLLBACK;
-- the owner, who can read the column, gets the cheap path (no write at all)
SET ROLE regress_bf_owner;
SELECT bf_might_contain('sec_secret', 'v', 42);
RESET ROLE;
BEGIN;
SET LOCAL ROLE regress_bf_owner;
INSERT INTO sec_secret VALUES (42);
RESET ROLE;
SELECT sec_chunks_written() AS owner_present_writes;
ROLLBACK;

-- the same for a filter of one size (a capacity: not growing)
SET ROLE regress_bf_owner;
CREATE TABLE sec_chunked (v int);
INSERT INTO sec_chunked VALUES (42);
SELECT bf_track('sec_chunked', 'v', 1000, method => 'trigger');
GRANT INSERT ON sec_chunked TO regress_bf_other;
RESET ROLE;
SELECT id AS chunked_id FROM bf_registry WHERE tbl = 'sec_chunked'::regclass \gset
BEGIN;
SET LOCAL ROLE regress_bf_other;
INSERT INTO sec_chunked VALUES (42);
RESET ROLE;
SELECT sec_chunks_written() AS other_present_writes;
ROLLBACK;
BEGIN;
SET LOCAL ROLE regress_bf_other;
INSERT INTO sec_chunked VALUES (4242);
RESET ROLE;
SELECT sec_chunks_written() AS other_absent_writes;
ROLLBACK;
BEGIN;
SET LOCAL ROLE regress_bf_owner;
INSERT INTO sec_chunked VALUES (42);
RESET ROLE;
SELECT sec_chunks_written() AS owner_present_writes;
ROLLBACK;
-- the chunks, as the registry, are no one's to read but the registry's
-- owner; bf_track_stats(id) answers NULL where the column may not be read
SET ROLE regress_bf_other;
SELECT count(*) FROM bf_registry_chunk;
SELECT bf_track_stats(:secret_id) IS NULL AS hidden_growing,
       bf_track_stats(:chunked_id) IS NULL AS hidden_chunked;
SELECT count(*) AS visible FROM generate_series(1, 50) g WHERE bf_track_stats(g) IS NOT NULL;
RESET ROLE;
GRANT SELECT (v) ON sec_chunked TO regress_bf_other;
SET ROLE regress_bf_other;
SELECT bytes, estimated_cardinality > 0 AS counted FROM bf_track_stats(:chunked_id);
SELECT tbl, bytes FROM bf_tracked;
RESET ROLE;
DROP TABLE sec_chunked;

-- ---- bf_track creates the index with the caller's rights
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE regress_bf_space LOCATION '';
SET ROLE regress_bf_owner;
CREATE TABLE sec_placed (v text);
SET default_tablespace = regress_bf_space;
SELECT bf_track('sec_placed', 'v');
RESET default_tablespace;
SELECT bf_track('sec_placed', 'v');
SELECT count(*) AS indexes_in_space FROM pg_class
WHERE reltablespace = (SELECT oid FROM pg_tablespace WHERE spcname = 'regress_bf_space');
SELECT bf_untrack('sec_placed', 'v');
DROP TABLE sec_placed;
RESET ROLE;
DROP TABLESPACE regress_bf_space;

-- ---- bf_tracked is a security barrier
CREATE TABLE sec_public (v int);
SELECT bf_track('sec_public', 'v', method => 'trigger');
GRANT SELECT ON sec_public TO regress_bf_other;
CREATE FUNCTION sec_leak(regclass) RETURNS bool LANGUAGE plpgsql COST 0.0000001 AS
$$ BEGIN RAISE NOTICE 'saw %', $1; RETURN true; END $$;
SET ROLE regress_bf_other;
SELECT tbl FROM bf_tracked WHERE sec_leak(tbl);
RESET ROLE;
SELECT reloptions FROM pg_class WHERE oid = 'bf_tracked'::regclass;
DROP FUNCTION sec_leak(regclass);
SELECT bf_untrack('sec_public', 'v');
DROP TABLE sec_public;

-- ---- bf_sync_into writes only into columns its table's owner may update
SET ROLE regress_bf_other;
CREATE TABLE sec_target (k int PRIMARY KEY, f bloomfilter);
INSERT INTO sec_target VALUES (1);
RESET ROLE;
SET ROLE regress_bf_owner;
CREATE TABLE sec_source (k int, v int);
CREATE TRIGGER into_other AFTER INSERT ON sec_source REFERENCING NEW TABLE AS n
  FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into('sec_target', 'k', 'f', 'k', 'v');
GRANT INSERT ON sec_source TO regress_bf_other;
RESET ROLE;
-- regress_bf_other may update its own target, but the trigger is the
-- owner's, who may not: the insert fails instead of writing there
SET ROLE regress_bf_other;
INSERT INTO sec_source VALUES (1, 5);
SELECT f IS NULL AS untouched FROM sec_target;
RESET ROLE;
-- once the owner may update the column, the firing user's rights apply
GRANT SELECT, UPDATE (f) ON sec_target TO regress_bf_owner;
SET ROLE regress_bf_other;
INSERT INTO sec_source VALUES (1, 5);
SELECT f @> 5 AS added FROM sec_target;
RESET ROLE;
-- a rule that rewrites the update is a clear error, not an internal one
CREATE RULE sec_nothing AS ON UPDATE TO sec_target DO INSTEAD NOTHING;
\set VERBOSITY sqlstate
INSERT INTO sec_source VALUES (1, 6);
\set VERBOSITY default
INSERT INTO sec_source VALUES (1, 6);
DROP TABLE sec_source, sec_target;

SELECT bf_untrack('sec_secret', 'v');
DROP TABLE sec_secret;
REVOKE CREATE ON SCHEMA public FROM regress_bf_owner, regress_bf_other;
DROP ROLE regress_bf_owner;
DROP ROLE regress_bf_other;

-- ---- row-level security: the filter holds the rows the policies hide
CREATE ROLE regress_bf_rls;
CREATE TABLE sec_rls (owner_name name, v int);
INSERT INTO sec_rls VALUES ('regress_bf_rls', 1), ('someone_else', 2);
SELECT bf_track('sec_rls', 'v');
ALTER TABLE sec_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY own_rows ON sec_rls USING (owner_name = current_user);
GRANT SELECT, INSERT ON sec_rls TO regress_bf_rls;
SET ROLE regress_bf_rls;
SELECT v FROM sec_rls;
-- 2 is hidden from this role: its filter would tell it exists
SELECT bf_might_contain('sec_rls', 'v', 2);
SELECT bf_tracked_filter('sec_rls', 'v');
RESET ROLE;
-- a writer whom a policy applies to gets no shortcut on a 'trigger' filter
SELECT bf_untrack('sec_rls', 'v');
SELECT bf_track('sec_rls', 'v', method => 'trigger');
BEGIN;
SET LOCAL ROLE regress_bf_rls;
INSERT INTO sec_rls VALUES ('regress_bf_rls', 2);
RESET ROLE;
SELECT sec_chunks_written() AS rls_present_writes;
ROLLBACK;
-- the owner, exempt from its policies, reads it
SELECT bf_might_contain('sec_rls', 'v', 2);
SELECT bf_untrack('sec_rls', 'v');
DROP TABLE sec_rls;
DROP ROLE regress_bf_rls;
DROP FUNCTION sec_chunks_written();
