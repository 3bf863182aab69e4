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
