/* bloomfilter--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION bloomfilter" to load this file. \quit

--
-- The type.  Its bytes are those of docs/FORMAT.md; the text form is
-- "bloomfilter:1 layout=... bits=<base64>".
--
CREATE TYPE bloomfilter;

-- STABLE, not IMMUTABLE: a filter of a non-portable element type names the
-- type in its text form, and reading or printing that name consults the
-- catalogs (the same reason array_in is STABLE).
CREATE FUNCTION bloomfilter_in(cstring) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_out(bloomfilter) RETURNS cstring
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_recv(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_send(bloomfilter) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE bloomfilter (
	INPUT = bloomfilter_in,
	OUTPUT = bloomfilter_out,
	RECEIVE = bloomfilter_recv,
	SEND = bloomfilter_send,
	INTERNALLENGTH = VARIABLE,
	ALIGNMENT = int4,
	STORAGE = extended
);

COMMENT ON TYPE bloomfilter IS 'Bloom filter (blocked, XXH3-64; format in docs/FORMAT.md)';

-- casts to and from the portable binary form
CREATE FUNCTION bloomfilter_to_bytea(bloomfilter) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_from_bytea(bytea) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE CAST (bloomfilter AS bytea) WITH FUNCTION bloomfilter_to_bytea(bloomfilter);
CREATE CAST (bytea AS bloomfilter) WITH FUNCTION bloomfilter_from_bytea(bytea);

--
-- Constructors
--
CREATE FUNCTION bf_create(capacity bigint, fpr float8 DEFAULT 0.01, seed bigint DEFAULT 0)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_create(bigint, float8, bigint) IS
	'empty filter whose false-positive rate after capacity distinct inserts is at most fpr';

CREATE FUNCTION bf_create_sized(nbits bigint, nhashes int, seed bigint DEFAULT 0)
	RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_create_sized(bigint, int, bigint) IS
	'empty filter of nbits bits (rounded up to 512-bit blocks) setting nhashes bits per element';

CREATE FUNCTION bf_estimate(capacity bigint, fpr float8 DEFAULT 0.01,
							OUT nbits bigint, OUT nhashes int, OUT bytes bigint)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_estimate(bigint, float8) IS
	'the size bf_create(capacity, fpr) would allocate, without allocating it';

CREATE FUNCTION bf_clear(bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_clear(bloomfilter) IS 'same parameters, all bits off';

--
-- Adding.  Not STRICT: adding NULL returns the filter unchanged instead of
-- NULL, so UPDATE t SET f = bf_add(f, x) never wipes a filter; a NULL
-- filter stays NULL.
--
CREATE FUNCTION bf_add(bloomfilter, anyelement) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_add(bloomfilter, anyelement) IS 'the filter with the value added';

-- Not STRICT, as bf_add: a NULL array adds nothing; NULL elements are skipped.
CREATE FUNCTION bf_add_all(bloomfilter, anyarray) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
COMMENT ON FUNCTION bf_add_all(bloomfilter, anyarray) IS 'the filter with every non-NULL element added';

--
-- Testing: false = definitely never added, true = probably added.
--
CREATE FUNCTION bf_contains(bloomfilter, anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_contains(bloomfilter, anyelement) IS
	'false if the value was definitely never added, true if it probably was';

CREATE FUNCTION bf_contained_by(anyelement, bloomfilter) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_contained_by(anyelement, bloomfilter) IS 'bf_contains with the arguments swapped';

CREATE FUNCTION bf_contains_all(bloomfilter, anyarray) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_contains_all(bloomfilter, anyarray) IS
	'true if every element is probably in the filter (NULL elements as in = ALL)';

CREATE FUNCTION bf_contains_any(bloomfilter, anyarray) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_contains_any(bloomfilter, anyarray) IS
	'true if some element is probably in the filter (NULL elements as in = ANY)';

CREATE FUNCTION bf_hash(anyelement, seed bigint DEFAULT 0) RETURNS bigint
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_hash(anyelement, bigint) IS
	'the 64-bit XXH3 hash of the value''s canonical bytes that filters use';

CREATE OPERATOR @> (
	LEFTARG = bloomfilter, RIGHTARG = anyelement,
	FUNCTION = bf_contains, COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = anyelement, RIGHTARG = bloomfilter,
	FUNCTION = bf_contained_by, COMMUTATOR = @>
);
CREATE OPERATOR || (
	LEFTARG = bloomfilter, RIGHTARG = anyelement,
	FUNCTION = bf_add
);

--
-- text overloads of the polymorphic functions: an untyped literal
-- (bf_contains(f, 'alice')) then resolves to text instead of failing, and
-- bloomfilter || text is not ambiguous with the built-in anynonarray || text.
--
-- Not STRICT, as bf_add(bloomfilter, anyelement).
CREATE FUNCTION bf_add(bloomfilter, text) RETURNS bloomfilter
	AS 'MODULE_PATHNAME', 'bf_add' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION bf_contains(bloomfilter, text) RETURNS bool
	AS 'MODULE_PATHNAME', 'bf_contains' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bf_contained_by(text, bloomfilter) RETURNS bool
	AS 'MODULE_PATHNAME', 'bf_contained_by' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bf_hash(text, seed bigint DEFAULT 0) RETURNS bigint
	AS 'MODULE_PATHNAME', 'bf_hash' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE OPERATOR @> (
	LEFTARG = bloomfilter, RIGHTARG = text,
	FUNCTION = bf_contains, COMMUTATOR = <@
);
CREATE OPERATOR <@ (
	LEFTARG = text, RIGHTARG = bloomfilter,
	FUNCTION = bf_contained_by, COMMUTATOR = @>
);
CREATE OPERATOR || (
	LEFTARG = bloomfilter, RIGHTARG = text,
	FUNCTION = bf_add
);

-- ====================================================================
-- Aggregates, set algebra and introspection
--
-- Union and intersection need identical nbits, nhashes, seed, layout,
-- hash function, format version and element family (an empty filter
-- takes any family); otherwise they raise an error naming the first
-- difference.  README.md describes the functions and
-- docs/FORMAT.md section 6 the estimates.
-- ====================================================================

--
-- Set algebra
--
CREATE FUNCTION bf_union(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_union(bloomfilter, bloomfilter) IS
	'bitwise OR: contains everything either filter contains (capacity and target rate of the first)';

CREATE FUNCTION bf_intersect(bloomfilter, bloomfilter) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_intersect(bloomfilter, bloomfilter) IS
	'bitwise AND: may contain what both may contain; its cardinality estimate is biased upwards';

-- No COMMUTATOR: the result keeps the capacity and target rate of the left
-- operand, so a | b and b | a can differ in those header fields.
CREATE OPERATOR | (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bf_union
);
CREATE OPERATOR & (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bf_intersect
);

--
-- Equality: same parameters and same bits; the inserted counter does not
-- take part (two filters with the same bits answer every lookup alike).
--
CREATE FUNCTION bloomfilter_eq(bloomfilter, bloomfilter) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bloomfilter_ne(bloomfilter, bloomfilter) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bloomfilter_eq(bloomfilter, bloomfilter) IS
	'same parameters and same bits (the inserted counter is ignored)';
COMMENT ON FUNCTION bloomfilter_ne(bloomfilter, bloomfilter) IS
	'not bloomfilter_eq';

CREATE OPERATOR = (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloomfilter_eq,
	COMMUTATOR = =, NEGATOR = <>,
	RESTRICT = eqsel, JOIN = eqjoinsel
);
CREATE OPERATOR <> (
	LEFTARG = bloomfilter, RIGHTARG = bloomfilter,
	FUNCTION = bloomfilter_ne,
	COMMUTATOR = <>, NEGATOR = =,
	RESTRICT = neqsel, JOIN = neqjoinsel
);

--
-- Introspection
--
CREATE FUNCTION bf_cardinality(bloomfilter) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_cardinality(bloomfilter) IS
	'estimated number of distinct values added, from the fraction of bits set (Infinity when all are set)';

CREATE FUNCTION bf_fpr(bloomfilter) RETURNS float8
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_fpr(bloomfilter) IS
	'estimated false-positive rate of a lookup now, from the fill of each block';

CREATE FUNCTION bf_saturated(bloomfilter) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_saturated(bloomfilter) IS
	'true once bf_fpr exceeds the target rate (filters without a target: once over half the bits are set)';

-- STABLE, not IMMUTABLE: element_type names the type of a non-portable
-- filter, which consults the catalogs (as bloomfilter_out does).
CREATE FUNCTION bf_info(bloomfilter,
						OUT layout text, OUT nbits bigint, OUT nhashes int,
						OUT seed bigint, OUT bytes bigint, OUT capacity bigint,
						OUT target_fpr float8, OUT inserted bigint,
						OUT bits_set bigint, OUT fill_ratio float8,
						OUT estimated_cardinality float8, OUT estimated_fpr float8,
						OUT saturated bool, OUT element_type text, OUT portable bool)
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_info(bloomfilter) IS
	'parameters, fill and estimates of a filter in one row';

--
-- Aggregate support.  The transition states are `internal`; none of these
-- functions can be called from SQL directly.
--

-- serialize/deserialize of the states that are a filter (bf_agg with a
-- capacity, bf_union_agg, bf_intersect_agg): the FORMAT.md bytes
CREATE FUNCTION bf_agg_filter_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bf_agg_filter_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Not STRICT: the state is created on the first row even if its value is
-- NULL, so that an all-NULL input still gives a filter of the size asked.
CREATE FUNCTION bf_agg_sized_trans(internal, anyelement, bigint, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: zero rows (NULL state) give an empty filter of the size asked.
CREATE FUNCTION bf_agg_sized_final(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: a combine function of an internal state must handle NULLs.
CREATE FUNCTION bf_agg_sized_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE bf_agg(anyelement, capacity bigint, fpr float8) (
	SFUNC = bf_agg_sized_trans,
	STYPE = internal,
	FINALFUNC = bf_agg_sized_final,
	COMBINEFUNC = bf_agg_sized_combine,
	SERIALFUNC = bf_agg_filter_serialize,
	DESERIALFUNC = bf_agg_filter_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_agg(anyelement, bigint, float8) IS
	'filter of the given capacity and false-positive rate holding every non-NULL value';

-- Not STRICT: the state is internal; NULL values are skipped.
CREATE FUNCTION bf_agg_auto_trans(internal, anyelement) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: as above.
CREATE FUNCTION bf_agg_auto_trans(internal, anyelement, float8) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: zero rows (NULL state) give NULL.
CREATE FUNCTION bf_agg_auto_final(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: a combine function of an internal state must handle NULLs.
CREATE FUNCTION bf_agg_auto_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
CREATE FUNCTION bf_agg_auto_serialize(internal) RETURNS bytea
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION bf_agg_auto_deserialize(bytea, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE bf_agg(anyelement) (
	SFUNC = bf_agg_auto_trans,
	STYPE = internal,
	FINALFUNC = bf_agg_auto_final,
	COMBINEFUNC = bf_agg_auto_combine,
	SERIALFUNC = bf_agg_auto_serialize,
	DESERIALFUNC = bf_agg_auto_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_agg(anyelement) IS
	'filter sized for the distinct non-NULL values seen, at a false-positive rate of 0.01';

CREATE AGGREGATE bf_agg(anyelement, fpr float8) (
	SFUNC = bf_agg_auto_trans,
	STYPE = internal,
	FINALFUNC = bf_agg_auto_final,
	COMBINEFUNC = bf_agg_auto_combine,
	SERIALFUNC = bf_agg_auto_serialize,
	DESERIALFUNC = bf_agg_auto_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_agg(anyelement, float8) IS
	'filter sized for the distinct non-NULL values seen, at the given false-positive rate';

-- Not STRICT: the state is internal; NULL filters are skipped.
CREATE FUNCTION bf_union_agg_trans(internal, bloomfilter) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: no non-NULL input (NULL state) gives NULL.
CREATE FUNCTION bf_union_agg_final(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: a combine function of an internal state must handle NULLs.
CREATE FUNCTION bf_union_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE bf_union_agg(bloomfilter) (
	SFUNC = bf_union_agg_trans,
	STYPE = internal,
	FINALFUNC = bf_union_agg_final,
	COMBINEFUNC = bf_union_agg_combine,
	SERIALFUNC = bf_agg_filter_serialize,
	DESERIALFUNC = bf_agg_filter_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_union_agg(bloomfilter) IS
	'union (bitwise OR) of the non-NULL filters';

-- Not STRICT: the state is internal; NULL filters are skipped.
CREATE FUNCTION bf_intersect_agg_trans(internal, bloomfilter) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: no non-NULL input (NULL state) gives NULL.
CREATE FUNCTION bf_intersect_agg_final(internal) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;
-- Not STRICT: a combine function of an internal state must handle NULLs.
CREATE FUNCTION bf_intersect_agg_combine(internal, internal) RETURNS internal
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE CALLED ON NULL INPUT PARALLEL SAFE;

CREATE AGGREGATE bf_intersect_agg(bloomfilter) (
	SFUNC = bf_intersect_agg_trans,
	STYPE = internal,
	FINALFUNC = bf_intersect_agg_final,
	COMBINEFUNC = bf_intersect_agg_combine,
	SERIALFUNC = bf_agg_filter_serialize,
	DESERIALFUNC = bf_agg_filter_deserialize,
	PARALLEL = SAFE
);
COMMENT ON AGGREGATE bf_intersect_agg(bloomfilter) IS
	'intersection (bitwise AND) of the non-NULL filters';
--
-- Index access method (issue 5): CREATE INDEX ... USING bloomfilter (cols)
-- keeps a per-table filter in pages of the index, maintained on every
-- INSERT, COPY and UPDATE.  The index is never used for scans; it is read
-- by bf_index_contains / bf_index_filter / bf_index_info.
--
CREATE FUNCTION bloomfilter_am_handler(internal) RETURNS index_am_handler
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE ACCESS METHOD bloomfilter TYPE INDEX HANDLER bloomfilter_am_handler;
COMMENT ON ACCESS METHOD bloomfilter IS 'per-table Bloom filter kept in index pages';

-- One operator family per element family of docs/FORMAT.md section 3, with
-- the cross-type equalities, so that, e.g., an int8 index answers an int4
-- probe.  Strategy 1 is equality; keys are hashed by the extension's own
-- typed hashing, so there are no support functions.
CREATE OPERATOR FAMILY integer_ops USING bloomfilter;
CREATE OPERATOR CLASS int2_ops DEFAULT FOR TYPE int2 USING bloomfilter FAMILY integer_ops AS
	OPERATOR 1 = (int2, int2);
CREATE OPERATOR CLASS int4_ops DEFAULT FOR TYPE int4 USING bloomfilter FAMILY integer_ops AS
	OPERATOR 1 = (int4, int4);
CREATE OPERATOR CLASS int8_ops DEFAULT FOR TYPE int8 USING bloomfilter FAMILY integer_ops AS
	OPERATOR 1 = (int8, int8);
ALTER OPERATOR FAMILY integer_ops USING bloomfilter ADD
	OPERATOR 1 = (int2, int4), OPERATOR 1 = (int4, int2),
	OPERATOR 1 = (int2, int8), OPERATOR 1 = (int8, int2),
	OPERATOR 1 = (int4, int8), OPERATOR 1 = (int8, int4);

CREATE OPERATOR FAMILY float_ops USING bloomfilter;
CREATE OPERATOR CLASS float4_ops DEFAULT FOR TYPE float4 USING bloomfilter FAMILY float_ops AS
	OPERATOR 1 = (float4, float4);
CREATE OPERATOR CLASS float8_ops DEFAULT FOR TYPE float8 USING bloomfilter FAMILY float_ops AS
	OPERATOR 1 = (float8, float8);
ALTER OPERATOR FAMILY float_ops USING bloomfilter ADD
	OPERATOR 1 = (float4, float8), OPERATOR 1 = (float8, float4);

CREATE OPERATOR CLASS numeric_ops DEFAULT FOR TYPE numeric USING bloomfilter AS
	OPERATOR 1 = (numeric, numeric);

-- varchar uses text_ops (binary coercible); bpchar and name hash as text
CREATE OPERATOR FAMILY text_ops USING bloomfilter;
CREATE OPERATOR CLASS text_ops DEFAULT FOR TYPE text USING bloomfilter FAMILY text_ops AS
	OPERATOR 1 = (text, text);
CREATE OPERATOR CLASS bpchar_ops DEFAULT FOR TYPE bpchar USING bloomfilter FAMILY text_ops AS
	OPERATOR 1 = (bpchar, bpchar);
CREATE OPERATOR CLASS name_ops DEFAULT FOR TYPE name USING bloomfilter FAMILY text_ops AS
	OPERATOR 1 = (name, name);
ALTER OPERATOR FAMILY text_ops USING bloomfilter ADD
	OPERATOR 1 = (name, text), OPERATOR 1 = (text, name);

CREATE OPERATOR CLASS bytea_ops DEFAULT FOR TYPE bytea USING bloomfilter AS
	OPERATOR 1 = (bytea, bytea);
CREATE OPERATOR CLASS uuid_ops DEFAULT FOR TYPE uuid USING bloomfilter AS
	OPERATOR 1 = (uuid, uuid);
CREATE OPERATOR CLASS bool_ops DEFAULT FOR TYPE bool USING bloomfilter AS
	OPERATOR 1 = (bool, bool);
-- date, timestamp and timestamptz have different canonical encodings
-- (days vs microseconds, local vs UTC): one family each, no cross-type probes
CREATE OPERATOR CLASS date_ops DEFAULT FOR TYPE date USING bloomfilter AS
	OPERATOR 1 = (date, date);
CREATE OPERATOR CLASS timestamp_ops DEFAULT FOR TYPE timestamp USING bloomfilter AS
	OPERATOR 1 = (timestamp, timestamp);
CREATE OPERATOR CLASS timestamptz_ops DEFAULT FOR TYPE timestamptz USING bloomfilter AS
	OPERATOR 1 = (timestamptz, timestamptz);
-- enums hash by label
CREATE OPERATOR CLASS enum_ops DEFAULT FOR TYPE anyenum USING bloomfilter AS
	OPERATOR 1 = (anyenum, anyenum);

-- STABLE: the answer changes as rows are inserted and at REINDEX.
-- PARALLEL SAFE: only reads shared buffers.
CREATE FUNCTION bf_index_contains(index regclass, value anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_index_contains(regclass, anyelement) IS
	'false if no row of the index''s table has the key value (ROW(...) for several columns); true if some row probably has';
-- an untyped literal (bf_index_contains(i, 'a@b.c')) is taken as text
CREATE FUNCTION bf_index_contains(index regclass, value text) RETURNS bool
	AS 'MODULE_PATHNAME', 'bf_index_contains' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bf_index_filter(index regclass) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_index_filter(regclass) IS
	'the index''s filter as a bloomfilter value (bf_contains on it answers as bf_index_contains)';

CREATE FUNCTION bf_index_info(index regclass,
							  OUT capacity bigint, OUT fpr float8,
							  OUT estimated_cardinality float8, OUT fill float8,
							  OUT estimated_fpr float8, OUT saturated bool,
							  OUT nbits bigint, OUT nhashes int)
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_index_info(regclass) IS
	'parameters of a bloomfilter index and estimates from its set bits';

--
-- ======================================================================
-- Tracked filters (issue 4): per-table filters kept in sync by triggers.
-- The C side is src/bf_track.c (API, registry access, DDL upkeep) and
-- src/bf_trigger.c (the statement-level sync trigger and bf_sync_into).
-- ======================================================================
--

-- One row per tracked column.  tbl is a regclass so that pg_dump writes it
-- as a name and it re-resolves on restore and follows ALTER TABLE RENAME;
-- col is kept current on RENAME COLUMN by the DDL event trigger below.
-- id names the sync triggers (bf_sync_<id>_ins, ...) and is their argument.
CREATE TABLE bf_registry (
	id bigint NOT NULL,
	tbl regclass NOT NULL,
	col name NOT NULL,
	method text NOT NULL,
	capacity bigint NOT NULL CHECK (capacity > 0),
	fpr float8 NOT NULL CHECK (fpr > 0 AND fpr < 1),
	filter bloomfilter,
	deleted_since_rebuild bigint NOT NULL DEFAULT 0,
	CONSTRAINT bf_registry_pkey PRIMARY KEY (id),
	CONSTRAINT bf_registry_tbl_col_key UNIQUE (tbl, col)
);
-- no compression: half-full bit arrays do not compress, and an
-- uncompressed out-of-line value is cheap to recognise in the lookup cache
ALTER TABLE bf_registry ALTER COLUMN filter SET STORAGE EXTERNAL;
SELECT pg_catalog.pg_extension_config_dump('bf_registry', '');
REVOKE ALL ON bf_registry FROM PUBLIC;

-- The attribute number of each tracked column in this database, which is
-- how a RENAME COLUMN is followed.  Deliberately not dumped: attribute
-- numbers change across pg_dump/pg_restore, so a restored database
-- re-derives them from the (dumped) column names.
-- The column's type and collation are kept to notice ALTER COLUMN TYPE,
-- after which the filter is rebuilt (the hashing may have changed).
CREATE TABLE bf_registry_attnum (
	id bigint NOT NULL PRIMARY KEY,
	attnum int2 NOT NULL,
	atttypid oid,
	attcollation oid
);
REVOKE ALL ON bf_registry_attnum FROM PUBLIC;

-- Management functions: VOLATILE (they write), PARALLEL UNSAFE (they
-- create triggers and write the registry).  Not STRICT: a NULL capacity or
-- fpr means "choose one" (see README, "Tracked filters"); NULL tbl or col
-- is rejected with an error.
CREATE FUNCTION bf_track(tbl regclass, col name, capacity bigint DEFAULT NULL,
						 fpr float8 DEFAULT 0.01, method text DEFAULT 'index')
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bf_track(regclass, name, bigint, float8, text) IS
	'create the filter of tbl.col from its rows and keep it in sync';

CREATE FUNCTION bf_untrack(tbl regclass, col name) RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION bf_untrack(regclass, name) IS 'drop the filter of tbl.col and its triggers';

-- Not STRICT: NULL capacity / fpr mean "choose" / "keep".
CREATE FUNCTION bf_rebuild(tbl regclass, col name, capacity bigint DEFAULT NULL,
						   fpr float8 DEFAULT NULL)
	RETURNS void
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;
COMMENT ON FUNCTION bf_rebuild(regclass, name, bigint, float8) IS
	'rebuild the filter of tbl.col from its current rows and swap it in';

-- STABLE: the answer depends on the table's contents.  PARALLEL SAFE: it
-- only reads the registry with the query's snapshot.
CREATE FUNCTION bf_might_contain(tbl regclass, col name, value anyelement) RETURNS bool
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_might_contain(regclass, name, anyelement) IS
	'false if no row of tbl has col = value; true if one probably has';
-- an untyped literal resolves to text (as for bf_contains)
CREATE FUNCTION bf_might_contain(tbl regclass, col name, value text) RETURNS bool
	AS 'MODULE_PATHNAME', 'bf_might_contain' LANGUAGE C STABLE STRICT PARALLEL SAFE;

CREATE FUNCTION bf_tracked_filter(tbl regclass, col name) RETURNS bloomfilter
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION bf_tracked_filter(regclass, name) IS 'the current filter of tbl.col';

-- helper of the bf_tracked view: (estimated cardinality, fill ratio,
-- estimated false-positive rate) of a filter
CREATE FUNCTION bf_track_stats(bloomfilter, OUT estimated_cardinality float8,
							   OUT fill_ratio float8, OUT estimated_fpr float8)
	AS 'MODULE_PATHNAME' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- One row per tracked column the current user may read (the filter is as
-- sensitive as the column).  saturated: the estimated false-positive rate
-- exceeds the target, i.e. more distinct values were added than the
-- capacity (a bf_rebuild with a larger capacity fixes it).
-- the bloomfilter index holding the filter of a column tracked with method
-- 'index' (looked up, so that REINDEX and pg_restore are followed), or NULL
CREATE FUNCTION bf_track_index(tbl regclass, col name) RETURNS regclass
	AS 'MODULE_PATHNAME' LANGUAGE C STABLE STRICT PARALLEL SAFE;

-- For method 'index' the figures come from the index (summed over the
-- partitions' indexes of a partitioned table); deleted_since_rebuild is
-- NULL there: deletes are not counted, so that deleting transactions do
-- not queue on the registry row (see pg_stat_user_tables.n_tup_del).
CREATE VIEW bf_tracked AS
	SELECT r.tbl, r.col, r.method, r.capacity, r.fpr AS target_fpr,
		   COALESCE(s.estimated_cardinality, i.estimated_cardinality) AS estimated_cardinality,
		   COALESCE(s.fill_ratio, i.fill_ratio) AS fill_ratio,
		   COALESCE(s.estimated_fpr, i.estimated_fpr) AS estimated_fpr,
		   CASE WHEN r.method = 'index' THEN i.saturated
				ELSE s.estimated_fpr > r.fpr END AS saturated,
		   CASE WHEN r.method = 'index' THEN i.bytes
				ELSE pg_catalog.octet_length(r.filter::bytea)::bigint END AS bytes,
		   CASE WHEN r.method = 'index' THEN NULL
				ELSE r.deleted_since_rebuild END AS deleted_since_rebuild
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
GRANT SELECT ON bf_tracked TO PUBLIC;

-- the sync trigger bf_track installs (statement level, transition tables)
CREATE FUNCTION bf_track_sync() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- bf_sync_into(target_table, target_key_column, target_filter_column,
--              source_key_column, source_value_column [, capacity, fpr])
CREATE FUNCTION bf_sync_into() RETURNS trigger
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
COMMENT ON FUNCTION bf_sync_into() IS
	'statement trigger: add source_value_column of new rows to the filter in target_table.target_filter_column of the row whose target_key_column = source_key_column';

-- DDL upkeep: follows RENAME COLUMN, forgets dropped tables and columns,
-- rebuilds the filter after ALTER COLUMN TYPE,
-- installs the sync triggers on new or attached partitions (and adds the
-- rows of an attached one), removes them from detached ones.
CREATE FUNCTION bf_track_ddl() RETURNS event_trigger
	AS 'MODULE_PATHNAME' LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;
CREATE EVENT TRIGGER bf_track_ddl ON ddl_command_end
	WHEN TAG IN ('ALTER TABLE', 'CREATE TABLE', 'DROP TABLE', 'DROP SCHEMA', 'DROP OWNED')
	EXECUTE FUNCTION bf_track_ddl();
-- before an ALTER TABLE: derive attribute numbers a restore left out, so
-- that a first RENAME COLUMN after pg_restore is followed too
CREATE EVENT TRIGGER bf_track_ddl_start ON ddl_command_start
	WHEN TAG IN ('ALTER TABLE')
	EXECUTE FUNCTION bf_track_ddl();
