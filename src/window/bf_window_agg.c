/*-------------------------------------------------------------------------
 *
 * bf_window_agg.c
 *	  bf_window_agg(value, at, window, capacity_per_window [, fpr [,
 *	  slices]]): a bloomwindow built from rows with a timestamp, with a
 *	  combine function for parallel plans.
 *
 * The state is the window itself (FORMAT.md bytes).  Rows may come in any
 * order: a row newer than every slice stored moves the window forward, a
 * row older than the oldest slice stored is dropped, as it would be anyway
 * once the newest row has been seen.  The result is the window that
 * adding every row one by one in time order gives, whatever the order of
 * the rows and however the work was split: same slices and bits,
 * "inserted" counters computed from the bits (as bf_union does) and no
 * ignored adds.
 *
 * In the 1.2 catalog the state's SQL type is bloomwindow: between rows it
 * is a read-write expanded object in a child of the aggregate context (see
 * bf_agg_states), whose flat form is the window's bytes, so a partial
 * state crosses a parallel plan's Gather, or Citus's text form, as an
 * ordinary bloomwindow.  A flat value reaching these functions is
 * validated as any bloomwindow argument and copied, never modified.  The
 * support functions of the 1.1 catalog (`internal` states, with serialize
 * and deserialize functions) are kept, over the same state, for databases
 * not yet updated.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_window.h"

#include "common/int.h"
#include "utils/timestamp.h"

typedef struct BwAggState
{
	BloomWindowHeader hdr;
	uint8	   *buf;			/* FORMAT.md bytes */
	size_t		len;
	bool		borrowed;		/* buf points into a flat value */
	ExpandedObjectHeader *eoh;	/* the expanded object (1.2), or NULL */
} BwAggState;

/* a state as an expanded object: the header first, as expandeddatum.h asks */
typedef struct BwAggObject
{
	ExpandedObjectHeader eoh;
	BwAggState	st;
} BwAggObject;

static Size window_flat_size(ExpandedObjectHeader *eoh);
static void window_flatten(ExpandedObjectHeader *eoh, void *result, Size size);

static const ExpandedObjectMethods window_methods = {
	window_flat_size,
	window_flatten
};

/*
 * A new state holding a copy of buf (NULL: zeroed, for bloom_window_init),
 * in cxt: an expanded object (cxt from bf_agg_states), or an `internal`
 * state.
 */
static BwAggState *
state_new(MemoryContext cxt, const BloomWindowHeader *hdr, const uint8 *buf,
		  size_t len, bool expanded)
{
	BwAggState *st;

	if (expanded)
	{
		BwAggObject *obj;

		obj = MemoryContextAllocZero(cxt, sizeof(BwAggObject));
		EOH_init_header(&obj->eoh, &window_methods, cxt);
		st = &obj->st;
		st->eoh = &obj->eoh;
	}
	else
		st = MemoryContextAllocZero(cxt, sizeof(BwAggState));
	if (hdr)
		st->hdr = *hdr;
	st->len = len;
	if (buf)
	{
		st->buf = MemoryContextAllocExtended(cxt, len, MCXT_ALLOC_HUGE);
		memcpy(st->buf, buf, len);
	}
	else
		st->buf = MemoryContextAllocExtended(cxt, len, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	return st;
}

/* expanded-object methods: the flat form is the window's bytes */
static Size
window_flat_size(ExpandedObjectHeader *eoh)
{
	return VARHDRSZ + ((BwAggObject *) eoh)->st.len;
}

static void
window_flatten(ExpandedObjectHeader *eoh, void *result, Size size)
{
	BwAggState *st = &((BwAggObject *) eoh)->st;

	Assert(size == VARHDRSZ + st->len);
	SET_VARSIZE(result, VARHDRSZ + st->len);
	memcpy(VARDATA(result), st->buf, st->len);
}

/* is this row's window as long as the state's? ('1 day' = '24 hours') */
static bool
same_window(const Interval *window, const BloomWindowHeader *hdr)
{
	int64		us;

	return window->month == 0 &&
		!pg_mul_s64_overflow(window->day, USECS_PER_DAY, &us) &&
		!pg_add_s64_overflow(us, window->time, &us) &&
		us == hdr->slice_us * hdr->nslices;
}

/* the parameters of this row, with the defaults of the shorter forms */
static void
row_params(FunctionCallInfo fcinfo, Interval **window, int64 *capacity,
		   double *fpr, int32 *nslices)
{
	int			nargs = PG_NARGS();

	for (int i = 3; i < nargs; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bf_window_agg window, capacity_per_window, fpr and slices must not be NULL")));
	*window = PG_GETARG_INTERVAL_P(3);
	*capacity = PG_GETARG_INT64(4);
	*fpr = nargs > 5 ? PG_GETARG_FLOAT8(5) : 0.01;
	*nslices = nargs > 6 ? PG_GETARG_INT32(6) : 4;
}

/*
 * One row: the state is made on the first row even when its value is NULL,
 * NULL values are skipped, and a NULL time is an error.
 */
static BwAggState *
window_step(FunctionCallInfo fcinfo, BwAggState *st, MemoryContext cxt,
			bool expanded)
{
	Interval   *window;
	int64		capacity;
	double		fpr;
	int32		nslices;

	row_params(fcinfo, &window, &capacity, &fpr, &nslices);
	if (st == NULL)
	{
		int64		slice_us;
		uint64		nblocks;
		int			nhashes;

		bw_params(window, capacity, fpr, nslices, &slice_us, &nblocks, &nhashes);
		st = state_new(cxt ? cxt : bf_agg_states(fcinfo), NULL, NULL,
					   bloom_window_size(nslices, nblocks), expanded);
		bloom_window_init(st->buf, &st->hdr, nslices, slice_us, capacity, fpr,
						  nblocks, nhashes, 0);
	}
	else if (!same_window(window, &st->hdr) ||
			 capacity != st->hdr.capacity || fpr != st->hdr.fpr ||
			 nslices != st->hdr.nslices)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_window_agg window, capacity_per_window, fpr and slices must be the same for every row")));

	if (!PG_ARGISNULL(1))
	{
		BfTypeInfo *ti;
		Datum		value = PG_GETARG_DATUM(1);

		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bloomwindow time must not be NULL"),
					 errdetail("A value is remembered for the window that follows the time it was added at.")));
		ti = bf_agg_typeinfo(fcinfo);
		if (ti->family == BF_FAMILY_RECORD)
			bf_record_prepare(ti, value);
		bw_check_family(st->buf, &st->hdr, ti, true);
		bw_add_hash(st->buf, &st->hdr, bw_slice_at(&st->hdr, PG_GETARG_TIMESTAMPTZ(2)),
					bf_hash_datum(ti, value, st->hdr.slot.seed), false);
	}
	return st;
}

/* the window as a bloomwindow datum in the current context; st unchanged */
static struct varlena *
window_result(const BwAggState *st)
{
	struct varlena *vl = palloc_extended(VARHDRSZ + st->len, MCXT_ALLOC_HUGE);
	BloomWindowHeader hdr = st->hdr;

	SET_VARSIZE(vl, VARHDRSZ + st->len);
	memcpy(BW_PAYLOAD(vl), st->buf, st->len);
	bw_finish_combined(BW_PAYLOAD(vl), &hdr);
	return vl;
}

/*
 * s1 := the union of s1 and s2, s2 only read.  A NULL s1 becomes a copy of
 * s2 (a new state in cxt), a NULL s2 changes nothing.
 */
static BwAggState *
window_merge(BwAggState *s1, const BwAggState *s2, MemoryContext cxt,
			 bool expanded)
{
	if (s2 == NULL)
		return s1;
	if (s1 == NULL)
		return state_new(cxt, &s2->hdr, s2->buf, s2->len, expanded);
	bw_check_compatible(&s1->hdr, &s2->hdr);
	if (s1->hdr.newest == BLOOM_WINDOW_NO_SLICE)
	{
		/* an empty s1 has no family yet: take all of s2 */
		memcpy(s1->buf, s2->buf, s1->len);
		s1->hdr = s2->hdr;
	}
	else
		bloom_window_union(s1->buf, &s1->hdr, s2->buf, &s2->hdr);
	return s1;
}

/* a read-only state over a validated flat window (no copy) */
static void
window_view(BwAggState *view, const BwWindow *w)
{
	memset(view, 0, sizeof(BwAggState));
	view->hdr = w->hdr;
	view->buf = BW_PAYLOAD(w->vl);
	view->len = BW_PAYLOAD_LEN(w->vl);
	view->borrowed = true;
}

/* ---- the 1.2 support functions (state type bloomwindow) ---- */

/*
 * The state argument argno, to be modified: NULL, the read-write expanded
 * state itself, or a new expanded state (a flat value validated and
 * copied, a read-only state copied).
 */
static BwAggState *
window_state_arg(FunctionCallInfo fcinfo, int argno)
{
	ExpandedObjectHeader *eoh;
	BwAggState *src;
	BwWindow	w;

	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &window_methods);
	if (eoh != NULL)
	{
		src = &((BwAggObject *) eoh)->st;
		if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(PG_GETARG_DATUM(argno))))
			return src;
		return state_new(bf_agg_states(fcinfo), &src->hdr, src->buf, src->len, true);
	}
	w = bw_fetch(PG_GETARG_DATUM(argno));
	return state_new(bf_agg_states(fcinfo), &w.hdr, BW_PAYLOAD(w.vl),
					 BW_PAYLOAD_LEN(w.vl), true);
}

/* the state argument argno, read only (a flat value validated, in *view) */
static BwAggState *
window_read_arg(FunctionCallInfo fcinfo, int argno, BwAggState *view)
{
	ExpandedObjectHeader *eoh;
	BwWindow	w;

	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &window_methods);
	if (eoh != NULL)
		return &((BwAggObject *) eoh)->st;
	w = bw_fetch(PG_GETARG_DATUM(argno));
	window_view(view, &w);
	return view;
}

/* Not STRICT: see window_step */
PG_FUNCTION_INFO_V1(bf_window_agg_step);
Datum
bf_window_agg_step(PG_FUNCTION_ARGS)
{
	BwAggState *st = window_state_arg(fcinfo, 0);

	st = window_step(fcinfo, st, NULL, true);
	PG_RETURN_DATUM(EOHPGetRWDatum(st->eoh));
}

/* the combine function; not STRICT: NULL partial states are skipped */
PG_FUNCTION_INFO_V1(bf_window_agg_merge);
Datum
bf_window_agg_merge(PG_FUNCTION_ARGS)
{
	BwAggState	view;
	BwAggState *s2 = window_read_arg(fcinfo, 1, &view);
	BwAggState *s1;

	if (s2 == NULL)
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	s1 = window_state_arg(fcinfo, 0);
	s1 = window_merge(s1, s2, s1 ? NULL : bf_agg_states(fcinfo), true);
	PG_RETURN_DATUM(EOHPGetRWDatum(s1->eoh));
}

/* Not STRICT: zero rows (NULL state) give NULL, as for most aggregates */
PG_FUNCTION_INFO_V1(bf_window_agg_finish);
Datum
bf_window_agg_finish(PG_FUNCTION_ARGS)
{
	BwAggState	view;
	BwAggState *st = window_read_arg(fcinfo, 0, &view);

	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(window_result(st));
}

/* ---- the 1.1 support functions (state type internal) ---- */

#define STATE_ARG(argno) \
	(PG_ARGISNULL(argno) ? NULL : (BwAggState *) PG_GETARG_POINTER(argno))

/* Not STRICT: see window_step */
PG_FUNCTION_INFO_V1(bf_window_agg_trans);
Datum
bf_window_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_window_agg_trans");

	PG_RETURN_POINTER(window_step(fcinfo, STATE_ARG(0), aggcxt, false));
}

/* Not STRICT: zero rows (NULL state) give NULL, as for most aggregates */
PG_FUNCTION_INFO_V1(bf_window_agg_final);
Datum
bf_window_agg_final(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_window_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(window_result(STATE_ARG(0)));
}

/* Not STRICT: a combine function of an internal state must handle NULLs */
PG_FUNCTION_INFO_V1(bf_window_agg_combine);
Datum
bf_window_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_window_agg_combine");
	BwAggState *st = window_merge(STATE_ARG(0), STATE_ARG(1), aggcxt, false);

	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(st);
}

/* the FORMAT.md bytes */
PG_FUNCTION_INFO_V1(bf_window_agg_serialize);
Datum
bf_window_agg_serialize(PG_FUNCTION_ARGS)
{
	BwAggState *st;
	bytea	   *out;

	(void) bf_agg_context(fcinfo, "bf_window_agg_serialize");
	st = (BwAggState *) PG_GETARG_POINTER(0);
	out = palloc_extended(VARHDRSZ + st->len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(out, VARHDRSZ + st->len);
	memcpy(VARDATA(out), st->buf, st->len);
	PG_RETURN_BYTEA_P(out);
}

PG_FUNCTION_INFO_V1(bf_window_agg_deserialize);
Datum
bf_window_agg_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	size_t		len;
	BwAggState *st;
	BloomError	slot_err;
	BloomWindowError err;

	(void) bf_agg_context(fcinfo, "bf_window_agg_deserialize");
	in = PG_GETARG_BYTEA_PP(0);
	len = VARSIZE_ANY_EXHDR(in);
	st = palloc0(sizeof(BwAggState));
	err = bloom_window_read((const uint8 *) VARDATA_ANY(in), len, &st->hdr, &slot_err);
	if (err != BLOOM_WINDOW_OK)
		bw_report_error(err, slot_err, ERRCODE_DATA_CORRUPTED, "bloomwindow aggregate state");

	/*
	 * No copy: the state only lives for the combine call that follows, as
	 * long as the serialized value, and the combine function copies it or
	 * only reads it.
	 */
	st->buf = (uint8 *) VARDATA_ANY(in);
	st->len = len;
	st->borrowed = true;
	PG_RETURN_POINTER(st);
}
