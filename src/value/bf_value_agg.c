/*-------------------------------------------------------------------------
 *
 * bf_value_agg.c
 *	  The aggregates whose transition state is a filter: bf_agg(value,
 *	  capacity, fpr), bf_union_agg and bf_intersect_agg; and what every
 *	  aggregate state of the extension uses.
 *
 * The state (BfAggFilter) holds the filter's header and its FORMAT.md
 * bytes with 64-byte aligned bits, and queues the hashes of bf_agg rows.
 * In the 1.2 catalog its SQL type is bloomfilter: between rows it is a
 * read-write expanded object in a child of the aggregate context, which
 * nodeAgg keeps without copying (see bf_agg_states); flattening it
 * applies the queued hashes and writes the
 * FORMAT.md bytes, so a partial state crosses a parallel plan's Gather,
 * or Citus's text form, as an ordinary bloomfilter.  A flat value
 * reaching these functions (from a worker, or from SQL: the functions are
 * callable) is validated as any bloomfilter argument and never modified:
 * it is copied into a new expanded state.  The 1.0 and 1.1 entry points
 * (bf_value_agg_internal.c) keep the same state as `internal`.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_agg.h"

#ifdef __linux__
#include <sys/mman.h>
#endif

#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
#include "utils/memutils.h"

/* ---- what every aggregate state uses ---- */

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

/*
 * The memory context of a new expanded state.  In an aggregate, one child
 * of the aggregate context holds the states of all its groups: nodeAgg
 * (and Citus's transition wrapper) adopt a read-write object whose
 * context's parent is the aggregate context, and a context per group
 * would make hash aggregation quadratic (before each new group it sums
 * the memory of the aggregate context's children).  Sharing is safe as
 * nodeAgg deletes a state only when the transition function returns
 * another datum for it, which ours never do: they return the read-write
 * state they were given.  The context goes with the aggregate context
 * (a new group, a rescan), and is found again by its name.  Outside an
 * aggregate, the state gets a context of its own under the caller's.
 */
static const char bf_agg_states_name[] = "bloomfilter aggregate states";

MemoryContext
bf_agg_states(FunctionCallInfo fcinfo)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		return AllocSetContextCreate(CurrentMemoryContext,
									 "bloomfilter aggregate state",
									 ALLOCSET_SMALL_SIZES);
	for (MemoryContext c = aggcxt->firstchild; c != NULL; c = c->nextchild)
		if (c->name == bf_agg_states_name)
			return c;
	/* the Internal form: the name is a static array, not a literal */
	return AllocSetContextCreateInternal(aggcxt, bf_agg_states_name,
										 ALLOCSET_DEFAULT_SIZES);
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

/* ---- the filter state ---- */

/*
 * Filters from this size on get their bits on transparent huge pages where
 * the kernel offers them (madvise mode): every row touches a random block,
 * and with 4 KiB pages a filter past the TLB's reach (a few MiB) costs a
 * page walk per row on top of the cache miss.
 */
#define BF_HUGE_PAGE		((size_t) 2 * 1024 * 1024)
#define BF_HUGE_MIN_SIZE	(2 * BF_HUGE_PAGE)

/* a state as an expanded object: the header first, as expandeddatum.h asks */
typedef struct BfAggFilterObject
{
	ExpandedObjectHeader eoh;
	BfAggFilter st;
} BfAggFilterObject;

static Size filter_flat_size(ExpandedObjectHeader *eoh);
static void filter_flatten(ExpandedObjectHeader *eoh, void *result, Size size);

static const ExpandedObjectMethods filter_methods = {
	filter_flat_size,
	filter_flatten
};

/* fill st with a copy of payload (NULL: an empty filter), bits in cxt */
static void
filter_state_init(BfAggFilter *st, MemoryContext cxt, const BloomHeader *hdr,
				  const uint8 *payload)
{
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
		memset(st->payload, 0, size);
	/* hdr, not the source's header bytes, which may be stale */
	bloom_header_write(st->payload, hdr);
}

/*
 * A new state holding a copy of payload (NULL: an empty filter of hdr), in
 * cxt: an expanded object (cxt from bf_agg_states), or an `internal` state.
 */
BfAggFilter *
bf_aggf_make(MemoryContext cxt, const BloomHeader *hdr, const uint8 *payload,
			 bool expanded)
{
	BfAggFilterObject *obj;

	if (!expanded)
	{
		BfAggFilter *st = MemoryContextAllocZero(cxt, sizeof(BfAggFilter));

		filter_state_init(st, cxt, hdr, payload);
		return st;
	}
	obj = MemoryContextAllocZero(cxt, sizeof(BfAggFilterObject));
	EOH_init_header(&obj->eoh, &filter_methods, cxt);
	obj->st.eoh = &obj->eoh;
	filter_state_init(&obj->st, cxt, hdr, payload);
	return &obj->st;
}

/* apply the queued hashes */
void
bf_aggf_flush(BfAggFilter *st)
{
	uint8	   *bits = st->payload + BLOOM_HEADER_SIZE;

	for (int i = 0; i < st->npending; i++)
		bloom_set_hash(bits, st->hdr.nblocks, st->hdr.nhashes, st->pending[i]);
	st->npending = 0;
}

/* a read-only state over a validated flat filter (no copy) */
void
bf_aggf_view(BfAggFilter *view, const BfFilter *f)
{
	memset(view, 0, offsetof(BfAggFilter, pending));
	view->hdr = f->hdr;
	view->payload = BF_PAYLOAD(f->vl);
	view->borrowed = true;
}

/* expanded-object methods: the flat form is the FORMAT.md bytes */
static Size
filter_flat_size(ExpandedObjectHeader *eoh)
{
	return BF_DATUM_SIZE(((BfAggFilterObject *) eoh)->st.hdr.nblocks);
}

/* write the state's FORMAT.md bytes (queue applied) into vl */
static void
filter_write_flat(BfAggFilter *st, struct varlena *vl)
{
	bf_aggf_flush(st);
	SET_VARSIZE(vl, BF_DATUM_SIZE(st->hdr.nblocks));
	bloom_header_write(BF_PAYLOAD(vl), &st->hdr);
	memcpy(BF_BITS(vl), st->payload + BLOOM_HEADER_SIZE,
		   st->hdr.nblocks * BLOOM_BLOCK_BYTES);
}

static void
filter_flatten(ExpandedObjectHeader *eoh, void *result, Size size)
{
	BfAggFilter *st = &((BfAggFilterObject *) eoh)->st;

	Assert(size == BF_DATUM_SIZE(st->hdr.nblocks));
	filter_write_flat(st, (struct varlena *) result);
}

/* the state's flat form, in the current context */
struct varlena *
bf_aggf_flat(BfAggFilter *st)
{
	struct varlena *vl = palloc_extended(BF_DATUM_SIZE(st->hdr.nblocks),
										 MCXT_ALLOC_HUGE);

	filter_write_flat(st, vl);
	return vl;
}

/*
 * The state argument argno of a 1.2 function, to be modified: NULL, the
 * read-write expanded state itself, or a new expanded state
 * (a flat value validated and copied, a read-only state copied).
 */
static BfAggFilter *
filter_state_arg(FunctionCallInfo fcinfo, int argno)
{
	ExpandedObjectHeader *eoh;
	BfAggFilter *src;
	BfFilter	f;

	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &filter_methods);
	if (eoh != NULL)
	{
		src = &((BfAggFilterObject *) eoh)->st;
		if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(PG_GETARG_DATUM(argno))))
			return src;
		bf_aggf_flush(src);
		return bf_aggf_make(bf_agg_states(fcinfo), &src->hdr, src->payload, true);
	}
	f = bf_fetch(PG_GETARG_DATUM(argno));
	return bf_aggf_make(bf_agg_states(fcinfo), &f.hdr, BF_PAYLOAD(f.vl), true);
}

/*
 * The filter argument argno, read only: an expanded state of another
 * aggregate node (a partial one) or a flat value, validated, in *view.
 * NULL for a NULL argument.
 */
static BfAggFilter *
filter_read_arg(FunctionCallInfo fcinfo, int argno, BfAggFilter *view)
{
	ExpandedObjectHeader *eoh;
	BfFilter	f;

	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &filter_methods);
	if (eoh != NULL)
		return &((BfAggFilterObject *) eoh)->st;
	f = bf_fetch(PG_GETARG_DATUM(argno));
	bf_aggf_view(view, &f);
	return view;
}

/* the state as a 1.2 function's result */
static Datum
filter_state_datum(BfAggFilter *st)
{
	Assert(st->eoh != NULL);
	return EOHPGetRWDatum(st->eoh);
}

/*
 * s1 := s1 OR s2 (AND for intersect); s2 is only read.  A NULL s1 becomes
 * a copy of s2 (a new state in cxt), a NULL s2 changes nothing.
 */
BfAggFilter *
bf_aggf_merge(BfAggFilter *s1, BfAggFilter *s2, bool intersect,
			  MemoryContext cxt, bool expanded)
{
	if (s2 == NULL)
		return s1;
	/* applying a read-only state's queue changes its bits, not its value */
	bf_aggf_flush(s2);
	if (s1 == NULL)
		return bf_aggf_make(cxt, &s2->hdr, s2->payload, expanded);
	bf_aggf_flush(s1);
	bf_combine(&s1->hdr, s1->payload + BLOOM_HEADER_SIZE,
			   &s2->hdr, s2->payload + BLOOM_HEADER_SIZE, intersect);
	return s1;
}

/* the state as a bloomfilter datum in the current context; st unchanged */
struct varlena *
bf_aggf_result(BfAggFilter *st, bool intersect)
{
	size_t		size = BF_DATUM_SIZE(st->hdr.nblocks);
	struct varlena *vl = palloc_extended(size, MCXT_ALLOC_HUGE);
	BloomHeader hdr = st->hdr;

	bf_aggf_flush(st);
	SET_VARSIZE(vl, size);
	memcpy(BF_PAYLOAD(vl), st->payload, bloom_total_size(hdr.nblocks));
	bf_finish_combined(&hdr, BF_PAYLOAD(vl), intersect);
	return vl;
}

/* ---- bf_agg(value, capacity, fpr) ---- */

/*
 * One row: the state is made on the first row even when its value is
 * NULL (so that all-NULL input gives a filter of the size asked), NULL
 * values are skipped.
 */
BfAggFilter *
bf_aggf_sized_step(FunctionCallInfo fcinfo, BfAggFilter *st,
				   MemoryContext cxt, bool expanded)
{
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
		st = bf_aggf_make(cxt ? cxt : bf_agg_states(fcinfo), &hdr, NULL,
						  expanded);
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
			bf_aggf_flush(st);
	}
	return st;
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

/* zero rows: an empty filter of the size asked, or NULL if not constant */
struct varlena *
bf_aggf_sized_empty(FunctionCallInfo fcinfo)
{
	int64		capacity;
	double		fpr;
	uint64		nblocks;
	int			nhashes;

	if (!constant_size_args(fcinfo, &capacity, &fpr))
		return NULL;
	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
	return bf_new(nblocks, nhashes, 0, capacity, fpr);
}

/* ---- the 1.2 support functions (state type bloomfilter) ---- */

/* Not STRICT: see bf_aggf_sized_step */
PG_FUNCTION_INFO_V1(bf_agg_sized_step);
Datum
bf_agg_sized_step(PG_FUNCTION_ARGS)
{
	BfAggFilter *st = filter_state_arg(fcinfo, 0);

	st = bf_aggf_sized_step(fcinfo, st, NULL, true);
	PG_RETURN_DATUM(filter_state_datum(st));
}

/* Not STRICT: zero rows (NULL state) give an empty filter of the size asked */
PG_FUNCTION_INFO_V1(bf_agg_sized_finish);
Datum
bf_agg_sized_finish(PG_FUNCTION_ARGS)
{
	BfAggFilter view;
	BfAggFilter *st = filter_read_arg(fcinfo, 0, &view);
	struct varlena *vl;

	if (st != NULL)
		PG_RETURN_POINTER(bf_aggf_result(st, false));
	vl = bf_aggf_sized_empty(fcinfo);
	if (vl == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(vl);
}

/*
 * bf_union_agg and bf_intersect_agg: the transition function is also the
 * combine function (a row's filter and a partial state are both filters),
 * and the combine function of bf_agg(value, capacity, fpr).  Not STRICT:
 * NULL filters are skipped, the first one is copied.
 */
static Datum
setop_step(FunctionCallInfo fcinfo, bool intersect)
{
	BfAggFilter view;
	BfAggFilter *s2 = filter_read_arg(fcinfo, 1, &view);
	BfAggFilter *s1;

	if (s2 == NULL)
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	s1 = filter_state_arg(fcinfo, 0);
	s1 = bf_aggf_merge(s1, s2, intersect, s1 ? NULL : bf_agg_states(fcinfo), true);
	/* a large row's detoasted copy goes now, not at the end of the row */
	if (s2 == &view &&
		(Pointer) (view.payload - VARHDRSZ) != DatumGetPointer(PG_GETARG_DATUM(1)))
		pfree(view.payload - VARHDRSZ);
	PG_RETURN_DATUM(filter_state_datum(s1));
}

PG_FUNCTION_INFO_V1(bf_union_agg_step);
Datum
bf_union_agg_step(PG_FUNCTION_ARGS)
{
	return setop_step(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_step);
Datum
bf_intersect_agg_step(PG_FUNCTION_ARGS)
{
	return setop_step(fcinfo, true);
}

/* Not STRICT: no non-NULL input (NULL state) gives NULL */
static Datum
setop_finish(FunctionCallInfo fcinfo, bool intersect)
{
	BfAggFilter view;
	BfAggFilter *st = filter_read_arg(fcinfo, 0, &view);

	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(bf_aggf_result(st, intersect));
}

PG_FUNCTION_INFO_V1(bf_union_agg_finish);
Datum
bf_union_agg_finish(PG_FUNCTION_ARGS)
{
	return setop_finish(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_finish);
Datum
bf_intersect_agg_finish(PG_FUNCTION_ARGS)
{
	return setop_finish(fcinfo, true);
}
