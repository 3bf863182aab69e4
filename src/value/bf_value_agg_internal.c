/*-------------------------------------------------------------------------
 *
 * bf_value_agg_internal.c
 *	  The aggregates' support functions of the 1.0 and 1.1 catalogs, whose
 *	  transition states are `internal`: a database keeps that catalog until
 *	  ALTER EXTENSION bloomfilter UPDATE, and it must keep working with
 *	  this library.  The 1.2 catalog does not use them (its states are
 *	  bloomfilter and bytea).  Each is a thin wrapper over the state code
 *	  of bf_value_agg.c and bf_value_agg_auto.c; a serialized state is the
 *	  flat form of the same state in 1.2.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_agg.h"

/* the `internal` state argument argno, or NULL */
#define STATE_ARG(type, argno) \
	(PG_ARGISNULL(argno) ? NULL : (type *) PG_GETARG_POINTER(argno))

/* ---- states that are a filter ---- */

/* the FORMAT.md bytes */
PG_FUNCTION_INFO_V1(bf_agg_filter_serialize);
Datum
bf_agg_filter_serialize(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_agg_filter_serialize");
	PG_RETURN_POINTER(bf_aggf_flat((BfAggFilter *) PG_GETARG_POINTER(0)));
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

/* Not STRICT: the state is made on the first row, NULL values skipped */
PG_FUNCTION_INFO_V1(bf_agg_sized_trans);
Datum
bf_agg_sized_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_sized_trans");

	PG_RETURN_POINTER(bf_aggf_sized_step(fcinfo, STATE_ARG(BfAggFilter, 0),
										 aggcxt, false));
}

/* Not STRICT: zero rows (NULL state) give an empty filter of the size asked */
PG_FUNCTION_INFO_V1(bf_agg_sized_final);
Datum
bf_agg_sized_final(PG_FUNCTION_ARGS)
{
	struct varlena *vl;

	(void) bf_agg_context(fcinfo, "bf_agg_sized_final");
	if (!PG_ARGISNULL(0))
		PG_RETURN_POINTER(bf_aggf_result((BfAggFilter *) PG_GETARG_POINTER(0), false));
	vl = bf_aggf_sized_empty(fcinfo);
	if (vl == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(vl);
}

/* Not STRICT: combine functions of internal states must handle NULL */
static Datum
filter_combine(FunctionCallInfo fcinfo, bool intersect, const char *fname)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, fname);
	BfAggFilter *st = bf_aggf_merge(STATE_ARG(BfAggFilter, 0),
									STATE_ARG(BfAggFilter, 1),
									intersect, aggcxt, false);

	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(bf_agg_sized_combine);
Datum
bf_agg_sized_combine(PG_FUNCTION_ARGS)
{
	return filter_combine(fcinfo, false, "bf_agg_sized_combine");
}

PG_FUNCTION_INFO_V1(bf_union_agg_combine);
Datum
bf_union_agg_combine(PG_FUNCTION_ARGS)
{
	return filter_combine(fcinfo, false, "bf_union_agg_combine");
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_combine);
Datum
bf_intersect_agg_combine(PG_FUNCTION_ARGS)
{
	return filter_combine(fcinfo, true, "bf_intersect_agg_combine");
}

/* Not STRICT: NULL filters are skipped, the first one is copied */
static Datum
setop_trans(FunctionCallInfo fcinfo, bool intersect, const char *fname)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, fname);
	BfAggFilter *st = STATE_ARG(BfAggFilter, 0);
	BfAggFilter view;
	BfFilter	f;

	if (PG_ARGISNULL(1))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(st);
	}
	f = bf_fetch(PG_GETARG_DATUM(1));
	bf_aggf_view(&view, &f);
	st = bf_aggf_merge(st, &view, intersect, aggcxt, false);
	if ((Pointer) f.vl != DatumGetPointer(PG_GETARG_DATUM(1)))
		pfree(f.vl);
	PG_RETURN_POINTER(st);
}

PG_FUNCTION_INFO_V1(bf_union_agg_trans);
Datum
bf_union_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, false, "bf_union_agg_trans");
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_trans);
Datum
bf_intersect_agg_trans(PG_FUNCTION_ARGS)
{
	return setop_trans(fcinfo, true, "bf_intersect_agg_trans");
}

/* Not STRICT: no non-NULL input gives NULL */
static Datum
setop_final(FunctionCallInfo fcinfo, bool intersect, const char *fname)
{
	(void) bf_agg_context(fcinfo, fname);
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	PG_RETURN_POINTER(bf_aggf_result((BfAggFilter *) PG_GETARG_POINTER(0), intersect));
}

PG_FUNCTION_INFO_V1(bf_union_agg_final);
Datum
bf_union_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, false, "bf_union_agg_final");
}

PG_FUNCTION_INFO_V1(bf_intersect_agg_final);
Datum
bf_intersect_agg_final(PG_FUNCTION_ARGS)
{
	return setop_final(fcinfo, true, "bf_intersect_agg_final");
}

/* ---- the auto-sized bf_agg(value [, fpr]) ---- */

/* Not STRICT: the state is internal, NULL values are skipped */
PG_FUNCTION_INFO_V1(bf_agg_auto_trans);
Datum
bf_agg_auto_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_auto_trans");

	PG_RETURN_POINTER(bf_aggh_step(fcinfo, STATE_ARG(BfAggHashes, 0),
								   aggcxt, false));
}

/* Not STRICT: combine functions of internal states must handle NULL */
PG_FUNCTION_INFO_V1(bf_agg_auto_combine);
Datum
bf_agg_auto_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_auto_combine");
	BfAggHashes *st = bf_aggh_merge(STATE_ARG(BfAggHashes, 0),
									STATE_ARG(BfAggHashes, 1), aggcxt, false);

	if (st == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(st);
}

/* Not STRICT: zero rows, or only NULL values, give NULL */
PG_FUNCTION_INFO_V1(bf_agg_auto_final);
Datum
bf_agg_auto_final(PG_FUNCTION_ARGS)
{
	struct varlena *vl;

	(void) bf_agg_context(fcinfo, "bf_agg_auto_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	vl = bf_aggh_result((BfAggHashes *) PG_GETARG_POINTER(0));
	if (vl == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(vl);
}

PG_FUNCTION_INFO_V1(bf_agg_auto_serialize);
Datum
bf_agg_auto_serialize(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_agg_auto_serialize");
	PG_RETURN_BYTEA_P(bf_aggh_flat((BfAggHashes *) PG_GETARG_POINTER(0)));
}

PG_FUNCTION_INFO_V1(bf_agg_auto_deserialize);
Datum
bf_agg_auto_deserialize(PG_FUNCTION_ARGS)
{
	(void) bf_agg_context(fcinfo, "bf_agg_auto_deserialize");
	PG_RETURN_POINTER(bf_aggh_from_flat(PG_GETARG_BYTEA_PP(0),
										CurrentMemoryContext, false));
}
