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

-- (end of index)

-- ====================================================================
-- Tracked filters
-- ====================================================================

-- Why the filter of a registry row no longer describes its table (NULL:
-- it does).  The DDL event trigger sets it when it cannot follow a schema
-- change or when a sync trigger is dropped or disabled; lookups then
-- refuse to answer, and bf_rebuild clears it.
ALTER TABLE bf_registry ADD COLUMN stale text;

-- The name of the index bf_track created for method 'index' (NULL when it
-- adopted an index that was already there): bf_untrack drops only that
-- one.  1.0 always created the index, so its rows get the name of the
-- bloomfilter index on their column.
ALTER TABLE bf_registry ADD COLUMN created_index name;
UPDATE bf_registry r SET created_index = (
	SELECT c.relname
	FROM pg_catalog.pg_index i
		 JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
		 JOIN pg_catalog.pg_am a ON a.oid = c.relam
		 JOIN pg_catalog.pg_attribute att ON att.attrelid = r.tbl AND att.attname = r.col
	WHERE i.indrelid = r.tbl AND a.amname = 'bloomfilter' AND i.indnatts = 1
	  AND i.indkey[0] = att.attnum AND i.indexprs IS NULL AND i.indpred IS NULL
	ORDER BY c.oid LIMIT 1)
WHERE r.method = 'index';

-- Changes with every write of a filter by the extension: the backends'
-- caches of detoasted filters are keyed by it (a TOAST pointer alone can
-- come back after VACUUM and OID wraparound with other bytes behind it).
CREATE SEQUENCE bf_registry_version;
SELECT pg_catalog.pg_extension_config_dump('bf_registry_version', '');
ALTER TABLE bf_registry ADD COLUMN version bigint
	DEFAULT pg_catalog.nextval('bf_registry_version'::pg_catalog.regclass);

-- bf_track_sync() and bf_sync_into() stay executable by PUBLIC: CREATE
-- TRIGGER needs EXECUTE on the function, also when a table's owner
-- restores a dump.  Each checks in C where it may act (the sync trigger
-- only on the table bf_track installed it on; bf_sync_into only into
-- columns the source table's owner may update).

-- The event trigger also follows ALTER TYPE (typed tables), dropped,
-- renamed or disabled sync triggers, and foreign tables becoming
-- partitions (event triggers cannot change their tags in place).
DROP EVENT TRIGGER bf_track_ddl;
CREATE EVENT TRIGGER bf_track_ddl ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'DROP TABLE', 'DROP SCHEMA', 'DROP OWNED',
				 'ALTER TYPE', 'DROP TYPE', 'DROP TRIGGER', 'ALTER TRIGGER',
				 'CREATE FOREIGN TABLE', 'ALTER FOREIGN TABLE', 'DROP FOREIGN TABLE')
	EXECUTE FUNCTION bf_track_ddl();
DROP EVENT TRIGGER bf_track_ddl_start;
CREATE EVENT TRIGGER bf_track_ddl_start ON ddl_command_start
	WHEN TAG IN ('ALTER TABLE', 'ALTER TYPE')
	EXECUTE FUNCTION bf_track_ddl();

-- A security barrier: the view shows only the rows of columns the user may
-- read, and a function of the user's in WHERE must not see the others.
-- stale / stale_reason: see bf_registry.stale.
CREATE OR REPLACE VIEW bf_tracked WITH (security_barrier) AS
	SELECT r.tbl, r.col, r.method, r.capacity, r.fpr AS target_fpr,
		   COALESCE(s.estimated_cardinality, i.estimated_cardinality) AS estimated_cardinality,
		   COALESCE(s.fill_ratio, i.fill_ratio) AS fill_ratio,
		   COALESCE(s.estimated_fpr, i.estimated_fpr) AS estimated_fpr,
		   CASE WHEN r.method = 'index' THEN i.saturated
				ELSE s.estimated_fpr > r.fpr END AS saturated,
		   CASE WHEN r.method = 'index' THEN i.bytes
				ELSE pg_catalog.octet_length(r.filter::bytea)::bigint END AS bytes,
		   CASE WHEN r.method = 'index' THEN NULL
				ELSE r.deleted_since_rebuild END AS deleted_since_rebuild,
		   r.stale IS NOT NULL AS stale,
		   r.stale AS stale_reason
	FROM bf_registry r
		 LEFT JOIN LATERAL bf_track_stats(r.filter) s ON r.method = 'trigger'
		 LEFT JOIN LATERAL (
			SELECT pg_catalog.sum(x.estimated_cardinality) AS estimated_cardinality,
				   pg_catalog.sum(x.fill * x.nbits) / pg_catalog.sum(x.nbits) AS fill_ratio,
				   pg_catalog.max(x.estimated_fpr) AS estimated_fpr,
				   pg_catalog.bool_or(x.saturated) AS saturated,
				   pg_catalog.sum(pg_catalog.pg_relation_size(p.relid))::bigint AS bytes
			FROM (SELECT t.relid FROM pg_catalog.pg_partition_tree(bf_track_index(r.tbl, r.col)) t
				  WHERE t.isleaf
				  UNION ALL
				  SELECT bf_track_index(r.tbl, r.col)
				  WHERE pg_catalog.pg_partition_root(bf_track_index(r.tbl, r.col)) IS NULL) p,
				 LATERAL bf_index_info(p.relid) x
			WHERE r.method = 'index') i ON r.method = 'index'
	WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = r.tbl)
	  AND pg_catalog.has_column_privilege(r.tbl, r.col, 'SELECT');

-- (end of tracked filters)
