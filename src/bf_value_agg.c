/*-------------------------------------------------------------------------
 *
 * bf_value_agg.c
 *	  Aggregates of the bloomfilter extension: bf_agg (sized and auto-sized),
 *	  bf_union_agg and bf_intersect_agg, with combine, serialize and
 *	  deserialize functions so that all of them run in parallel plans.
 *
 * Two kinds of transition state, both `internal` and allocated in the
 * aggregate memory context:
 *
 * BfAggFilter: the filter itself (FORMAT.md bytes), for bf_agg(v, capacity,
 * fpr), bf_union_agg and bf_intersect_agg.  Serialized as the FORMAT.md
 * bytes, so the deserializer is the format's own validation.
 *
 * BfAggHashes: for the auto-sized bf_agg(v [, fpr]), the distinct 64-bit
 * hashes (seed 0, the seed of the result) of the values seen, as a sorted
 * deduplicated prefix followed by an unsorted tail that is merged in when
 * the buffer is full.  About 8 bytes per distinct value (at most 16 while
 * the tail fills), capped at BF_AGG_MAX_DISTINCT.  The final function
 * sizes the filter for the number of distinct hashes and adds them.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"

/*
 * Hashes of a sized bf_agg are not applied at once: each row prefetches its
 * block and queues the hash, and a batch is applied when the queue is full
 * (and before the bits are read).  A filter larger than the CPU caches
 * then costs overlapping cache misses instead of one full miss per row.
 */
#define BF_AGG_BATCH 32

typedef struct BfAggFilter
{
	BloomHeader hdr;			/* authoritative; written to payload on output */
	uint8	   *payload;		/* FORMAT.md bytes; bits 64-byte aligned */
	bool		family_ok;		/* hdr has the family of the input type */
	bool		borrowed;		/* payload points into a serialized state */
	int			npending;
	uint64		pending[BF_AGG_BATCH];
} BfAggFilter;

/* the aggregate memory context; an error outside an aggregate */
MemoryContext
bf_agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called as an aggregate support function", fname)));
	return aggcxt;
}

/* how to hash the aggregated value (argument 1) */
BfTypeInfo *
bf_agg_typeinfo(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfTypeCache));
	return bf_typecache_lookup((BfTypeCache *) fcinfo->flinfo->fn_extra,
							   fcinfo, 1, false);
}

/* ---- filter states ---- */

/*
 * Filters from this size on get their bits on transparent huge pages where
 * the kernel offers them (madvise mode): every row touches a random block,
 * and with 4 KiB pages a filter past the TLB's reach (a few MiB) costs a
 * page walk per row on top of the cache miss.
 */
#define BF_HUGE_PAGE		((size_t) 2 * 1024 * 1024)
#define BF_HUGE_MIN_SIZE	(2 * BF_HUGE_PAGE)

static BfAggFilter *
filter_state_new(MemoryContext cxt, const BloomHeader *hdr, const uint8 *payload)
{
	BfAggFilter *st = MemoryContextAllocZero(cxt, sizeof(BfAggFilter));
	size_t		size = bloom_total_size(hdr->nblocks);
	size_t		bitsize = size - BLOOM_HEADER_SIZE;
	size_t		align = BLOOM_BLOCK_BYTES;
	uint8	   *alloc;
	uint8	   *bits;

	st->hdr = *hdr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (bitsize >= BF_HUGE_MIN_SIZE)
		align = BF_HUGE_PAGE;
#endif
	/* not zeroed here: the pages must not be touched before madvise */
	alloc = MemoryContextAllocExtended(cxt, size + align, MCXT_ALLOC_HUGE);
	/* one block = one cache line: align the bits (after the header) */
	bits = (uint8 *) TYPEALIGN(align, alloc + BLOOM_HEADER_SIZE);
	st->payload = bits - BLOOM_HEADER_SIZE;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	if (align == BF_HUGE_PAGE)
		(void) madvise(bits, TYPEALIGN_DOWN(BF_HUGE_PAGE, bitsize), MADV_HUGEPAGE);
#endif
	if (payload)
		memcpy(st->payload, payload, size);
	else
	{
		memset(st->payload, 0, size);
		bloom_header_write(st->payload, hdr);
	}
	return st;
}

/* apply the queued hashes */
static void
filter_state_flush(BfAggFilter *st)
{
	uint8	   *bits = st->payload + BLOOM_HEADER_SIZE;

	for (int i = 0; i < st->npending; i++)
		bloom_set_hash(bits, st->hdr.nblocks, st->hdr.nhashes, st->pending[i]);
	st->npending = 0;
}

/* the state as a bloomfilter datum in the current context; st unchanged */
static struct varlena *
filter_state_result(BfAggFilter *st, bool intersect)
{
	size_t		size = BF_DATUM_SIZE(st->hdr.nblocks);
	struct varlena *vl = palloc_extended(size, MCXT_ALLOC_HUGE);
	BloomHeader hdr = st->hdr;

	filter_state_flush(st);
	SET_VARSIZE(vl, size);
	memcpy(BF_PAYLOAD(vl), st->payload, bloom_total_size(hdr.nblocks));
	bf_finish_combined(&hdr, BF_PAYLOAD(vl), intersect);
	return vl;
}

static Datum
filter_state_combine(FunctionCallInfo fcinfo, bool intersect, const char *fname)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, fname);
	BfAggFilter *s1 = PG_ARGISNULL(0) ? NULL : (BfAggFilter *) PG_GETARG_POINTER(0);
	BfAggFilter *s2 = PG_ARGISNULL(1) ? NULL : (BfAggFilter *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	filter_state_flush(s2);
	if (s1 != NULL)
		filter_state_flush(s1);
	if (s1 == NULL)
	{
		/* s2 may live in a short-lived context: copy */
		if (!s2->borrowed)
			bloom_header_write(s2->payload, &s2->hdr);
		PG_RETURN_POINTER(filter_state_new(aggcxt, &s2->hdr, s2->payload));
	}
	bf_combine(&s1->hdr, s1->payload + BLOOM_HEADER_SIZE,
			   &s2->hdr, s2->payload + BLOOM_HEADER_SIZE, intersect);
	PG_RETURN_POINTER(s1);
}

PG_FUNCTION_INFO_V1(bf_agg_filter_serialize);
Datum
bf_agg_filter_serialize(PG_FUNCTION_ARGS)
{
	BfAggFilter *st;
	size_t		size;
	bytea	   *out;

	(void) bf_agg_context(fcinfo, "bf_agg_filter_serialize");
	st = (BfAggFilter *) PG_GETARG_POINTER(0);
	filter_state_flush(st);
	size = bloom_total_size(st->hdr.nblocks);
	out = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(out, VARHDRSZ + size);
	bloom_header_write(st->payload, &st->hdr);
	memcpy(VARDATA(out), st->payload, size);
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(bf_agg_filter_deserialize);
Datum
bf_agg_filter_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	BloomHeader hdr;
	BloomError	err;
	BfAggFilter *st;

	(void) bf_agg_context(fcinfo, "bf_agg_filter_deserialize");
	in = PG_GETARG_BYTEA_PP(0);
	err = bloom_header_read((const uint8 *) VARDATA_ANY(in), VARSIZE_ANY_EXHDR(in), &hdr);
	if (err != BLOOM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("invalid bloomfilter aggregate state"),
				 errdetail_internal("%s", bloom_error_message(err))));
	/*
	 * No copy: the state only lives for the combine call that follows, as
	 * long as the serialized value, and the combine function copies it or
	 * only reads it.  Large filters would otherwise be copied twice.
	 */
	st = palloc0(sizeof(BfAggFilter));
	st->hdr = hdr;
	st->payload = (uint8 *) VARDATA_ANY(in);
	st->borrowed = true;
	PG_RETURN_POINTER(st);
}

/* ---- bf_agg(value, capacity, fpr) ---- */

/*
 * Not STRICT: the state is created on the first row even when its value is
 * NULL, and NULL values are skipped.
 */
PG_FUNCTION_INFO_V1(bf_agg_sized_trans);
Datum
bf_agg_sized_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_sized_trans");
	BfAggFilter *st = PG_ARGISNULL(0) ? NULL : (BfAggFilter *) PG_GETARG_POINTER(0);
	int64		capacity;
	double		fpr;

	if (PG_ARGISNULL(2) || PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bf_agg capacity and fpr must not be NULL")));
	capacity = PG_GETARG_INT64(2);
	fpr = PG_GETARG_FLOAT8(3);

	if (st == NULL)
	{
		uint64		nblocks;
		int			nhashes;
		BloomHeader hdr;

		bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
		bloom_header_init(&hdr, nblocks, nhashes, 0, capacity, fpr);
		st = filter_state_new(aggcxt, &hdr, NULL);
	}
	else if (capacity != st->hdr.capacity || fpr != st->hdr.fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg capacity and fpr must be the same for every row"),
				 errdetail("The first row asked for capacity " INT64_FORMAT " and fpr %g, a later one for " INT64_FORMAT " and %g.",
						   st->hdr.capacity, st->hdr.fpr, capacity, fpr)));

	if (!PG_ARGISNULL(1))
	{
		BfTypeInfo *ti = bf_agg_typeinfo(fcinfo);
		Datum		value = PG_GETARG_DATUM(1);
		uint64		h;

		if (ti->family == BF_FAMILY_RECORD)
			bf_record_prepare(ti, value);
		if (!st->family_ok || ti->family == BF_FAMILY_RECORD)
		{
			bf_check_family(&st->hdr, st->payload, ti, true);
			st->family_ok = true;
		}
		h = bf_hash_datum(ti, value, st->hdr.seed);
		bloom_prefetch_hash(st->payload + BLOOM_HEADER_SIZE, st->hdr.nblocks, h);
		st->pending[st->npending++] = h;
		if (st->npending == BF_AGG_BATCH)
			filter_state_flush(st);
	}
	PG_RETURN_POINTER(st);
}

/*
 * With zero input rows there is no state, and the final function cannot
 * see the aggregate's arguments as values.  It can see them as
 * expressions: when capacity and fpr are constants (after constant
 * folding) they are read from the Aggref.  In a parallel plan the
 * finalizing Aggref's argument is a Var pointing at the partial
 * aggregate's output, so Vars are followed down the plan's target lists.
 */
static Expr *
follow_outer_vars(FunctionCallInfo fcinfo, Expr *e)
{
	Plan	   *plan;

	if (fcinfo->context == NULL || !IsA(fcinfo->context, AggState))
		return e;
	plan = ((AggState *) fcinfo->context)->ss.ps.plan;
	for (int depth = 0; depth < 16 && e != NULL && IsA(e, Var); depth++)
	{
		Var		   *var = (Var *) e;
		Plan	   *child = plan ? outerPlan(plan) : NULL;
		TargetEntry *te;

		if (var->varno != OUTER_VAR || child == NULL ||
			var->varattno < 1 || var->varattno > list_length(child->targetlist))
			return NULL;
		te = list_nth_node(TargetEntry, child->targetlist, var->varattno - 1);
		e = te->expr;
		plan = child;
	}
	return e;
}

static bool
constant_size_args(FunctionCallInfo fcinfo, int64 *capacity, double *fpr)
{
	Aggref	   *agg = AggGetAggref(fcinfo);
	List	   *args;
	TargetEntry *tc,
			   *tf;
	Const	   *cc,
			   *cf;

	if (agg == NULL)
		return false;
	args = agg->args;
	if (list_length(args) == 1)
	{
		Expr	   *e = follow_outer_vars(fcinfo, linitial_node(TargetEntry, args)->expr);

		if (e == NULL || !IsA(e, Aggref))
			return false;
		args = ((Aggref *) e)->args;
	}
	if (list_length(args) < 3)
		return false;
	tc = list_nth_node(TargetEntry, args, 1);
	tf = list_nth_node(TargetEntry, args, 2);
	if (!IsA(tc->expr, Const) || !IsA(tf->expr, Const))
		return false;
	cc = (Const *) tc->expr;
	cf = (Const *) tf->expr;
	if (cc->constisnull || cf->constisnull ||
		cc->consttype != INT8OID || cf->consttype != FLOAT8OID)
		return false;
	*capacity = DatumGetInt64(cc->constvalue);
	*fpr = DatumGetFloat8(cf->constvalue);
	return true;
}

/* Not STRICT: zero rows (NULL state) give an empty filter of the size asked */
PG_FUNCTION_INFO_V1(bf_agg_sized_final);
Datum
bf_agg_sized_final(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_agg_sized_final");
	if (PG_ARGISNULL(0))
	{
		int64		capacity;
		double		fpr;
		uint64		nblocks;
		int			nhashes;

		if (!constant_size_args(fcinfo, &capacity, &fpr))
			PG_RETURN_NULL();
		bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
		PG_RETURN_POINTER(bf_new(nblocks, nhashes, 0, capacity, fpr));
	}
	PG_RETURN_POINTER(filter_state_result((BfAggFilter *) PG_GETARG_POINTER(0), false));
}

/* Not STRICT: combine functions of internal states must handle NULL */
PG_FUNCTION_INFO_V1(bf_agg_sized_combine);
Datum
bf_agg_sized_combine(PG_FUNCTION_ARGS)
{
	return filter_state_combine(fcinfo, false, "bf_agg_sized_combine");
}

/* ---- bf_union_agg / bf_intersect_agg ---- */

static Datum
setop_trans(FunctionCallInfo fcinfo, bool intersect, const char *fname)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, fname);
	BfAggFilter *st = PG_ARGISNULL(0) ? NULL : (BfAggFilter *) PG_GETARG_POINTER(0);
	BfFilter	f;

	if (PG_ARGISNULL(1))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(st);
	}
	f = bf_fetch(PG_GETARG_DATUM(1));
	if (st == NULL)
		st = filter_state_new(aggcxt, &f.hdr, BF_PAYLOAD(f.vl));
	else
		bf_combine(&st->hdr, st->payload + BLOOM_HEADER_SIZE,
				   &f.hdr, BF_BITS(f.vl), intersect);
	if ((Pointer) f.vl != DatumGetPointer(PG_GETARG_DATUM(1)))
		pfree(f.vl);
	PG_RETURN_POINTER(st);
}

/* Not STRICT: the state is internal; NULL filters are skipped */
PG_FUNCTION_INFO_V1(bf_union_agg_trans);
Datum
bf_union_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, false, "bf_union_agg_trans");
}

/* Not STRICT: as bf_union_agg_trans */
PG_FUNCTION_INFO_V1(bf_intersect_agg_trans);
Datum
bf_intersect_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, true, "bf_intersect_agg_trans");
}

/* Not STRICT: combine functions of internal states must handle NULL */
PG_FUNCTION_INFO_V1(bf_union_agg_combine);
Datum
bf_union_agg_combine(PG_FUNCTION_ARGS)
{
	return filter_state_combine(fcinfo, false, "bf_union_agg_combine");
}

/* Not STRICT: as bf_union_agg_combine */
PG_FUNCTION_INFO_V1(bf_intersect_agg_combine);
Datum
bf_intersect_agg_combine(PG_FUNCTION_ARGS)
{
	return filter_state_combine(fcinfo, true, "bf_intersect_agg_combine");
}

/* Not STRICT: no non-NULL input gives NULL */
PG_FUNCTION_INFO_V1(bf_union_agg_final);
Datum
bf_union_agg_final(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_union_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(filter_state_result((BfAggFilter *) PG_GETARG_POINTER(0), false));
}

/* Not STRICT: as bf_union_agg_final */
PG_FUNCTION_INFO_V1(bf_intersect_agg_final);
Datum
bf_intersect_agg_final(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_intersect_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(filter_state_result((BfAggFilter *) PG_GETARG_POINTER(0), true));
}
