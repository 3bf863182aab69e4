/*-------------------------------------------------------------------------
 *
 * bf_funcs.c
 *	  SQL-callable constructors, bf_add / bf_contains and friends for the
 *	  bloomfilter type, and the per-call-site cache that keeps a large
 *	  TOASTed filter detoasted for the whole query.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

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

PG_MODULE_MAGIC;

/* settings of every area, defined when the library loads */
void
_PG_init(void)
{
	bf_agg_define_gucs();
	bf_filter_cache_define_gucs();
	MarkGUCPrefixReserved("bloomfilter");
}

/* ---- helpers ---- */

void
bf_report_error(BloomError err, int sqlstate)
{
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("invalid bloomfilter value"),
			 errdetail_internal("%s", bloom_error_message(err))));
}

/* validate the header of a detoasted plain filter */
void
bf_read_header(struct varlena *vl, BloomHeader *hdr)
{
	BloomError	err = bloom_header_read(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), hdr);

	if (err != BLOOM_OK)
	{
		if (bloom_is_growing(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
			bf_grow_refuse();
		bf_report_error(err, ERRCODE_DATA_CORRUPTED);
	}
}

/*
 * Validate a detoasted filter of either form.  A growing filter's hdr is
 * its first layer's with family BF_FAMILY_GROWING.
 */
void
bf_read_any_header(struct varlena *vl, BloomHeader *hdr)
{
	if (bloom_is_growing(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
	{
		BloomGrowHeader gh;

		bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
		*hdr = gh.first;
		hdr->family = BF_FAMILY_GROWING;
		return;
	}
	bf_read_header(vl, hdr);
}

BfFilter
bf_fetch_any(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM(d);
	bf_read_any_header(f.vl, &f.hdr);
	return f;
}

BfFilter
bf_fetch(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM(d);
	bf_read_header(f.vl, &f.hdr);
	return f;
}

struct varlena *
bf_new(uint64 nblocks, int nhashes, int64 seed, int64 capacity, double fpr)
{
	size_t		size = BF_DATUM_SIZE(nblocks);
	struct varlena *vl = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	BloomHeader hdr;

	SET_VARSIZE(vl, size);
	bloom_header_init(&hdr, nblocks, nhashes, seed, capacity, fpr);
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	return vl;
}

static void
too_large(double bytes, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bloomfilter too large"),
			 errdetail("%s needs %.0f bytes of bits; the largest bloomfilter has %llu bytes of bits (%llu bits).",
					   what, bytes,
					   (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BYTES),
					   (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BITS)),
			 errhint("Ask for a larger false-positive rate or a smaller capacity, or split the keys over several filters.")));
}

/* a false-positive rate must be in (0, 1) */
void
bf_check_fpr(double fpr)
{
	if (isnan(fpr) || fpr <= 0.0 || fpr >= 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate must be between 0 and 1"),
				 errdetail("The rate given was %g.", fpr),
				 errhint("Give a rate such as 0.01 for 1 %%.")));
}

static void
check_capacity_fpr(int64 capacity, double fpr)
{
	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive"),
				 errdetail("The capacity given was " INT64_FORMAT ".", capacity)));
	bf_check_fpr(fpr);
}

/* size for (capacity, fpr), erroring out when it cannot be built */
void
bf_size_or_error(int64 capacity, double fpr, uint64 *nblocks, int *nhashes)
{
	bool		ok;

	check_capacity_fpr(capacity, fpr);
	ok = bloom_size_for((double) capacity, fpr, nblocks, nhashes);
	if (!ok || *nblocks > BLOOM_MAX_BLOCKS)
	{
		char		what[128];

		snprintf(what, sizeof(what),
				 "A filter for " INT64_FORMAT " elements at a false-positive rate of %g",
				 capacity, fpr);
		/* !ok: even 2^62 blocks would not do */
		too_large(ok ? (double) *nblocks * BLOOM_BLOCK_BYTES : 0x1p68, what);
	}
}

/*
 * Per-call-site state in fn_extra: how to hash the value argument, and the
 * last filter argument detoasted, keyed by its TOAST pointer (or by its raw
 * bytes when it was compressed inline), so that a scalar subquery handing
 * the same large filter to every row detoasts it once per query.
 */
typedef enum BfCacheKind
{
	BF_CACHE_NONE,
	BF_CACHE_EXTERNAL,
	BF_CACHE_RAW
} BfCacheKind;

typedef struct BfCallCache
{
	BfTypeCache types;			/* hashing of the value argument */

	BfCacheKind kind;

	/*
	 * The cached stored filter holds integers and this call site passes
	 * bigints: the commonest lookup, taken by bf_contains before any other
	 * check.  Set by bf_contains, cleared whenever the cached filter changes.
	 */
	bool		int8_fast;
	varatt_external ext;		/* BF_CACHE_EXTERNAL key */
	struct varlena *rawkey;		/* BF_CACHE_RAW key */
	void	   *alloc;			/* holds vl, 64-byte aligned bits */
	BfCachedFilter *shared;		/* or the backend's cache holds it */
	MemoryContextCallback release;	/* gives shared back with fn_mcxt */
	BfFilter	filter;

	/* the last plain (uncompressed, in-line) filter argument */
	struct varlena *plain_ptr;
	uint32		plain_size;
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

/*
 * The type info for argument argno of this call site (for arrays, of their
 * elements), built on first use.  A call site's argument type and collation
 * never change, so later calls return at once.
 */
BfTypeInfo *
bf_typecache_lookup(BfTypeCache *tc, FunctionCallInfo fcinfo, int argno, bool element)
{
	Oid			argtype;
	Oid			typid;

	if (likely(tc->valid))
		return &tc->ti;

	argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(argtype))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not determine the type of the value to hash")));
	typid = argtype;
	if (element)
	{
		typid = get_element_type(getBaseType(argtype));
		if (!OidIsValid(typid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("argument is not an array")));
	}
	bf_typeinfo_init(&tc->ti, typid, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	tc->argtype = argtype;
	tc->collation = PG_GET_COLLATION();
	tc->valid = true;
	return &tc->ti;
}

static inline BfTypeInfo *
get_typeinfo(FunctionCallInfo fcinfo, int argno, bool element)
{
	BfCallCache *cache = get_cache(fcinfo);

	if (likely(cache->types.valid))
		return &cache->types.ti;
	return bf_typecache_lookup(&cache->types, fcinfo, argno, element);
}

/* give the backend cache's entry back (also when fn_mcxt goes away) */
static void
cache_release_shared(void *arg)
{
	BfCallCache *cache = (BfCallCache *) arg;

	if (cache->shared)
		bf_filter_cache_release(cache->shared);
	cache->shared = NULL;
}

/* forget the cached filter: free our copy, give back the backend cache's */
static void
cache_forget(BfCallCache *cache)
{
	if (cache->alloc)
		pfree(cache->alloc);
	cache->alloc = NULL;
	cache_release_shared(cache);
	cache->kind = BF_CACHE_NONE;
}

/* copy a detoasted filter to fn_mcxt with its bit array 64-byte aligned */
static void
cache_store(BfCallCache *cache, MemoryContext mcxt, struct varlena *vl)
{
	cache_forget(cache);
	cache->filter.vl = bf_copy_aligned(mcxt, vl, &cache->alloc);
}

/* get_filter_cached when the argument is not the stored value of last time */
static pg_noinline const BfFilter *
get_filter_slow(BfCallCache *cache, FunctionCallInfo fcinfo, struct varlena *raw)
{
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	struct varlena *vl;

	cache->int8_fast = false;
	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		varatt_external ext;
		BfCachedFilter *shared;

		/* not the pointer of last time: get_filter_cached checked that */
		VARATT_EXTERNAL_GET_POINTER(ext, raw);
		shared = bf_filter_cache_get(raw);
		if (shared != NULL)
		{
			cache_forget(cache);
			if (cache->release.func == NULL)
			{
				cache->release.func = cache_release_shared;
				cache->release.arg = cache;
				MemoryContextRegisterResetCallback(mcxt, &cache->release);
			}
			cache->shared = shared;
			cache->filter = *bf_cached_filter(shared);
		}
		else
		{
			vl = detoast_attr(raw);
			cache_store(cache, mcxt, vl);
			pfree(vl);
			bf_read_any_header(cache->filter.vl, &cache->filter.hdr);
		}
		cache->ext = ext;
		cache->kind = BF_CACHE_EXTERNAL;
		return &cache->filter;
	}
	if (VARATT_IS_COMPRESSED(raw))
	{
		size_t		rawsize = VARSIZE_ANY(raw);

		if (cache->kind == BF_CACHE_RAW && VARSIZE_ANY(cache->rawkey) == rawsize &&
			memcmp(cache->rawkey, raw, rawsize) == 0)
			return &cache->filter;
		vl = detoast_attr(raw);
		cache_store(cache, mcxt, vl);
		pfree(vl);
		bf_read_any_header(cache->filter.vl, &cache->filter.hdr);
		if (cache->rawkey)
			pfree(cache->rawkey);
		cache->rawkey = MemoryContextAlloc(mcxt, rawsize);
		memcpy(cache->rawkey, raw, rawsize);
		cache->kind = BF_CACHE_RAW;
		return &cache->filter;
	}
	/*
	 * Plain in memory: no copy needed.  When the same datum comes again (a
	 * scalar subquery's value), skip re-decoding a header whose bytes have
	 * not changed; the check is on the bytes, so it cannot go stale.
	 */
	if (!VARATT_IS_EXTENDED(raw))
	{
		if (!(cache->plain_ptr == raw && VARSIZE(raw) == cache->plain_size &&
			  memcmp(VARDATA(raw), cache->plain_header, BLOOM_HEADER_SIZE) == 0))
		{
			cache->plain = bf_fetch_any(PointerGetDatum(raw));
			cache->plain_ptr = raw;
			cache->plain_size = VARSIZE(raw);
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
same_stored_filter(const BfCallCache *cache, const struct varlena *raw)
{
	return cache->kind == BF_CACHE_EXTERNAL && VARATT_IS_EXTERNAL_ONDISK(raw) &&
		memcmp(VARDATA_EXTERNAL(raw), &cache->ext, sizeof(varatt_external)) == 0;
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
	uint64		nblocks;
	int			nhashes;

	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
	PG_RETURN_POINTER(bf_new(nblocks, nhashes, seed, capacity, fpr));
}

PG_FUNCTION_INFO_V1(bf_create_sized);
Datum
bf_create_sized(PG_FUNCTION_ARGS)
{
	int64		nbits = PG_GETARG_INT64(0);
	int32		nhashes = PG_GETARG_INT32(1);
	int64		seed = PG_GETARG_INT64(2);
	uint64		nblocks;

	if (nbits <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter size must be positive"),
				 errdetail("The number of bits given was " INT64_FORMAT ".", nbits)));
	if (nhashes < 1 || nhashes > BLOOM_MAX_HASHES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter nhashes must be between 1 and %d", BLOOM_MAX_HASHES),
				 errdetail("The number given was %d.", nhashes)));
	nblocks = ((uint64) nbits + BLOOM_BLOCK_BITS - 1) / BLOOM_BLOCK_BITS;
	if (nblocks > BLOOM_MAX_BLOCKS)
	{
		char		what[96];

		snprintf(what, sizeof(what), "A filter of " INT64_FORMAT " bits", nbits);
		too_large((double) nblocks * BLOOM_BLOCK_BYTES, what);
	}
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

PG_FUNCTION_INFO_V1(bf_clear);
Datum
bf_clear(PG_FUNCTION_ARGS)
{
	struct varlena *vl = PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0));
	BloomHeader hdr;

	if (bloom_is_growing(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
		PG_RETURN_POINTER(bf_grow_clear(vl));
	bf_read_header(vl, &hdr);
	hdr.inserted = 0;
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	memset(BF_BITS(vl), 0, hdr.nblocks * BLOOM_BLOCK_BYTES);
	PG_RETURN_POINTER(vl);
}

/* ---- adding ---- */

void
bf_store_inserted(BfFilter *f)
{
	bloom_store_u64(BF_PAYLOAD(f->vl) + BLOOM_INSERTED_OFFSET, f->hdr.inserted);
}

/*
 * A growing filter (f's family BF_FAMILY_GROWING) is added to by a
 * BfGrowAdder; f->vl then changes when it grows, and bf_adder_finish
 * reads f's header again.
 */
void
bf_adder_init(BfAdder *a, BfFilter *f, BfTypeInfo *ti)
{
	a->f = f;
	a->ti = ti;
	a->n = 0;
	a->checked = false;
	a->touched = NULL;
	a->grow = NULL;
	a->inserted_before = f->hdr.inserted;
	if (f->hdr.family == BF_FAMILY_GROWING)
	{
		a->grow = palloc(sizeof(BfGrowAdder));
		bf_grow_adder_init(a->grow, f->vl, ti);
	}
}

static void
adder_flush(BfAdder *a)
{
	BfFilter   *f = a->f;

	/* every BF_ADDER_BATCH values: loops over many values stay cancellable */
	CHECK_FOR_INTERRUPTS();

	for (int i = 0; i < a->n; i++)
		if (bloom_set_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes, a->hashes[i]))
		{
			BLOOM_COUNT_INSERT(&f->hdr);
			if (a->touched)
				a->touched[(BLOOM_HEADER_SIZE + BLOOM_BLOCK_BYTES *
							bloom_block_of(a->hashes[i], f->hdr.nblocks)) / BF_CHANGE_CHUNK] = true;
		}
	a->n = 0;
}

void
bf_adder_add(BfAdder *a, Datum value)
{
	BfFilter   *f = a->f;
	uint64		h;

	if (a->grow)
	{
		a->grow->touched = a->touched;
		bf_grow_adder_add(a->grow, value);
		return;
	}
	/* a record's row type may vary per value: check each one */
	if (a->ti->family == BF_FAMILY_RECORD || !a->checked)
	{
		bf_prepare_value(a->ti, value);
		bf_check_family(&f->hdr, BF_PAYLOAD(f->vl), a->ti, true);
		a->checked = true;
	}
	h = bf_hash_datum(a->ti, value, f->hdr.seed);
	bloom_prefetch_hash(BF_BITS(f->vl), f->hdr.nblocks, h);
	a->hashes[a->n++] = h;
	if (a->n == BF_ADDER_BATCH)
		adder_flush(a);
}

/* set the pending bits and store the "inserted" count in the header */
void
bf_adder_finish(BfAdder *a)
{
	if (a->grow)
	{
		a->grow->touched = a->touched;
		a->f->vl = bf_grow_adder_finish(a->grow);
		bf_read_any_header(a->f->vl, &a->f->hdr);
		return;
	}
	adder_flush(a);
	bf_store_inserted(a->f);
}

/* did the adds set any bit?  (after bf_adder_finish) */
bool
bf_adder_changed(const BfAdder *a)
{
	if (a->grow)
		return a->grow->changed > 0;
	return a->f->hdr.inserted != a->inserted_before;
}

/* did a growing filter get a new layer (so its length changed)? */
bool
bf_adder_grew(const BfAdder *a)
{
	return a->grow != NULL && a->grow->gh.nlayers != a->grow->start_layers;
}

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
	array_iter_setup(&it, arr);
	bf_adder_init(&adder, &f, ti);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = array_iter_next(&it, &isnull, i, ti->typlen,
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

/*
 * test_value when the filter's family is not the value's: an empty
 * filter, a growing one, or a mismatch (an error, or a compatible family)
 */
static pg_noinline bool
test_value_other(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	if (f->hdr.family == BF_FAMILY_NONE)
		return false;			/* nothing was ever added */
	if (f->hdr.family == BF_FAMILY_GROWING)
		return bf_grow_test(f, ti, value);
	bf_check_family((BloomHeader *) &f->hdr, NULL, ti, false);
	return bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes,
						   bf_hash_datum(ti, value, f->hdr.seed));
}

/* always inline: a call per probe would cost as much as the probe */
static pg_attribute_always_inline bool
test_value(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	uint64		h;

	bf_prepare_value(ti, value);
	if (unlikely(f->hdr.family != ti->family || f->hdr.detail != ti->detail))
		return test_value_other(f, ti, value);
	h = bf_hash_datum(ti, value, f->hdr.seed);
	return bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes, h);
}

/* bf_contains past its fast path: any key type, any filter */
static pg_noinline Datum
contains_general(FunctionCallInfo fcinfo)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 1, false);
	const BfFilter *f = get_filter_cached(fcinfo, 0);
	BfCallCache *cache = (BfCallCache *) fcinfo->flinfo->fn_extra;

	/* INTEGER, not GROWING: the shortcut reads one plain bit array */
	cache->int8_fast = f == &cache->filter && f->hdr.family == BF_FAMILY_INTEGER &&
		ti->typid == INT8OID;
	PG_RETURN_BOOL(test_value(f, ti, PG_GETARG_DATUM(1)));
}

/*
 * bf_contains(filter, value).  A bigint key against the stored filter of
 * the last call (a scan, or a scalar subquery per statement) is answered
 * before any other check: hashing and one block test, within three times
 * the instructions of PostgreSQL's own hashint8 (docs/PERFORMANCE.md).
 */
/*
 * Test a value against a filter of either form, as bf_contains does (its
 * family checked: a mismatch is an error), for the tracked filters' code.
 */
bool
bf_filter_test(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	return test_value(f, ti, value);
}

PG_FUNCTION_INFO_V1(bf_contains);
Datum
bf_contains(PG_FUNCTION_ARGS)
{
	BfCallCache *cache = (BfCallCache *) fcinfo->flinfo->fn_extra;

	if (likely(cache != NULL && cache->int8_fast) &&
		same_stored_filter(cache, (struct varlena *) PG_GETARG_POINTER(0)))
	{
		const BfFilter *f = &cache->filter;

		PG_RETURN_BOOL(bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes,
									   bloom_hash_int64(PG_GETARG_INT64(1), f->hdr.seed)));
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

	PG_RETURN_BOOL(test_value(f, ti, PG_GETARG_DATUM(0)));
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

	array_iter_setup(&it, arr);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = array_iter_next(&it, &isnull, i, ti->typlen,
											ti->typbyval, ti->typalign);

		if ((i & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull)
		{
			sawnull = true;
			continue;
		}
		if (test_value(f, ti, value) != want_all)
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
