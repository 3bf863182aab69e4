/* bloomfilter--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit

-- Every object the extension gains or changes after 1.0.  A new
-- installation runs bloomfilter--1.0.sql and then this script, so a fresh
-- 1.1 and an updated 1.0 have the same catalog (test/upgrade_check.sh).
-- Names from C are schema-qualified with @extschema@.

-- ====================================================================
-- Values: validation, caches, settings
-- ====================================================================

-- (end of values)

-- ====================================================================
-- Sliding-window and scalable filters
-- ====================================================================

-- (end of windows)

-- ====================================================================
-- Index access method
-- ====================================================================

-- PARALLEL RESTRICTED: a backend buffers the keys it inserts into an
-- index and writes them before it reads one; a parallel worker cannot see
-- its leader's buffered keys (it would answer "probably" for every key).
ALTER FUNCTION bf_index_contains(regclass, anyelement) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_contains(regclass, text) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_filter(regclass) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_info(regclass) PARALLEL RESTRICTED;

-- The changes of an index's filter since a WAL position, as a patch of
-- the bytes of bf_index_filter (docs/FORMAT.md, "Change sets").  Not
-- STRICT: since NULL asks for the whole value (a NULL index gives no
-- row).  VOLATILE: it reads the current WAL position.  PARALLEL
-- RESTRICTED like the other lookups (keys buffered by the leader).
CREATE FUNCTION bf_index_changes(index regclass, since pg_lsn DEFAULT NULL)
	RETURNS TABLE (next_lsn pg_lsn, full_refresh bool, patch bytea)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE CALLED ON NULL INPUT
	PARALLEL RESTRICTED ROWS 1;
COMMENT ON FUNCTION bf_index_changes(regclass, pg_lsn) IS
	'the byte ranges of bf_index_filter(index) that may have changed since a WAL position (all of it when since is NULL or cannot be answered from), and the position to pass next time';

-- (end of index)

-- ====================================================================
-- Tracked filters
-- ====================================================================

-- (end of tracked filters)
