/* bloomfilter--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.3'" to load this file. \quit

-- Every object the extension gains or changes after 1.2.  A new
-- installation runs the scripts of the chain up to this one (make
-- full-script), so a fresh 1.3 and an updated 1.2 have the same catalog
-- (test/t/003_upgrade.pl).

-- Per-filter statistics (docs/monitoring.md): lookups, "absent" answers
-- and guarded scans skipped, per bloomfilter index and per tracked filter
-- of this database, counted when the library is preloaded
-- (shared_preload_libraries) and bloomfilter.track_stats is on.
-- PARALLEL SAFE: shared memory, the same from every process.
CREATE FUNCTION bf_stat_available() RETURNS boolean
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_stat_available() IS
	'whether per-filter statistics are counted: the library is preloaded (shared_preload_libraries)';

CREATE FUNCTION bf_stat_filters_raw(OUT relid oid, OUT attnum int2, OUT lookups bigint,
	OUT absent bigint, OUT skipped bigint)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_stat_filters_raw() IS
	'the per-filter counts of this database: (index, 0) or (table, column number)';

-- Counts of lookups say how often a filter is asked, not which keys: as
-- readable as pg_stat_user_indexes.  Resetting them is restricted as
-- pg_stat_reset is: to superusers and those granted EXECUTE.
CREATE FUNCTION bf_stat_reset() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_stat_reset() IS
	'zero the per-filter statistics of this database';
REVOKE ALL ON FUNCTION bf_stat_reset() FROM PUBLIC;

CREATE VIEW bf_stat_filters AS
	SELECT s.relid::pg_catalog.regclass AS relid,
		n.nspname AS schemaname,
		c.relname,
		CASE WHEN s.attnum <> 0 THEN s.attnum END AS attnum,
		a.attname,
		CASE WHEN s.attnum = 0 THEN 'index' ELSE 'tracked' END AS kind,
		s.lookups,
		s.absent,
		s.skipped
	FROM bf_stat_filters_raw() s
		JOIN pg_catalog.pg_class c ON c.oid = s.relid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = s.relid AND a.attnum = s.attnum
			AND s.attnum > 0;
COMMENT ON VIEW bf_stat_filters IS
	'per bloomfilter index and tracked filter of this database: lookups, answers "absent", guarded scans skipped';
GRANT SELECT ON bf_stat_filters TO PUBLIC;
