/*-------------------------------------------------------------------------
 *
 * bf_window_ops.c
 *	  Union (bf_window_union / |), equality (= / <>) and introspection
 *	  (bf_window_info, bf_window_slices) of the bloomwindow type.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_window.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

/*
 * a | b: a window holding the keys of both, as if every key had been added
 * to one window in time order.  Counters of the result: each slot's
 * "inserted" from its bits, "ignored" the sum of the two.
 */
PG_FUNCTION_INFO_V1(bf_window_union);
Datum
bf_window_union(PG_FUNCTION_ARGS)
{
	BwWindow	a = bw_fetch_copy(PG_GETARG_DATUM(0));
	BwWindow	b = bw_fetch(PG_GETARG_DATUM(1));

	bw_check_compatible(&a.hdr, &b.hdr);
	/* an empty window (whose ignored count is 0) adds nothing */
	if (a.hdr.newest == BLOOM_WINDOW_NO_SLICE)
		a = bw_fetch_copy(PG_GETARG_DATUM(1));
	else
		bloom_window_union(BW_PAYLOAD(a.vl), &a.hdr, BW_PAYLOAD(b.vl), &b.hdr);
	bw_finish_combined(BW_PAYLOAD(a.vl), &a.hdr);
	PG_RETURN_POINTER(a.vl);
}

/* same answers at every time: same bytes except the counters */
static bool
windows_equal(FunctionCallInfo fcinfo)
{
	BwWindow	a = bw_fetch(PG_GETARG_DATUM(0));
	BwWindow	b = bw_fetch(PG_GETARG_DATUM(1));

	return bloom_window_equal(BW_PAYLOAD(a.vl), BW_PAYLOAD_LEN(a.vl),
							  BW_PAYLOAD(b.vl), BW_PAYLOAD_LEN(b.vl));
}

PG_FUNCTION_INFO_V1(bloomwindow_eq);
Datum
bloomwindow_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(windows_equal(fcinfo));
}

PG_FUNCTION_INFO_V1(bloomwindow_ne);
Datum
bloomwindow_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!windows_equal(fcinfo));
}

/* the rate of slot j's bits (FORMAT.md section 6.2) */
static double
slot_fpr(uint8 *buf, const BloomWindowHeader *hdr, int j, uint64 *bits_set)
{
	return bloom_fill_fpr(bloom_window_slot(buf, hdr, j) + BLOOM_HEADER_SIZE,
						  hdr->slot.nblocks, hdr->slot.nhashes, bits_set);
}

#define BW_INFO_NATTS 14

PG_FUNCTION_INFO_V1(bf_window_info);
Datum
bf_window_info(PG_FUNCTION_ARGS)
{
	Datum		raw = PG_GETARG_DATUM(0);
	BwWindow	w = bw_fetch(raw);
	TupleDesc	tupdesc;
	Datum		values[BW_INFO_NATTS];
	bool		nulls[BW_INFO_NATTS];
	double		pass = 1.0;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	if (tupdesc->natts != BW_INFO_NATTS)
		elog(ERROR, "bf_window_info: expected %d result columns", BW_INFO_NATTS);
	memset(nulls, 0, sizeof(nulls));

	/* a lookup in the newest slice consults every slot */
	for (int j = 0; j <= w.hdr.nslices; j++)
	{
		uint64		bits_set;

		pass *= 1.0 - slot_fpr(BW_PAYLOAD(w.vl), &w.hdr, j, &bits_set);
	}

	values[i++] = IntervalPGetDatum(bw_interval(w.hdr.slice_us * w.hdr.nslices));
	values[i++] = Int32GetDatum(w.hdr.nslices);
	values[i++] = IntervalPGetDatum(bw_interval(w.hdr.slice_us));
	values[i++] = Int64GetDatum(w.hdr.capacity);
	values[i++] = Float8GetDatum(w.hdr.fpr);
	values[i++] = Int64GetDatum((int64) (w.hdr.slot.nblocks * BLOOM_BLOCK_BITS));
	values[i++] = Int32GetDatum(w.hdr.slot.nhashes);
	values[i++] = Int64GetDatum(w.hdr.slot.seed);
	values[i++] = Int64GetDatum((int64) toast_datum_size(raw));
	if (w.hdr.newest == BLOOM_WINDOW_NO_SLICE)
		nulls[i++] = true;
	else
		values[i++] = TimestampTzGetDatum(bw_slice_time(&w.hdr, w.hdr.newest));
	values[i++] = Int64GetDatum((int64) w.hdr.ignored);
	values[i++] = Float8GetDatum(1.0 - pass);
	values[i++] = CStringGetTextDatum(bf_family_text(w.hdr.slot.family, w.hdr.slot.detail));
	values[i++] = BoolGetDatum((w.hdr.slot.flags & BLOOM_FLAG_NONPORTABLE) == 0);
	Assert(i == BW_INFO_NATTS);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

#define BW_SLICES_NATTS 8

/*
 * One row per slice stored, oldest first: its time range, the time from
 * which no lookup consults it, its fill and estimates, and the slice
 * itself as a bloomfilter.  An empty window has no slices.
 */
PG_FUNCTION_INFO_V1(bf_window_slices);
Datum
bf_window_slices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BwWindow	w = bw_fetch(PG_GETARG_DATUM(0));
	size_t		slotsize = bloom_window_slot_size(w.hdr.slot.nblocks);

	InitMaterializedSRF(fcinfo, 0);
	if (w.hdr.newest == BLOOM_WINDOW_NO_SLICE)
		return (Datum) 0;
	for (int64 s = w.hdr.newest - w.hdr.nslices; s <= w.hdr.newest; s++)
	{
		int			j = bloom_window_slot_of(s, w.hdr.nslices);
		uint8	   *slot = bloom_window_slot(BW_PAYLOAD(w.vl), &w.hdr, j);
		Datum		values[BW_SLICES_NATTS];
		bool		nulls[BW_SLICES_NATTS];
		uint64		bits_set;
		double		fpr = slot_fpr(BW_PAYLOAD(w.vl), &w.hdr, j, &bits_set);
		struct varlena *f = palloc_extended(VARHDRSZ + slotsize, MCXT_ALLOC_HUGE);
		int			i = 0;

		CHECK_FOR_INTERRUPTS();
		memset(nulls, 0, sizeof(nulls));
		SET_VARSIZE(f, VARHDRSZ + slotsize);
		memcpy(VARDATA(f), slot, slotsize);
		values[i++] = TimestampTzGetDatum(bw_slice_time(&w.hdr, s));
		values[i++] = TimestampTzGetDatum(bw_slice_time(&w.hdr, s + 1));
		values[i++] = TimestampTzGetDatum(bw_slice_time(&w.hdr, s + 1 + w.hdr.nslices));
		values[i++] = Int64GetDatum((int64) bloom_load_u64(slot + BLOOM_INSERTED_OFFSET));
		values[i++] = Int64GetDatum((int64) bits_set);
		values[i++] = Float8GetDatum(bloom_estimate_cardinality(bits_set, w.hdr.slot.nblocks,
																w.hdr.slot.nhashes));
		values[i++] = Float8GetDatum(fpr);
		values[i++] = PointerGetDatum(f);
		Assert(i == BW_SLICES_NATTS);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		pfree(f);
	}
	return (Datum) 0;
}
