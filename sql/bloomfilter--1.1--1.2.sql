/* bloomfilter--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.2'" to load this file. \quit

-- Every object the extension gains or changes after 1.1.  A new
-- installation runs bloomfilter--1.0.sql, bloomfilter--1.0--1.1.sql and
-- then this script, so a fresh 1.2 and an updated 1.1 have the same
-- catalog (test/t/003_upgrade.pl).

-- ====================================================================
-- Aggregates: transition states of real types
-- ====================================================================

-- Every aggregate had an `internal` state, which only PostgreSQL's own
-- parallel plans can move between processes (through the serialize and
-- deserialize functions).  bf_union_agg and bf_intersect_agg now have a
-- state of type bloomfilter, and bf_agg and bf_window_agg gain overloads
-- for the common key types (text, "char", bigint, integer, smallint, uuid,
-- bytea, numeric, date, timestamp, timestamptz) whose states are values of
-- SQL types: bloomfilter
-- for bf_agg(value, capacity, fpr), bloomwindow for bf_window_agg, and
-- bytea (the sorted set of the values' hashes) for the auto-sized bf_agg.
-- A distributed planner such as Citus can then run them as partial
-- aggregates on each node and combine the states, which it sends in their
-- text form.  (Citus runs a partial aggregate only if the argument types
-- are exactly the aggregate's: a polymorphic aggregate would be pushed down
-- and then refused, so the anyelement forms keep their `internal` states,
-- and Citus gathers their rows as before.)  Between rows a state is an
-- expanded object (no copy per row); a flat state is the type's ordinary
-- value.
--
-- The support functions can be called from SQL.  They validate a state
-- given as a flat value as any argument of its type, never modify it, and
-- outside an aggregate return a new value.  The transition functions of
-- the bloomfilter states are IMMUTABLE, as bf_add is; those of the
-- auto-sized bf_agg are STABLE: whether they stop with an error depends on
-- the setting bloomfilter.agg_max_distinct.  None is STRICT: a NULL state
-- is the start of an aggregate, and each says what a NULL argument means.
-- The type of a value is the one each overload declares, which is also
-- how Citus's workers, which call the transition function without the
-- aggregate's expression, tell it.
--
-- The 1.0 and 1.1 support functions of bf_union_agg and bf_intersect_agg
-- are dropped below; the library keeps them for databases not yet updated.

-- bf_agg(value, capacity, fpr): the transition functions are made below
CREATE FUNCTION bf_agg_sized_finish(bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_agg_sized_finish(bloomfilter) IS
	'final function of bf_agg(value, capacity, fpr); not STRICT: zero rows (a NULL state) give an empty filter of the size asked when capacity and fpr are constants';

-- bf_union_agg and bf_intersect_agg: a partial state is a filter as a row
-- is, so the transition function is also the combine function (and that
-- of bf_union_agg is the combine function of bf_agg with a capacity)
CREATE FUNCTION bf_union_agg_step(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_union_agg_step(bloomfilter, bloomfilter) IS
	'transition and combine function of bf_union_agg, combine function of bf_agg(value, capacity, fpr): the state OR the filter; not STRICT: a NULL state becomes a copy of the first non-NULL filter, NULL filters are skipped';
CREATE FUNCTION bf_intersect_agg_step(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_intersect_agg_step(bloomfilter, bloomfilter) IS
	'transition and combine function of bf_intersect_agg: the state AND the filter; not STRICT: a NULL state becomes a copy of the first non-NULL filter, NULL filters are skipped';
CREATE FUNCTION bf_union_agg_finish(bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_union_agg_finish(bloomfilter) IS
	'final function of bf_union_agg: the inserted counter from the bits; not STRICT so that it reads the state where it is (a NULL state gives NULL)';
CREATE FUNCTION bf_intersect_agg_finish(bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_intersect_agg_finish(bloomfilter) IS
	'final function of bf_intersect_agg: the inserted counter from the bits; not STRICT so that it reads the state where it is (a NULL state gives NULL)';

-- the auto-sized bf_agg(value [, fpr]): the transition functions are made below
CREATE FUNCTION bf_agg_auto_merge(bytea, bytea) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_agg_auto_merge(bytea, bytea) IS
	'combine function of the auto-sized bf_agg: the union of two sets of hashes; not STRICT: NULL states are skipped; STABLE: it stops past bloomfilter.agg_max_distinct hashes';
CREATE FUNCTION bf_agg_auto_finish(bytea) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_agg_auto_finish(bytea) IS
	'final function of the auto-sized bf_agg: a filter sized for the distinct hashes; not STRICT so that it reads the state where it is (a NULL state, or one without hashes, gives NULL); STABLE: it stops past bloomfilter.agg_max_distinct hashes';

-- bf_window_agg(value, at, window_length, capacity_per_window [, fpr [, slices]]):
-- the transition functions are made below
CREATE FUNCTION bf_window_agg_merge(bloomwindow, bloomwindow) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_agg_merge(bloomwindow, bloomwindow) IS
	'combine function of bf_window_agg: the union of two windows; not STRICT: NULL states are skipped';
CREATE FUNCTION bf_window_agg_finish(bloomwindow) RETURNS bloomwindow
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_window_agg_finish(bloomwindow) IS
	'final function of bf_window_agg: the inserted counters from the bits; not STRICT so that it reads the state where it is (a NULL state gives NULL)';

-- The aggregates with their new states.  No SERIALFUNC / DESERIALFUNC: a
-- state that is not `internal` crosses processes as its flat value.
-- SSPACE: the planner's guess of a group's state in a hash table, which
-- for an `internal` state was 8 kB and would otherwise be the type's
-- average width (32 bytes), far less than a filter, a window or the
-- auto-sized form's first array of hashes (8 kB).
CREATE OR REPLACE AGGREGATE bf_union_agg(bloomfilter) (
	SFUNC = bf_union_agg_step,
	STYPE = bloomfilter,
	SSPACE = 8192,
	FINALFUNC = bf_union_agg_finish,
	COMBINEFUNC = bf_union_agg_step,
	PARALLEL = SAFE
);
CREATE OR REPLACE AGGREGATE bf_intersect_agg(bloomfilter) (
	SFUNC = bf_intersect_agg_step,
	STYPE = bloomfilter,
	SSPACE = 8192,
	FINALFUNC = bf_intersect_agg_finish,
	COMBINEFUNC = bf_intersect_agg_step,
	PARALLEL = SAFE
);
-- the support functions of bf_union_agg's and bf_intersect_agg's
-- `internal` states, which no aggregate uses now
DROP FUNCTION bf_union_agg_trans(internal, bloomfilter);
DROP FUNCTION bf_union_agg_final(internal);
DROP FUNCTION bf_union_agg_combine(internal, internal);
DROP FUNCTION bf_intersect_agg_trans(internal, bloomfilter);
DROP FUNCTION bf_intersect_agg_final(internal);
DROP FUNCTION bf_intersect_agg_combine(internal, internal);

-- the overloads for the common key types, each with transition functions
-- declaring its type.  Every type with an implicit cast to one of them that
-- would change how its values hash (timestamp to timestamptz, "char" to
-- text) or leave the call ambiguous (smallint) has an overload of its own,
-- so that no call changes the key it hashes.
DO $overloads$
DECLARE
	t text;
BEGIN
	FOREACH t IN ARRAY ARRAY['text', '"char"', 'bigint', 'integer', 'smallint', 'uuid', 'bytea',
							 'numeric', 'date', 'timestamp without time zone',
							 'timestamp with time zone']
	LOOP
		EXECUTE format($f$
			CREATE FUNCTION bf_agg_sized_step(bloomfilter, %1$s, bigint, float8) RETURNS bloomfilter
				AS 'MODULE_PATHNAME', 'bf_agg_sized_step'
				LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
			COMMENT ON FUNCTION bf_agg_sized_step(bloomfilter, %1$s, bigint, float8) IS
				'transition function of bf_agg(value, capacity, fpr); not STRICT: a NULL state is made into an empty filter of that size even when the value is NULL, NULL values are skipped';
			CREATE AGGREGATE bf_agg(%1$s, capacity bigint, fpr float8) (
				SFUNC = bf_agg_sized_step, STYPE = bloomfilter, SSPACE = 8192,
				FINALFUNC = bf_agg_sized_finish, COMBINEFUNC = bf_union_agg_step,
				PARALLEL = SAFE);
			CREATE FUNCTION bf_agg_auto_step(bytea, %1$s) RETURNS bytea
				AS 'MODULE_PATHNAME', 'bf_agg_auto_step'
				LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;
			COMMENT ON FUNCTION bf_agg_auto_step(bytea, %1$s) IS
				'transition function of bf_agg(value): adds the value''s hash to the set; not STRICT: a NULL state starts a set, NULL values are skipped; STABLE: it stops past bloomfilter.agg_max_distinct hashes';
			CREATE FUNCTION bf_agg_auto_step(bytea, %1$s, float8) RETURNS bytea
				AS 'MODULE_PATHNAME', 'bf_agg_auto_step'
				LANGUAGE C STABLE CALLED ON NULL INPUT PARALLEL SAFE;
			COMMENT ON FUNCTION bf_agg_auto_step(bytea, %1$s, float8) IS
				'transition function of bf_agg(value, fpr): adds the value''s hash to the set; not STRICT: a NULL state starts a set, NULL values are skipped, a NULL fpr is an error; STABLE: it stops past bloomfilter.agg_max_distinct hashes';
			CREATE AGGREGATE bf_agg(%1$s) (
				SFUNC = bf_agg_auto_step, STYPE = bytea, SSPACE = 8192,
				FINALFUNC = bf_agg_auto_finish, COMBINEFUNC = bf_agg_auto_merge,
				PARALLEL = SAFE);
			CREATE AGGREGATE bf_agg(%1$s, fpr float8) (
				SFUNC = bf_agg_auto_step, STYPE = bytea, SSPACE = 8192,
				FINALFUNC = bf_agg_auto_finish, COMBINEFUNC = bf_agg_auto_merge,
				PARALLEL = SAFE);
			CREATE FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint)
				RETURNS bloomwindow AS 'MODULE_PATHNAME', 'bf_window_agg_step'
				LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
			CREATE FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint, float8)
				RETURNS bloomwindow AS 'MODULE_PATHNAME', 'bf_window_agg_step'
				LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
			CREATE FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint, float8, int)
				RETURNS bloomwindow AS 'MODULE_PATHNAME', 'bf_window_agg_step'
				LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
			COMMENT ON FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint) IS
				'transition function of bf_window_agg; not STRICT: a NULL state is made into an empty window even when the value is NULL, NULL values are skipped, a NULL time is an error';
			COMMENT ON FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint, float8) IS
				'transition function of bf_window_agg; not STRICT: a NULL state is made into an empty window even when the value is NULL, NULL values are skipped, a NULL time is an error';
			COMMENT ON FUNCTION bf_window_agg_step(bloomwindow, %1$s, timestamptz, interval, bigint, float8, int) IS
				'transition function of bf_window_agg; not STRICT: a NULL state is made into an empty window even when the value is NULL, NULL values are skipped, a NULL time is an error';
			CREATE AGGREGATE bf_window_agg(%1$s, at timestamptz, window_length interval,
										   capacity_per_window bigint) (
				SFUNC = bf_window_agg_step, STYPE = bloomwindow, SSPACE = 8192,
				FINALFUNC = bf_window_agg_finish, COMBINEFUNC = bf_window_agg_merge,
				PARALLEL = SAFE);
			CREATE AGGREGATE bf_window_agg(%1$s, at timestamptz, window_length interval,
										   capacity_per_window bigint, fpr float8) (
				SFUNC = bf_window_agg_step, STYPE = bloomwindow, SSPACE = 8192,
				FINALFUNC = bf_window_agg_finish, COMBINEFUNC = bf_window_agg_merge,
				PARALLEL = SAFE);
			CREATE AGGREGATE bf_window_agg(%1$s, at timestamptz, window_length interval,
										   capacity_per_window bigint, fpr float8, slices int) (
				SFUNC = bf_window_agg_step, STYPE = bloomwindow, SSPACE = 8192,
				FINALFUNC = bf_window_agg_finish, COMBINEFUNC = bf_window_agg_merge,
				PARALLEL = SAFE);
		$f$, t);
	END LOOP;
END
$overloads$;

-- (end of aggregates)

-- ====================================================================
-- Tables distributed by Citus: each shard answers for its own rows
-- ====================================================================

-- the planner's support of bf_shard_might_contain: on a shard, tableoid
-- becomes the shard's OID, so the test is made once per statement
CREATE FUNCTION bf_shard_might_contain_support(internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bf_shard_might_contain(rel oid, cols name[], value anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED
	SUPPORT bf_shard_might_contain_support;
COMMENT ON FUNCTION bf_shard_might_contain(oid, name[], anyelement) IS
	'may the bloomfilter index of table rel on columns cols hold value? (the shards'' side of lookups in a Citus-distributed table)';

-- The shards' side of bf_index_info on the coordinator, which names each
-- shard (run_command_on_shards), not its index.  Naming the index reveals
-- nothing the catalog does not; reading it needs bf_index_info's rights.
CREATE FUNCTION bf_shard_index(rel regclass, cols name[]) RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_shard_index(regclass, name[]) IS
	'the usable bloomfilter index of table rel (a shard of a Citus-distributed table) on columns cols';

-- pg_relation_size of an index, or for a table of Citus's the size of its
-- shards' indexes (asked of them, with bf_index_info's rights).  STABLE
-- and PARALLEL RESTRICTED as bf_index_info.
CREATE FUNCTION bf_index_size(index regclass) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bf_index_size(regclass) IS
	'the size in bytes of a bloomfilter index (of a Citus table: of its shards'' indexes)';

-- The rate of a filter of nbits and nhashes holding keys distinct keys
-- (docs/FORMAT.md 6.2): what a filter rebuilt for a table's rows would
-- give.  IMMUTABLE: a formula.
CREATE FUNCTION bf_expected_fpr(nbits bigint, nhashes int, keys float8) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_expected_fpr(bigint, int, float8) IS
	'the false-positive rate of a filter of nbits bits and nhashes hashes holding keys distinct keys';

-- The live rows of a table and its partitions by the cumulative
-- statistics (NULL for a table of Citus's, whose rows are elsewhere).
-- STABLE: the statistics a transaction sees are its snapshot of them.
CREATE FUNCTION bf_live_rows(tbl regclass) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION bf_live_rows(regclass) IS
	'the live rows of a table and its partitions (n_live_tup); NULL for a table of Citus''s';

-- Filters of the trigger method are stored in chunks: the registry row
-- keeps the 64-byte header (filter NULL, chunk_bytes set; a growing
-- filter's growing header and each layer's header), and bf_registry_chunk
-- one row per chunk_bytes bytes of each layer's bits, numbered on across
-- the layers, so that a write changes and locks only the chunks whose bits
-- it sets.  "inserted" counts the adds that set a bit in the chunk (a
-- layer's count is its header's plus its chunks'); "written" is the last
-- writer's transaction, from which bf_tracked_changes tells what changed.
-- fillfactor leaves room for HOT updates.
ALTER TABLE bf_registry ADD COLUMN header bytea;
ALTER TABLE bf_registry ADD COLUMN chunk_bytes integer;
ALTER TABLE bf_registry ADD COLUMN written xid8;
CREATE TABLE bf_registry_chunk (
	id bigint NOT NULL,
	chunk integer NOT NULL,
	inserted bigint NOT NULL,
	written xid8 NOT NULL,
	bits bytea NOT NULL,
	PRIMARY KEY (id, chunk)
) WITH (fillfactor = 50);
ALTER TABLE bf_registry_chunk ALTER COLUMN bits SET STORAGE PLAIN;
SELECT pg_catalog.pg_extension_config_dump('bf_registry_chunk', '');
REVOKE ALL ON bf_registry_chunk FROM PUBLIC;

-- The hashes of the keys written while bf_rebuild(..., concurrently =>
-- true) rebuilds a trigger filter into another shape (a new capacity or
-- rate, a growing filter compacted): the rebuild adds them to the new
-- filter at its swap and deletes them.  Transient: unlogged (a crash,
-- which ends the rebuild too, empties it) and not dumped.
CREATE UNLOGGED TABLE bf_registry_pending (
	id bigint NOT NULL,
	hashes bytea NOT NULL
);
REVOKE ALL ON bf_registry_pending FROM PUBLIC;

-- the existing trigger filters, stored in chunks (run once, here)
CREATE FUNCTION bf_registry_to_chunks() RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
SELECT bf_registry_to_chunks();
DROP FUNCTION bf_registry_to_chunks();

-- helper of the bf_tracked view: the estimates, bytes and layers of the
-- filter of registry row id however it is stored; NULL where the user may
-- not read the column
CREATE FUNCTION bf_track_stats(id bigint, OUT estimated_cardinality float8,
							   OUT fill_ratio float8, OUT estimated_fpr float8,
							   OUT bytes bigint, OUT layers int)
	AS 'MODULE_PATHNAME', 'bf_track_stats_of' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_track_stats(bigint) IS
	'the estimates, bytes and layers of the tracked filter of registry row id (NULL where the column may not be read)';

-- how many layers the filter of a leaf index has (1 if it does not grow),
-- from its metapage; rights as for bf_index_info
CREATE FUNCTION bf_index_layer_count(index regclass) RETURNS int
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_index_layer_count(regclass) IS
	'the number of layers of the filter of a bloomfilter index (1 if it does not grow)';

-- bf_tracked: the bytes of an index-tracked column of a table of Citus's
-- are its shards' (the coordinator's index is an empty shell), and three
-- new columns say how far the filter has drifted from the table: its live
-- rows, the rate a filter rebuilt at the tracked size would have for them,
-- and whether a rebuild is due (the rate is over twice the target, and a
-- rebuild would bring it back: the excess is keys that are gone, not keys
-- past the capacity; or a growing index of a local table, or a growing
-- filter of the trigger method, has 4 layers or more, which a REINDEX or
-- an online bf_rebuild compacts into one).  The rest is as in 1.1, bf_index_info answering for
-- a table of Citus's from its shards.
CREATE OR REPLACE VIEW bf_tracked WITH (security_barrier) AS
	SELECT r.tbl, r.col, r.method, r.capacity, r.fpr AS target_fpr,
		   COALESCE(s.estimated_cardinality, i.estimated_cardinality) AS estimated_cardinality,
		   COALESCE(s.fill_ratio, i.fill_ratio) AS fill_ratio,
		   COALESCE(s.estimated_fpr, i.estimated_fpr) AS estimated_fpr,
		   CASE WHEN r.method = 'index' THEN i.saturated
				ELSE s.estimated_fpr > r.fpr END AS saturated,
		   CASE WHEN r.method = 'index' THEN i.bytes
				ELSE s.bytes END AS bytes,
		   CASE WHEN r.method = 'index' THEN NULL
				ELSE r.deleted_since_rebuild END AS deleted_since_rebuild,
		   r.stale IS NOT NULL AS stale,
		   r.stale AS stale_reason,
		   d.live_rows,
		   d.rebuilt_fpr,
		   (COALESCE(s.estimated_fpr, i.estimated_fpr) > 2 * r.fpr AND d.rebuilt_fpr <= r.fpr)
			 OR COALESCE(i.layers >= 4, false) OR COALESCE(s.layers >= 4, false) AS rebuild_due
	FROM bf_registry r
		 CROSS JOIN LATERAL (
			SELECT l.rows AS live_rows,
				   bf_expected_fpr(e.nbits, e.nhashes, l.rows) AS rebuilt_fpr
			FROM bf_live_rows(r.tbl) l(rows), bf_estimate(r.capacity, r.fpr) e) d
		 LEFT JOIN LATERAL bf_track_stats(r.id) s ON r.method = 'trigger'
		 LEFT JOIN LATERAL (
			SELECT pg_catalog.sum(x.estimated_cardinality) AS estimated_cardinality,
				   pg_catalog.sum(x.fill * x.nbits) / pg_catalog.sum(x.nbits) AS fill_ratio,
				   pg_catalog.max(x.estimated_fpr) AS estimated_fpr,
				   pg_catalog.bool_or(x.saturated) AS saturated,
				   pg_catalog.sum(bf_index_size(p.relid))::bigint AS bytes,
				   pg_catalog.max(CASE WHEN d.live_rows IS NOT NULL
								  THEN bf_index_layer_count(p.relid) END) AS layers
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

-- bf_rebuild learns concurrently: for the trigger method, writers wait only
-- for the final swap (the writes made during the read are taken from the
-- live filter's changed chunks).  Not STRICT: NULL capacity / fpr mean
-- "choose" / "keep", a NULL concurrently is false.
DROP FUNCTION bf_rebuild(regclass, name, bigint, float8);
CREATE FUNCTION bf_rebuild(tbl regclass, col name, capacity bigint DEFAULT NULL,
						   fpr float8 DEFAULT NULL, concurrently boolean DEFAULT false)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bf_rebuild(regclass, name, bigint, float8, boolean) IS
	'rebuild the filter of tbl.col from its current rows and swap it in (concurrently: writers wait only for the swap)';

-- The union form (docs/FORMAT.md section 10): filters of any sizes side by
-- side, read only.  bf_index_filter and bf_tracked_filter give it for a
-- table distributed by Citus (one layer per shard); bf_union_layered makes
-- one from any filters of one family.  NULL elements are skipped; an
-- array of none gives NULL.
CREATE FUNCTION bf_union_layered(VARIADIC filters bloomfilter[]) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_union_layered(bloomfilter[]) IS
	'a read-only filter that answers "probably" where any of the filters does, each keeping its own size';

-- Positions of the change sets of a distributed table's filter (a union
-- of its shards' filters, docs/FORMAT.md section 10.6): a pg_lsn cannot
-- hold one position per shard, so bf_index_changes and bf_tracked_changes
-- hand out a number naming a row of this table, which records the shards'
-- positions and where each shard's bytes are in the union.  Written by
-- those functions as the extension's owner; readable by no one else (the
-- positions say nothing a caller could not ask, but a forged row would
-- make a client skip changes).  Not a configuration table: a restored
-- database starts without positions, and its clients refresh in full.
-- Rows older than a day are deleted as new ones are made.
CREATE TABLE bf_dist_position (
	position bigserial PRIMARY KEY,
	indexrelid oid NOT NULL,
	made timestamptz NOT NULL DEFAULT pg_catalog.now(),
	shards bigint[] NOT NULL,
	placements bigint[] NOT NULL,
	lengths bigint[] NOT NULL,
	heads bigint[] NOT NULL,
	starts bigint[] NOT NULL,
	layers bigint[] NOT NULL,
	total bigint NOT NULL,
	header bytea NOT NULL,
	kind bigint NOT NULL,
	lsns bigint[] NOT NULL
);
CREATE INDEX bf_dist_position_made ON bf_dist_position (made);
REVOKE ALL ON bf_dist_position FROM PUBLIC;
REVOKE ALL ON SEQUENCE bf_dist_position_position_seq FROM PUBLIC;

-- The qual the planner hook of join pre-filters gives the scan of a join's
-- outer keys (bloomfilter.join_filter; README, "Join pre-filters"): as
-- bf_index_contains, but it never fails the query (an index it cannot
-- use, or may not read, makes it pass every key) and switches itself off
-- where it drops too little.  STRICT: a NULL key joins nothing.  VOLATILE
-- (it counts what it drops, and the planner hook adds it after planning
-- anyway); PARALLEL SAFE: in a worker of a transaction that wrote, the
-- index says "maybe" for keys the leader holds, which drops nothing.
CREATE FUNCTION bf_join_prefilter(index regclass, key anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_join_prefilter(regclass, anyelement) IS
	'false when the key is definitely not in the index (the join pre-filter''s qual); true where it cannot tell';

-- The qual the planner hook of join pre-filters gives the scan of a join's
-- outer keys where the inner key column has no bloomfilter index but is
-- tracked by the trigger method: as bf_might_contain, but it never fails
-- the query (a column untracked or stale meanwhile, or not readable by the
-- user the plan runs as, or under row-level security for them, makes it
-- pass every key) and switches itself off where it drops too little.
-- STRICT: a NULL key joins nothing.  VOLATILE (it counts what it drops);
-- PARALLEL SAFE, as bf_might_contain.
CREATE FUNCTION bf_join_tracked_prefilter(tbl regclass, col name, key anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_join_tracked_prefilter(regclass, name, anyelement) IS
	'false when the key is definitely not in the tracked filter of the column (a join pre-filter''s qual); true where it cannot tell';

-- The qual the planner hook of run-time join filters gives the scan of a
-- hash join's outer keys (bloomfilter.runtime_join_filter; README, "Join
-- pre-filters"): false when the key is not in the Bloom filter that the
-- join's "Bloom Build" node made of its inner keys.  The first argument is
-- that filter's number in the plan: the build node registers its filter
-- under it for the query's execution, so a call from SQL, or from a
-- parallel worker without the build node, finds none and passes every key
-- (and no SQL value stands for a pointer).  Not STRICT: a NULL key is
-- dropped only where the join's operator is strict.  VOLATILE (it counts
-- what it drops and switches itself off); PARALLEL SAFE, as said.
CREATE FUNCTION bf_runtime_filter(filter integer, key anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION bf_runtime_filter(integer, anyelement) IS
	'false when the key is definitely not among a hash join''s inner keys (the run-time join filter''s qual); true where it cannot tell';
