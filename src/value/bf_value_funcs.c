/*-------------------------------------------------------------------------
 *
 * bf_value_funcs.c
 *	  SQL-callable constructors, bf_add / bf_contains and friends for the
 *	  bloomfilter type, and the per-call-site state that holds the filter
 *	  argument of last time (detoasted in the backend's cache, bf_cache.c).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "bf_cache.h"

#include <math.h>

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
/* PostgreSQL's own macros in arrayaccess.h trip -Wsign-compare */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "utils/arrayaccess.h"
#pragma GCC diagnostic pop
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"


/*
 * Per-call-site state in fn_extra: how to hash the value argument, and the
 * last filter argument, so that a scalar subquery handing the same filter
 * to every row is detoasted and validated once per query.  A stored or
 * compressed value is held in the backend's cache (bf_cache.c), keyed by
 * its TOAST pointer or by its compressed bytes; a plain one is used in
 * place.
 */
typedef enum BfCacheKind
{
	BF_CACHE_NONE,
	BF_CACHE_EXTERNAL,
	BF_CACHE_RAW
} BfCacheKind;

/* which filter of last time bf_contains's shortcut may read */
typedef enum BfFastKind
{
	BF_FAST_NONE,
	BF_FAST_STORED,				/* filter, while the argument is that stored value */
	BF_FAST_PLAIN				/* plain, while the argument is that datum */
} BfFastKind;

typedef struct BfCallCache
{
	BfTypeCache types;			/* hashing of the value argument */

	BfCacheKind kind;

	/*
	 * The filter of last time (the stored one, or the plain datum) holds
	 * integers and this call site passes bigints: the commonest lookup,
	 * taken by bf_contains before any other check.  Set by bf_contains,
	 * cleared whenever the cached filter changes.
	 */
	BfFastKind	int8_fast;
	varatt_external ext;		/* BF_CACHE_EXTERNAL key */
	struct varlena *rawkey;		/* BF_CACHE_RAW key */
	BfCachedFilter *held;		/* the cache's entry, given back with fn_mcxt */
	MemoryContextCallback release;
	BfFilter	filter;

	/* the last plain (uncompressed, in-line) filter argument */
	struct varlena *plain_ptr;
	uint32		plain_word;		/* its varlena header word: plain, and its size */
	uint8		plain_header[BLOOM_HEADER_SIZE];
	BfFilter	plain;
} BfCallCache;

static BfCallCache *
get_cache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfCallCache));
	return (BfCallCache *) fcinfo->flinfo->fn_extra;
}

static inline BfTypeInfo *
get_typeinfo(FunctionCallInfo fcinfo, int argno, bool element)
{
	BfCallCache *cache = get_cache(fcinfo);

	if (likely(cache->types.valid))
		return &cache->types.ti;
	return bf_typecache_lookup(&cache->types, fcinfo, argno, element);
}

/* give the cache's entry back (also when fn_mcxt goes away) */
static void
call_cache_release(void *arg)
{
	BfCallCache *cache = (BfCallCache *) arg;

	if (cache->held)
		bf_filter_cache_release(cache->held);
	cache->held = NULL;
	cache->kind = BF_CACHE_NONE;
}

/* hold cf as this call site's filter, giving back the one held before */
static void
call_cache_hold(BfCallCache *cache, MemoryContext mcxt, BfCachedFilter *cf,
				BfCacheKind kind)
{
	call_cache_release(cache);
	if (cache->release.func == NULL)
	{
		cache->release.func = call_cache_release;
		cache->release.arg = cache;
		MemoryContextRegisterResetCallback(mcxt, &cache->release);
	}
	cache->held = cf;
	cache->filter = *bf_cached_filter(cf);
	cache->kind = kind;
}

/*
 * Is raw the plain (in-line, uncompressed) datum of last time?  The
 * pointer alone is not enough: another value can come at the same address.
 * Its bits are read in place, so they may differ; what decides a test must
 * not: the size (so nblocks), and bytes 8 to 23 of the header
 * (docs/FORMAT.md section 1: family, flags, nhashes, family detail, seed).
 * Bytes 0 to 7 (magic, version, layout, hash function) are the same in
 * every plain filter this release makes or reads, and a growing filter's
 * bytes 8 to 15 (growth 2 to 16, then zeros) never equal a plain filter's,
 * whose nhashes (bytes 10 and 11) is at least 1.
 */
static inline bool
same_plain_filter(const BfCallCache *cache, const struct varlena *raw)
{
	const uint8 *a = (const uint8 *) VARDATA(raw);
	const uint8 *b = cache->plain_header;

	uint32		word;

	/* the varlena header word: the same one is the same tag and size */
	memcpy(&word, raw, sizeof(word));
	return cache->plain_ptr == raw && word == cache->plain_word &&
		((bloom_load_u64(a + 8) ^ bloom_load_u64(b + 8)) |
		 (bloom_load_u64(a + 16) ^ bloom_load_u64(b + 16))) == 0;
}

/* get_filter_cached when the argument is not the stored value of last time */
static pg_noinline const BfFilter *
get_filter_slow(BfCallCache *cache, FunctionCallInfo fcinfo, struct varlena *raw)
{
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;

	cache->int8_fast = BF_FAST_NONE;
	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		/* not the pointer of last time: get_filter_cached checked that */
		call_cache_hold(cache, mcxt, bf_filter_cache_get(raw, -1), BF_CACHE_EXTERNAL);
		VARATT_EXTERNAL_GET_POINTER(cache->ext, raw);
		return &cache->filter;
	}
	if (VARATT_IS_COMPRESSED(raw))
	{
		size_t		rawsize = VARSIZE_ANY(raw);
		struct varlena *vl;

		if (cache->kind == BF_CACHE_RAW && VARSIZE_ANY(cache->rawkey) == rawsize &&
			memcmp(cache->rawkey, raw, rawsize) == 0)
			return &cache->filter;
		vl = detoast_attr(raw);
		call_cache_hold(cache, mcxt, bf_filter_cache_hold(vl), BF_CACHE_RAW);
		pfree(vl);
		if (cache->rawkey)
			pfree(cache->rawkey);
		cache->rawkey = MemoryContextAlloc(mcxt, rawsize);
		memcpy(cache->rawkey, raw, rawsize);
		return &cache->filter;
	}

	/*
	 * Plain in memory: no copy needed.  When the same datum comes again (a
	 * scalar subquery's value), skip re-decoding a header whose bytes have
	 * not changed; the check is on the bytes, so it cannot go stale.
	 */
	if (!VARATT_IS_EXTENDED(raw))
	{
		if (!same_plain_filter(cache, raw))
		{
			cache->plain = bf_fetch_any(PointerGetDatum(raw));
			cache->plain_ptr = raw;
			memcpy(&cache->plain_word, raw, sizeof(cache->plain_word));
			memcpy(cache->plain_header, VARDATA(raw), BLOOM_HEADER_SIZE);
		}
		return &cache->plain;
	}
	/* a short header or an indirect pointer: small or rare, no caching */
	cache->plain_ptr = NULL;
	cache->plain = bf_fetch_any(PointerGetDatum(raw));
	return &cache->plain;
}

/*
 * Is raw the stored value the cache holds?  Within one query the pointer
 * names one value: the value is visible to the query's snapshot, so its
 * OID cannot be reused meanwhile.  Compared in place (a local copy would
 * cost a copy and a stack-protector check per call).
 */
static inline bool
same_stored_pointer(const BfCallCache *cache, const struct varlena *raw)
{
	return VARATT_IS_EXTERNAL_ONDISK(raw) &&
		memcmp(VARDATA_EXTERNAL(raw), &cache->ext, sizeof(varatt_external)) == 0;
}

static inline bool
same_stored_filter(const BfCallCache *cache, const struct varlena *raw)
{
	return cache->kind == BF_CACHE_EXTERNAL && same_stored_pointer(cache, raw);
}

/*
 * The filter argument argno, detoasted and validated, served from the
 * cache when it is the same stored value as last time.  The hot case, a
 * TOASTed filter handed to every row by a scalar subquery, is inline.
 */
static inline const BfFilter *
get_filter_cached(FunctionCallInfo fcinfo, int argno)
{
	BfCallCache *cache = get_cache(fcinfo);
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);

	if (same_stored_filter(cache, raw))
		return &cache->filter;
	return get_filter_slow(cache, fcinfo, raw);
}

/* ---- constructors ---- */

PG_FUNCTION_INFO_V1(bf_create);
Datum
bf_create(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	int64		seed = PG_GETARG_INT64(2);

	PG_RETURN_POINTER(bf_new_for(capacity, fpr, seed));
}

PG_FUNCTION_INFO_V1(bf_create_sized);
Datum
bf_create_sized(PG_FUNCTION_ARGS)
{
	int64		nbits = PG_GETARG_INT64(0);
	int32		nhashes = PG_GETARG_INT32(1);
	int64		seed = PG_GETARG_INT64(2);
	uint64		nblocks = bf_blocks_or_error(nbits, nhashes);

	PG_RETURN_POINTER(bf_new(nblocks, nhashes, seed, 0, 0.0));
}

PG_FUNCTION_INFO_V1(bf_estimate);
Datum
bf_estimate(PG_FUNCTION_ARGS)
{
	int64		capacity = PG_GETARG_INT64(0);
	double		fpr = PG_GETARG_FLOAT8(1);
	uint64		nblocks;
	int			nhashes;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Int64GetDatum((int64) (nblocks * BLOOM_BLOCK_BITS));
	values[1] = Int32GetDatum(nhashes);
	values[2] = Int64GetDatum((int64) BF_DATUM_SIZE(nblocks));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Keys per block past which a block is all but full: the rate is 1 to
 * within 1e-9 for every k, and the model's sum would only cost time.
 */
#define BF_MODEL_MAX_KEYS_PER_BLOCK 4096.0

/*
 * bf_expected_fpr(nbits, nhashes, keys): the rate of a filter of that size
 * holding that many distinct keys (docs/FORMAT.md section 6.2), e.g. of
 * one rebuilt for the keys a table holds now.
 */
PG_FUNCTION_INFO_V1(bf_expected_fpr);
Datum
bf_expected_fpr(PG_FUNCTION_ARGS)
{
	int32		nhashes = PG_GETARG_INT32(1);
	uint64		nblocks = bf_blocks_or_error(PG_GETARG_INT64(0), nhashes);
	double		keys = PG_GETARG_FLOAT8(2);
	double		lambda;

	if (!(keys >= 0) || isinf(keys))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be a finite number of at least 0")));
	lambda = keys / (double) nblocks;
	if (lambda > BF_MODEL_MAX_KEYS_PER_BLOCK)
		PG_RETURN_FLOAT8(1.0);
	PG_RETURN_FLOAT8(bloom_model_fpr(lambda, nhashes));
}

PG_FUNCTION_INFO_V1(bf_clear);
Datum
bf_clear(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(bf_filter_clear(PG_GETARG_DATUM(0)));
}

/* ---- adding ---- */

/*
 * bf_add(filter, value): not STRICT, because adding NULL must return the
 * filter unchanged rather than NULL (UPDATE ... SET f = bf_add(f, x) must
 * not wipe the filter).  A NULL filter stays NULL.
 */
PG_FUNCTION_INFO_V1(bf_add);
Datum
bf_add(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti;
	BfFilter	f;
	BfAdder		adder;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	ti = get_typeinfo(fcinfo, 1, false);
	f.vl = PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0));
	bf_read_any_header(f.vl, &f.hdr);
	/* either form: the adder of a growing filter moves f.vl as it grows */
	bf_adder_init(&adder, &f, ti);
	bf_adder_add(&adder, PG_GETARG_DATUM(1));
	bf_adder_finish(&adder);
	PG_RETURN_POINTER(f.vl);
}

/*
 * Arrays are read in place with array_iter, so that an expanded array (a
 * PL/pgSQL variable) is not first flattened into a copy: that copy of a
 * large array is work no interrupt can stop.
 */
static inline int
array_nitems(AnyArrayType *arr)
{
	return ArrayGetNItems(AARR_NDIM(arr), AARR_DIMS(arr));
}

/* bf_add_all(filter, array): not STRICT, for the same reason as bf_add */
PG_FUNCTION_INFO_V1(bf_add_all);
Datum
bf_add_all(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti;
	BfFilter	f;
	AnyArrayType *arr;
	array_iter	it;
	int			n;
	BfAdder		adder;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	ti = get_typeinfo(fcinfo, 1, true);
	arr = PG_GETARG_ANY_ARRAY_P(1);
	f.vl = PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0));
	bf_read_any_header(f.vl, &f.hdr);

	/* either form: the adder of a growing filter moves f.vl as it grows */
	n = array_nitems(arr);
	bf_array_iter_setup(&it, arr, ti->typlen, ti->typbyval, ti->typalign);
	bf_adder_init(&adder, &f, ti);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = bf_array_iter_next(&it, &isnull, i, ti->typlen,
											   ti->typbyval, ti->typalign);

		if (!isnull)
			bf_adder_add(&adder, value);
		else if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();	/* the adder checks between batches */
	}
	bf_adder_finish(&adder);
	PG_RETURN_POINTER(f.vl);
}

/* ---- testing ---- */

/* bf_contains past its fast path: any key type, any filter */
static pg_noinline Datum
contains_general(FunctionCallInfo fcinfo)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 1, false);
	const BfFilter *f = get_filter_cached(fcinfo, 0);
	BfCallCache *cache = (BfCallCache *) fcinfo->flinfo->fn_extra;

	/*
	 * INTEGER, not GROWING: the shortcut reads one plain bit array, the
	 * stored filter's or the plain datum's of this call (not a short or
	 * indirect one, which is not kept: plain_ptr NULL)
	 */
	cache->int8_fast = BF_FAST_NONE;
	if (f->hdr.family == BF_FAMILY_INTEGER && ti->typid == INT8OID)
	{
		if (f == &cache->filter && cache->kind == BF_CACHE_EXTERNAL)
			cache->int8_fast = BF_FAST_STORED;
		else if (cache->plain_ptr != NULL)
			cache->int8_fast = BF_FAST_PLAIN;
	}
	PG_RETURN_BOOL(bf_filter_test(f, ti, PG_GETARG_DATUM(1)));
}

/* the shortcut's test: a bigint key against a plain filter of integers */
static inline bool
int8_test(const BfFilter *f, int64 key)
{
	return bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes,
						   bloom_hash_int64(key, f->hdr.seed));
}

/*
 * bf_contains past the stored filter's shortcut: the same shortcut for the
 * plain datum of last time (a small filter from a subquery or a
 * parameter; its vl is the argument, read in place), else the general
 * path.  Out of line, so that bf_contains stays a test and a tail call.
 */
static pg_noinline Datum
contains_plain(FunctionCallInfo fcinfo, BfCallCache *cache)
{
	if (cache->int8_fast == BF_FAST_PLAIN &&
		same_plain_filter(cache, (struct varlena *) PG_GETARG_POINTER(0)))
		PG_RETURN_BOOL(int8_test(&cache->plain, PG_GETARG_INT64(1)));
	return contains_general(fcinfo);
}

/*
 * bf_contains(filter, value).  A bigint key against the stored filter of
 * the last call (a scan, or a scalar subquery per statement) is answered
 * before any other check: hashing and one block test, within three times
 * the instructions of PostgreSQL's own hashint8 (docs/PERFORMANCE.md).
 */
PG_FUNCTION_INFO_V1(bf_contains);
Datum
bf_contains(PG_FUNCTION_ARGS)
{
	BfCallCache *cache = (BfCallCache *) fcinfo->flinfo->fn_extra;

	/* BF_FAST_STORED is set only while the held filter is a stored one */
	if (likely(cache != NULL))
	{
		if (likely(cache->int8_fast == BF_FAST_STORED) &&
			same_stored_pointer(cache, (struct varlena *) PG_GETARG_POINTER(0)))
			PG_RETURN_BOOL(int8_test(&cache->filter, PG_GETARG_INT64(1)));
		return contains_plain(fcinfo, cache);
	}
	return contains_general(fcinfo);
}

/* value <@ filter */
PG_FUNCTION_INFO_V1(bf_contained_by);
Datum
bf_contained_by(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 0, false);
	const BfFilter *f = get_filter_cached(fcinfo, 1);

	PG_RETURN_BOOL(bf_filter_test(f, ti, PG_GETARG_DATUM(0)));
}

/*
 * Batch tests follow SQL's = ALL / = ANY: a NULL element makes the answer
 * NULL unless a non-NULL element already decides it.
 */
static Datum
contains_array(FunctionCallInfo fcinfo, bool want_all)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 1, true);
	const BfFilter *f = get_filter_cached(fcinfo, 0);
	AnyArrayType *arr = PG_GETARG_ANY_ARRAY_P(1);
	int			n = array_nitems(arr);
	array_iter	it;
	bool		sawnull = false;

	bf_array_iter_setup(&it, arr, ti->typlen, ti->typbyval, ti->typalign);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = bf_array_iter_next(&it, &isnull, i, ti->typlen,
											   ti->typbyval, ti->typalign);

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull)
		{
			sawnull = true;
			continue;
		}
		if (bf_filter_test(f, ti, value) != want_all)
			PG_RETURN_BOOL(!want_all);
	}
	if (sawnull)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(want_all);
}

PG_FUNCTION_INFO_V1(bf_contains_all);
Datum
bf_contains_all(PG_FUNCTION_ARGS)
{
	return contains_array(fcinfo, true);
}

PG_FUNCTION_INFO_V1(bf_contains_any);
Datum
bf_contains_any(PG_FUNCTION_ARGS)
{
	return contains_array(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bf_hash);
Datum
bf_hash(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 0, false);
	Datum		value = PG_GETARG_DATUM(0);

	bf_prepare_value(ti, value);
	PG_RETURN_INT64((int64) bf_hash_datum(ti, value, PG_GETARG_INT64(1)));
}
