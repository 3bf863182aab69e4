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

#include <math.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/guc.h"

/*
 * Most distinct values the auto-sized bf_agg keeps: 2^24, i.e. 128 MiB of
 * hashes, at most 256 MiB with the merge buffer, per process.  The setting
 * bloomfilter.agg_max_distinct can only lower it (less memory per query).
 */
#define BF_AGG_MAX_DISTINCT ((size_t) 1 << 24)
#define BF_AGG_MIN_BUFFER	1024
#define BF_AGG_DEFAULT_FPR	0.01

static int	bf_agg_max_distinct = (int) BF_AGG_MAX_DISTINCT;

void
bf_agg_define_gucs(void)
{
	DefineCustomIntVariable("bloomfilter.agg_max_distinct",
							"Most distinct values bf_agg without a capacity keeps.",
							"It keeps 8 bytes per distinct value to size the filter; "
							"past this many it stops with an error.",
							&bf_agg_max_distinct,
							(int) BF_AGG_MAX_DISTINCT, BF_AGG_MIN_BUFFER,
							(int) BF_AGG_MAX_DISTINCT,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

#define ST_SORT bf_sort_uint64
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

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

typedef struct BfAggHashes
{
	double		fpr;
	uint8		family;			/* of the values; 0 until the first one */
	uint8		flags;
	uint32		detail;
	uint64	   *h;
	size_t		nsorted;		/* h[0 .. nsorted) sorted, distinct */
	size_t		nused;			/* h[nsorted .. nused) not yet merged */
	size_t		cap;
} BfAggHashes;

static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called as an aggregate support function", fname)));
	return aggcxt;
}

static BfTypeInfo *
agg_typeinfo(FunctionCallInfo fcinfo)
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
	MemoryContext aggcxt = agg_context(fcinfo, fname);
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

	(void) agg_context(fcinfo, "bf_agg_filter_serialize");
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

	(void) agg_context(fcinfo, "bf_agg_filter_deserialize");
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
	MemoryContext aggcxt = agg_context(fcinfo, "bf_agg_sized_trans");
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
		BfTypeInfo *ti = agg_typeinfo(fcinfo);
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
	(void) agg_context(fcinfo, "bf_agg_sized_final");
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
	MemoryContext aggcxt = agg_context(fcinfo, fname);
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
	(void) agg_context(fcinfo, "bf_union_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(filter_state_result((BfAggFilter *) PG_GETARG_POINTER(0), false));
}

/* Not STRICT: as bf_union_agg_final */
PG_FUNCTION_INFO_V1(bf_intersect_agg_final);
Datum
bf_intersect_agg_final(PG_FUNCTION_ARGS)
{
	(void) agg_context(fcinfo, "bf_intersect_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(filter_state_result((BfAggFilter *) PG_GETARG_POINTER(0), true));
}

/* ---- auto-sized bf_agg(value [, fpr]) ---- */

static void
too_many_distinct(size_t n)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bf_agg without a capacity saw more than %zu distinct values",
					(size_t) bf_agg_max_distinct),
			 errdetail("To size the filter for the values it saw, bf_agg keeps 8 bytes per distinct value; it stops at %zu values (%zu seen so far) rather than use more memory.",
					   (size_t) bf_agg_max_distinct, n),
			 errhint("Pass a capacity: bf_agg(col, capacity, fpr), e.g. with capacity = count(DISTINCT col).")));
}

static BfAggHashes *
hashes_new(MemoryContext cxt, double fpr, size_t cap)
{
	BfAggHashes *st = MemoryContextAllocZero(cxt, sizeof(BfAggHashes));

	st->fpr = fpr;
	st->cap = Max(cap, BF_AGG_MIN_BUFFER);
	st->h = MemoryContextAllocExtended(cxt, st->cap * sizeof(uint64), MCXT_ALLOC_HUGE);
	return st;
}

/*
 * Sort 64-bit hashes in place: MSD radix sort on one byte at a time
 * (American flag sort), which suits uniformly distributed keys, down to
 * buckets small enough for the comparison sort.
 */
static void
radix_sort_uint64(uint64 *a, size_t n, int shift)
{
	size_t		count[256];
	size_t		next[256];
	size_t		end[256];
	size_t		pos = 0;

	if (n <= 64 || shift < 0)
	{
		bf_sort_uint64(a, n);
		return;
	}
	CHECK_FOR_INTERRUPTS();		/* per bucket of at least 65 keys */
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		count[(a[i] >> shift) & 0xFF]++;
	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += count[b];
		end[b] = pos;
	}
	/* move every key to its bucket by following cycles */
	for (int b = 0; b < 256; b++)
	{
		while (next[b] < end[b])
		{
			uint64		v = a[next[b]];
			int			d = (int) ((v >> shift) & 0xFF);

			while (d != b)
			{
				uint64		t = a[next[d]];

				a[next[d]++] = v;
				v = t;
				d = (int) ((v >> shift) & 0xFF);
			}
			a[next[b]++] = v;
		}
	}
	pos = 0;
	for (int b = 0; b < 256; b++)
	{
		radix_sort_uint64(a + pos, count[b], shift - 8);
		pos += count[b];
	}
}

/* sort and deduplicate everything; the set is unchanged */
static void
hashes_compact(BfAggHashes *st)
{
	size_t		out;

	if (st->nused == st->nsorted)
		return;
	radix_sort_uint64(st->h, st->nused, 56);
	out = 0;
	for (size_t i = 0; i < st->nused; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (out == 0 || st->h[i] != st->h[out - 1])
			st->h[out++] = st->h[i];
	}
	st->nsorted = st->nused = out;
	if (out > (size_t) bf_agg_max_distinct)
		too_many_distinct(out);
}

/* make room for `extra` more hashes: merge first, grow if still short */
static void
hashes_reserve(BfAggHashes *st, size_t extra)
{
	size_t		want;

	if (st->cap - st->nused >= extra)
		return;
	hashes_compact(st);
	/* keep the tail at least as long as the sorted part: amortized sorting */
	want = Max(st->nused + extra, 2 * st->nsorted);
	if (want > st->cap)
	{
		want = Max(want, BF_AGG_MIN_BUFFER);
		st->h = repalloc_huge(st->h, want * sizeof(uint64));
		st->cap = want;
	}
}

static void
hashes_check_params(BfAggHashes *a, const BfAggHashes *b)
{
	if (a->fpr != b->fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg fpr must be the same for every row"),
				 errdetail("One part of the input asked for fpr %g, another for %g.",
						   a->fpr, b->fpr)));
	if (a->family == BF_FAMILY_NONE)
	{
		a->family = b->family;
		a->detail = b->detail;
		a->flags = b->flags;
	}
	else if (b->family != BF_FAMILY_NONE &&
			 (a->family != b->family || a->detail != b->detail))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine bloomfilters of different element families"),
				 errdetail("The first part holds values of family %s, the second of family %s.",
						   bf_family_text(a->family, a->detail),
						   bf_family_text(b->family, b->detail))));
}

/*
 * bf_agg(value) and bf_agg(value, fpr).  Not STRICT: the state is
 * internal, NULL values are skipped.
 */
PG_FUNCTION_INFO_V1(bf_agg_auto_trans);
Datum
bf_agg_auto_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "bf_agg_auto_trans");
	BfAggHashes *st = PG_ARGISNULL(0) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(0);
	double		fpr = BF_AGG_DEFAULT_FPR;
	BfTypeInfo *ti;
	Datum		value;

	if (PG_NARGS() > 2)
	{
		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bf_agg fpr must not be NULL")));
		fpr = PG_GETARG_FLOAT8(2);
	}
	if (st == NULL)
	{
		bf_check_fpr(fpr);
		st = hashes_new(aggcxt, fpr, BF_AGG_MIN_BUFFER);
	}
	else if (fpr != st->fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg fpr must be the same for every row"),
				 errdetail("The first row asked for fpr %g, a later one for %g.",
						   st->fpr, fpr)));

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);
	ti = agg_typeinfo(fcinfo);
	value = PG_GETARG_DATUM(1);
	if (st->family == BF_FAMILY_NONE)
	{
		/* take the family (and non-portable flag) as an empty filter would */
		uint8		scratch[BLOOM_HEADER_SIZE];
		BloomHeader hdr;

		if (ti->family == BF_FAMILY_RECORD)
			bf_record_prepare(ti, value);
		bloom_header_init(&hdr, 1, 1, 0, 0, 0.0);
		bf_check_family(&hdr, scratch, ti, true);
		st->family = hdr.family;
		st->detail = hdr.detail;
		st->flags = hdr.flags;
	}
	if (st->nused == st->cap)
		hashes_reserve(st, 1);
	/* seed 0: the seed of the filter the final function builds */
	st->h[st->nused++] = bf_hash_datum(ti, value, 0);
	PG_RETURN_POINTER(st);
}

/* Not STRICT: combine functions of internal states must handle NULL */
PG_FUNCTION_INFO_V1(bf_agg_auto_combine);
Datum
bf_agg_auto_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "bf_agg_auto_combine");
	BfAggHashes *s1 = PG_ARGISNULL(0) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(0);
	BfAggHashes *s2 = PG_ARGISNULL(1) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL)
	{
		s1 = hashes_new(aggcxt, s2->fpr, 2 * s2->nused);
		s1->family = s2->family;
		s1->detail = s2->detail;
		s1->flags = s2->flags;
	}
	else
		hashes_check_params(s1, s2);
	hashes_reserve(s1, s2->nused);
	memcpy(s1->h + s1->nused, s2->h, s2->nused * sizeof(uint64));
	s1->nused += s2->nused;
	hashes_compact(s1);
	PG_RETURN_POINTER(s1);
}

/*
 * Not STRICT: zero rows give NULL.  So do rows that are all NULL: there is
 * no count to size a filter for.
 */
PG_FUNCTION_INFO_V1(bf_agg_auto_final);
Datum
bf_agg_auto_final(PG_FUNCTION_ARGS)
{
	BfAggHashes *st;
	uint64		nblocks;
	int			k;
	struct varlena *vl;
	BloomHeader hdr;
	uint8	   *bits;

	(void) agg_context(fcinfo, "bf_agg_auto_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (BfAggHashes *) PG_GETARG_POINTER(0);
	hashes_compact(st);
	if (st->nsorted == 0)
		PG_RETURN_NULL();

	bf_size_or_error((int64) st->nsorted, st->fpr, &nblocks, &k);
	vl = bf_new(nblocks, k, 0, (int64) st->nsorted, st->fpr);
	bf_read_header(vl, &hdr);
	hdr.family = st->family;
	hdr.detail = st->detail;
	hdr.flags = st->flags;
	bits = BF_BITS(vl);
	/* sorted hashes visit the blocks in order: sequential memory access */
	for (size_t i = 0; i < st->nsorted; i++)
	{
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (bloom_set_hash(bits, nblocks, k, st->h[i]))
			hdr.inserted++;
	}
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	PG_RETURN_POINTER(vl);
}

/*
 * Serialized auto-sized state, host byte order (it never leaves the
 * server): "BFAH", family u8, flags u8, 2 zero bytes, detail u32, 4 zero
 * bytes, fpr f64, count u64, then count strictly increasing u64 hashes.
 */
#define BF_HASHES_MAGIC "BFAH"
#define BF_HASHES_HEADER 32

PG_FUNCTION_INFO_V1(bf_agg_auto_serialize);
Datum
bf_agg_auto_serialize(PG_FUNCTION_ARGS)
{
	BfAggHashes *st;
	size_t		size;
	bytea	   *out;
	char	   *p;
	uint64		count;

	(void) agg_context(fcinfo, "bf_agg_auto_serialize");
	st = (BfAggHashes *) PG_GETARG_POINTER(0);
	hashes_compact(st);
	count = st->nsorted;
	size = BF_HASHES_HEADER + count * sizeof(uint64);
	out = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(out, VARHDRSZ + size);
	p = VARDATA(out);
	memcpy(p, BF_HASHES_MAGIC, 4);
	p[4] = (char) st->family;
	p[5] = (char) st->flags;
	memcpy(p + 8, &st->detail, 4);
	memcpy(p + 16, &st->fpr, 8);
	memcpy(p + 24, &count, 8);
	memcpy(p + BF_HASHES_HEADER, st->h, count * sizeof(uint64));
	PG_RETURN_BYTEA_P(out);
}

static void
bad_hashes_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid bloomfilter aggregate state"),
			 errdetail_internal("%s", detail)));
}

PG_FUNCTION_INFO_V1(bf_agg_auto_deserialize);
Datum
bf_agg_auto_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	const char *p;
	size_t		len;
	uint64		count;
	BfAggHashes *st;
	static const char zeros[4] = {0, 0, 0, 0};

	(void) agg_context(fcinfo, "bf_agg_auto_deserialize");
	in = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(in);
	len = VARSIZE_ANY_EXHDR(in);
	if (len < BF_HASHES_HEADER || memcmp(p, BF_HASHES_MAGIC, 4) != 0)
		bad_hashes_state("The state is shorter than its header or has the wrong magic bytes.");
	if (memcmp(p + 6, zeros, 2) != 0 || memcmp(p + 12, zeros, 4) != 0)
		bad_hashes_state("Reserved bytes of the state are not zero.");
	memcpy(&count, p + 24, 8);
	if (count > BF_AGG_MAX_DISTINCT ||
		len != BF_HASHES_HEADER + count * sizeof(uint64))
		bad_hashes_state("The length of the state disagrees with its count of hashes.");

	st = hashes_new(CurrentMemoryContext, 0.0, (size_t) count);
	st->family = (uint8) p[4];
	st->flags = (uint8) p[5];
	memcpy(&st->detail, p + 8, 4);
	memcpy(&st->fpr, p + 16, 8);
	if (isnan(st->fpr) || st->fpr <= 0.0 || st->fpr >= 1.0)
		bad_hashes_state("The false-positive rate of the state is not between 0 and 1.");
	/* the family rules of a filter header, which the final function writes */
	if (bloom_family_check(st->family, st->flags, st->detail) != BLOOM_OK ||
		(st->family == BF_FAMILY_NONE && count != 0))
		bad_hashes_state("The element family of the state is invalid.");
	memcpy(st->h, p + BF_HASHES_HEADER, count * sizeof(uint64));
	for (size_t i = 1; i < count; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->h[i] <= st->h[i - 1])
			bad_hashes_state("The hashes of the state are not strictly increasing.");
	}
	st->nsorted = st->nused = (size_t) count;
	PG_RETURN_POINTER(st);
}
