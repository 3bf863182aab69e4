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

-- The calling backend's cache of detoasted stored filters
-- (bloomfilter.filter_cache_size): entries, bytes held, and counters since
-- the backend started or bf_filter_cache_reset().  VOLATILE: the counters
-- move with every lookup.  PARALLEL RESTRICTED: each process has its own
-- cache, and the caller wants its own.
CREATE FUNCTION bf_filter_cache_stats(OUT entries bigint, OUT bytes bigint,
	OUT hits bigint, OUT misses bigint, OUT stale bigint, OUT evictions bigint)
	RETURNS record
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bf_filter_cache_stats() IS
	'this backend''s cache of detoasted stored filters: entries, bytes, hits, misses, entries found stale, evictions';

CREATE FUNCTION bf_filter_cache_reset() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bf_filter_cache_reset() IS
	'empty this backend''s cache of detoasted stored filters and zero its counters';

-- (end of values)

-- ====================================================================
-- Sliding-window and scalable filters
-- ====================================================================

-- A sliding-window filter: remembers each key for a window W cut into N
-- slices; keeps N + 1 slices, each a bloomfilter (docs/FORMAT.md section 7).
-- Every function that depends on the time takes it as an argument.  Those
-- are IMMUTABLE: the same value, key and time always give the same answer.
-- Their DEFAULT now() is evaluated by the caller, so a call that omits the
-- time is only as stable as now() (the planner sees now() in the call and
-- an index expression refuses it).
CREATE TYPE bloomwindow;

-- STABLE, not IMMUTABLE: a window of a non-portable element type names the
-- type in its text form (as bloomfilter_in / bloomfilter_out).
CREATE FUNCTION bloomwindow_in(cstring) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomwindow_out(bloomwindow) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomwindow_recv(internal) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomwindow_send(bloomwindow) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE bloomwindow (
	INPUT = bloomwindow_in,
	OUTPUT = bloomwindow_out,
	RECEIVE = bloomwindow_recv,
	SEND = bloomwindow_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = extended
);
COMMENT ON TYPE bloomwindow IS
	'sliding-window Bloom filter: slices of bloomfilters (format in docs/FORMAT.md section 7)';

CREATE FUNCTION bloomwindow_to_bytea(bloomwindow) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomwindow_from_bytea(bytea) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (bloomwindow AS bytea) WITH FUNCTION bloomwindow_to_bytea(bloomwindow);
CREATE CAST (bytea AS bloomwindow) WITH FUNCTION bloomwindow_from_bytea(bytea);

CREATE FUNCTION bf_window_create(window_length interval, capacity_per_window bigint,
								 fpr float8 DEFAULT 0.01, slices int DEFAULT 4,
								 seed bigint DEFAULT 0)
	RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_create(interval, bigint, float8, int, bigint) IS
	'empty sliding window: remembers keys for the window, at most fpr false positives while each window holds at most capacity_per_window keys';

-- Not STRICT: adding a NULL value returns the window unchanged, so UPDATE
-- t SET w = bf_window_add(w, x) never wipes a window; a NULL window stays
-- NULL; a NULL time is an error.
CREATE FUNCTION bf_window_add(bloomwindow, anyelement, at timestamptz DEFAULT now())
	RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_add(bloomwindow, anyelement, timestamptz) IS
	'the window with the value added at the given time';
-- Not STRICT, as bf_window_add: a NULL array adds nothing; NULL elements
-- are skipped.
CREATE FUNCTION bf_window_add_all(bloomwindow, anyarray, at timestamptz DEFAULT now())
	RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_add_all(bloomwindow, anyarray, timestamptz) IS
	'the window with every non-NULL element added at the given time';

CREATE FUNCTION bf_window_contains(bloomwindow, anyelement, at timestamptz DEFAULT now())
	RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_contains(bloomwindow, anyelement, timestamptz) IS
	'false: the value was not added within the window before the given time; true: probably added';

-- text overloads, so that an untyped literal resolves to text.
-- Not STRICT, as bf_window_add(bloomwindow, anyelement, timestamptz).
CREATE FUNCTION bf_window_add(bloomwindow, text, at timestamptz DEFAULT now())
	RETURNS bloomwindow
	AS 'MODULE_PATHNAME', 'bf_window_add' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION bf_window_contains(bloomwindow, text, at timestamptz DEFAULT now())
	RETURNS bool
	AS 'MODULE_PATHNAME', 'bf_window_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bf_window_union(bloomwindow, bloomwindow) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_union(bloomwindow, bloomwindow) IS
	'window holding the keys of both (same window, slices, capacity, fpr and seed)';
CREATE OPERATOR | (
	LEFTARG = bloomwindow, RIGHTARG = bloomwindow,
	FUNCTION = bf_window_union, COMMUTATOR = |
);

-- equal: the same answers for every key at every time (the counters of
-- inserted and ignored adds are not compared)
CREATE FUNCTION bloomwindow_eq(bloomwindow, bloomwindow) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomwindow_ne(bloomwindow, bloomwindow) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OPERATOR = (
	LEFTARG = bloomwindow, RIGHTARG = bloomwindow,
	FUNCTION = bloomwindow_eq, COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE OPERATOR <> (
	LEFTARG = bloomwindow, RIGHTARG = bloomwindow,
	FUNCTION = bloomwindow_ne, COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);

-- STABLE, not IMMUTABLE: element_type names the type of a non-portable
-- window, which consults the catalogs (as bf_info does).
CREATE FUNCTION bf_window_info(bloomwindow,
							   OUT window_length interval, OUT slices int,
							   OUT slice_width interval, OUT capacity_per_window bigint,
							   OUT target_fpr float8, OUT nbits_per_slice bigint,
							   OUT nhashes int, OUT seed bigint, OUT bytes bigint,
							   OUT newest_slice timestamptz, OUT ignored_adds bigint,
							   OUT estimated_fpr float8, OUT element_type text,
							   OUT portable bool)
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_info(bloomwindow) IS
	'parameters, newest slice, ignored adds and the false-positive rate of a lookup in the newest slice';

CREATE FUNCTION bf_window_slices(bloomwindow,
								 OUT slice_start timestamptz, OUT slice_end timestamptz,
								 OUT expires timestamptz, OUT inserted bigint,
								 OUT bits_set bigint, OUT estimated_cardinality float8,
								 OUT estimated_fpr float8, OUT filter bloomfilter)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 5;
COMMENT ON FUNCTION bf_window_slices(bloomwindow) IS
	'the slices stored, oldest first: time range, time from which no lookup consults it, fill, and the slice as a bloomfilter';

-- Aggregate: the state is the window (internal); none of these functions
-- can be called from SQL directly.
-- Not STRICT: the state is created on the first row even if its value is
-- NULL; NULL values are skipped; a NULL time is an error.
CREATE FUNCTION bf_window_agg_trans(internal, anyelement, timestamptz, interval, bigint)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: as above.
CREATE FUNCTION bf_window_agg_trans(internal, anyelement, timestamptz, interval, bigint, float8)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: as above.
CREATE FUNCTION bf_window_agg_trans(internal, anyelement, timestamptz, interval, bigint, float8, int)
	RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: zero rows (NULL state) give NULL.
CREATE FUNCTION bf_window_agg_final(internal) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: a combine function of an internal state must handle NULLs.
CREATE FUNCTION bf_window_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION bf_window_agg_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bf_window_agg_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE bf_window_agg(anyelement, at timestamptz, window_length interval,
							   capacity_per_window bigint) (
	SFUNC = bf_window_agg_trans, STYPE = internal,
	FINALFUNC = bf_window_agg_final, COMBINEFUNC = bf_window_agg_combine,
	SERIALFUNC = bf_window_agg_serialize, DESERIALFUNC = bf_window_agg_deserialize,
	PARALLEL = SAFE
);
CREATE AGGREGATE bf_window_agg(anyelement, at timestamptz, window_length interval,
							   capacity_per_window bigint, fpr float8) (
	SFUNC = bf_window_agg_trans, STYPE = internal,
	FINALFUNC = bf_window_agg_final, COMBINEFUNC = bf_window_agg_combine,
	SERIALFUNC = bf_window_agg_serialize, DESERIALFUNC = bf_window_agg_deserialize,
	PARALLEL = SAFE
);
CREATE AGGREGATE bf_window_agg(anyelement, at timestamptz, window_length interval,
							   capacity_per_window bigint, fpr float8, slices int) (
	SFUNC = bf_window_agg_trans, STYPE = internal,
	FINALFUNC = bf_window_agg_final, COMBINEFUNC = bf_window_agg_combine,
	SERIALFUNC = bf_window_agg_serialize, DESERIALFUNC = bf_window_agg_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_window_agg(anyelement, timestamptz, interval, bigint) IS
	'window (fpr 0.01, 4 slices) holding every non-NULL value at its time, as if added in time order';
COMMENT ON AGGREGATE bf_window_agg(anyelement, timestamptz, interval, bigint, float8) IS
	'window (4 slices) holding every non-NULL value at its time, as if added in time order';
COMMENT ON AGGREGATE bf_window_agg(anyelement, timestamptz, interval, bigint, float8, int) IS
	'window holding every non-NULL value at its time, as if added in time order';

-- (end of windows)

-- A growing filter: a bloomfilter in the layered form of docs/FORMAT.md
-- section 9.  When its newest layer holds its capacity, bf_add appends a
-- layer growth times larger with a tighter rate, so that the rate stays
-- below fpr for any number of keys.  bf_add, bf_add_all, bf_contains and
-- the other lookups, bf_clear, =, the text and binary forms and the
-- introspection functions take either form; set algebra refuses it.
CREATE FUNCTION bf_create_growing(capacity bigint, fpr float8 DEFAULT 0.01,
								  growth int DEFAULT 2, seed bigint DEFAULT 0)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_create_growing(bigint, float8, int, bigint) IS
	'empty growing filter: first layer sized for capacity keys, each later layer growth times larger, false-positive rate at most fpr for any number of keys';

CREATE FUNCTION bf_layers(bloomfilter,
						  OUT layer int, OUT nbits bigint, OUT nhashes int,
						  OUT capacity bigint, OUT target_fpr float8,
						  OUT inserted bigint, OUT bits_set bigint,
						  OUT estimated_fpr float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;
COMMENT ON FUNCTION bf_layers(bloomfilter) IS
	'the layers of a filter, oldest first (one row for a filter that does not grow): size, sizing, fill';

-- (end of growing filters)

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

-- The layers of a bloomfilter index (one for an index that does not
-- grow), as bf_layers gives them for its value: it reads the whole index,
-- as bf_index_info does, with the rights of bf_index_filter.  STABLE and
-- PARALLEL RESTRICTED as bf_index_filter.
CREATE FUNCTION bf_index_layers(index regclass,
								OUT layer int, OUT nbits bigint, OUT nhashes int,
								OUT capacity bigint, OUT target_fpr float8,
								OUT inserted bigint, OUT bits_set bigint,
								OUT estimated_fpr float8)
	RETURNS SETOF record
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED ROWS 4;
COMMENT ON FUNCTION bf_index_layers(regclass) IS
	'the layers of a bloomfilter index, oldest first (inserted estimated from the bits): one for an index that does not grow';

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

-- Which parts of a trigger-method filter each write changed, so that a
-- client holding a copy fetches only those (bf_tracked_changes): the
-- version from which the stamps are complete, then one little-endian
-- int64 per 8 KiB of the filter's value, the version of the write that
-- last changed it (0: this row version's write).  NULL after a write of a
-- whole new value.  Dumped with the row; consistent with its filter.
ALTER TABLE bf_registry ADD COLUMN changes bytea;

-- The changes of a tracked column's filter since a position, as a patch
-- of the bytes of bf_tracked_filter (docs/FORMAT.md, "Change sets").  For
-- a column tracked by an index the positions are WAL positions, as for
-- bf_index_changes; for the trigger method, versions of the registry
-- row.  Not STRICT: since NULL asks for the whole value (a NULL tbl or col
-- gives no row).  VOLATILE: it reads the current WAL position.  PARALLEL
-- RESTRICTED like the other lookups.
CREATE FUNCTION bf_tracked_changes(tbl regclass, col name, since pg_lsn DEFAULT NULL)
	RETURNS TABLE (next_lsn pg_lsn, full_refresh bool, patch bytea)
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE CALLED ON NULL INPUT
	PARALLEL RESTRICTED ROWS 1;
COMMENT ON FUNCTION bf_tracked_changes(regclass, name, pg_lsn) IS
	'the byte ranges of bf_tracked_filter(tbl, col) that may have changed since a position (all of it when since is NULL or cannot be answered from), and the position to pass next time';

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
