/*-------------------------------------------------------------------------
 *
 * bf_window_agg.c
 *	  bf_window_agg(value, at, window, capacity_per_window [, fpr [,
 *	  slices]]): a bloomwindow built from rows with a timestamp, with
 *	  combine, serialize and deserialize functions for parallel plans.
 *
 * The state is the window itself, in the aggregate's memory context.  Rows
 * may come in any order: a row newer than every slice stored moves the
 * window forward, a row older than the oldest slice stored is dropped, as
 * it would be anyway once the newest row has been seen.  The result is the
 * window that adding every row one by one in time order gives, whatever
 * the order of the rows and however the work was split: same slices and
 * bits, "inserted" counters computed from the bits (as bf_union does) and
 * no ignored adds.
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
	bool		borrowed;		/* buf points into a serialized state */
} BwAggState;

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

static BwAggState *
state_new(MemoryContext cxt, const BloomWindowHeader *hdr, const uint8 *buf, size_t len)
{
	BwAggState *st = MemoryContextAllocZero(cxt, sizeof(BwAggState));

	st->hdr = *hdr;
	st->len = len;
	st->buf = MemoryContextAllocExtended(cxt, len, MCXT_ALLOC_HUGE);
	memcpy(st->buf, buf, len);
	return st;
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
 * Not STRICT: the state is created on the first row even when its value is
 * NULL, NULL values are skipped, and a NULL time is an error.
 */
PG_FUNCTION_INFO_V1(bf_window_agg_trans);
Datum
bf_window_agg_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "bf_window_agg_trans");
	BwAggState *st = PG_ARGISNULL(0) ? NULL : (BwAggState *) PG_GETARG_POINTER(0);
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
		size_t		len;
		uint8	   *buf;
		BloomWindowHeader hdr;

		bw_params(window, capacity, fpr, nslices, &slice_us, &nblocks, &nhashes);
		len = bloom_window_size(nslices, nblocks);
		st = MemoryContextAllocZero(aggcxt, sizeof(BwAggState));
		buf = MemoryContextAllocExtended(aggcxt, len, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		bloom_window_init(buf, &hdr, nslices, slice_us, capacity, fpr, nblocks, nhashes, 0);
		st->hdr = hdr;
		st->buf = buf;
		st->len = len;
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
		if (fcinfo->flinfo->fn_extra == NULL)
			fcinfo->flinfo->fn_extra =
				MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfTypeCache));
		ti = bf_typecache_lookup((BfTypeCache *) fcinfo->flinfo->fn_extra, fcinfo, 1, false);
		if (ti->family == BF_FAMILY_RECORD)
			bf_record_prepare(ti, value);
		bw_check_family(st->buf, &st->hdr, ti, true);
		bw_add_hash(st->buf, &st->hdr, bw_slice_at(&st->hdr, PG_GETARG_TIMESTAMPTZ(2)),
					bf_hash_datum(ti, value, st->hdr.slot.seed), false);
	}
	PG_RETURN_POINTER(st);
}

/* Not STRICT: zero rows (NULL state) give NULL, as for most aggregates */
PG_FUNCTION_INFO_V1(bf_window_agg_final);
Datum
bf_window_agg_final(PG_FUNCTION_ARGS)
{
	BwAggState *st;
	struct varlena *vl;
	BloomWindowHeader hdr;

	(void) agg_context(fcinfo, "bf_window_agg_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (BwAggState *) PG_GETARG_POINTER(0);
	vl = palloc_extended(VARHDRSZ + st->len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, VARHDRSZ + st->len);
	memcpy(BW_PAYLOAD(vl), st->buf, st->len);
	hdr = st->hdr;
	bw_finish_combined(BW_PAYLOAD(vl), &hdr);
	PG_RETURN_POINTER(vl);
}

/* Not STRICT: a combine function of an internal state must handle NULLs */
PG_FUNCTION_INFO_V1(bf_window_agg_combine);
Datum
bf_window_agg_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "bf_window_agg_combine");
	BwAggState *s1 = PG_ARGISNULL(0) ? NULL : (BwAggState *) PG_GETARG_POINTER(0);
	BwAggState *s2 = PG_ARGISNULL(1) ? NULL : (BwAggState *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL)
	{
		/* s2 may live in a short-lived context or a serialized value: copy */
		PG_RETURN_POINTER(state_new(aggcxt, &s2->hdr, s2->buf, s2->len));
	}
	bw_check_compatible(&s1->hdr, &s2->hdr);
	if (s1->hdr.newest == BLOOM_WINDOW_NO_SLICE)
	{
		/* an empty s1 has no family yet: take all of s2 */
		memcpy(s1->buf, s2->buf, s1->len);
		s1->hdr = s2->hdr;
	}
	else
		bloom_window_union(s1->buf, &s1->hdr, s2->buf, &s2->hdr);
	PG_RETURN_POINTER(s1);
}

/* the FORMAT.md bytes */
PG_FUNCTION_INFO_V1(bf_window_agg_serialize);
Datum
bf_window_agg_serialize(PG_FUNCTION_ARGS)
{
	BwAggState *st;
	bytea	   *out;

	(void) agg_context(fcinfo, "bf_window_agg_serialize");
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

	(void) agg_context(fcinfo, "bf_window_agg_deserialize");
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
