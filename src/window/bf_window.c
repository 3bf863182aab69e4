/*-------------------------------------------------------------------------
 *
 * bf_window.c
 *	  The bloomwindow type's constructor, bf_window_add / bf_window_add_all
 *	  and bf_window_contains, and the helpers the other bloomwindow files
 *	  share: reading a value, checking parameters, mapping times to slices.
 *
 * Every function that depends on the time takes it as an argument: the
 * SQL defaults of now() are evaluated by the caller, so the functions
 * themselves are immutable and a value answers the same at the same time
 * however often it was used.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_window.h"

#include "access/detoast.h"
#include "common/int.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/timestamp.h"

/* ---- reading and checking values ---- */

void
bw_report_error(BloomWindowError err, BloomError slot_err, int sqlstate,
				const char *what)
{
	if (err == BLOOM_WINDOW_ERR_SLOT)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid %s", what),
				 errdetail_internal("%s %s", bloom_window_error_message(err),
									bloom_error_message(slot_err))));
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("invalid %s", what),
			 errdetail_internal("%s", bloom_window_error_message(err))));
}

static void
read_header(struct varlena *vl, BloomWindowHeader *hdr)
{
	BloomError	slot_err;
	BloomWindowError err = bloom_window_read(BW_PAYLOAD(vl), BW_PAYLOAD_LEN(vl),
											 hdr, &slot_err);

	if (err != BLOOM_WINDOW_OK)
		bw_report_error(err, slot_err, ERRCODE_DATA_CORRUPTED, "bloomwindow value");
}

BwWindow
bw_fetch(Datum d)
{
	BwWindow	w;

	w.vl = PG_DETOAST_DATUM(d);
	read_header(w.vl, &w.hdr);
	return w;
}

/* a private copy, to be modified and returned */
BwWindow
bw_fetch_copy(Datum d)
{
	BwWindow	w;

	w.vl = PG_DETOAST_DATUM_COPY(d);
	read_header(w.vl, &w.hdr);
	return w;
}

/* validate portable bytes and copy them into a new bloomwindow datum */
struct varlena *
bw_from_bytes(const uint8 *data, size_t len, int sqlstate)
{
	BloomWindowHeader hdr;
	BloomError	slot_err;
	BloomWindowError err = bloom_window_read(data, len, &hdr, &slot_err);
	struct varlena *vl;

	if (err != BLOOM_WINDOW_OK)
		bw_report_error(err, slot_err, sqlstate, "bloomwindow value");
	/*
	 * a non-portable window names its type by OID: the rule of a plain
	 * filter's (bf_other_type_ok), since its slots print as plain filters
	 */
	if (hdr.slot.family == BF_FAMILY_OTHER && !bf_other_type_ok((Oid) hdr.slot.detail))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloomwindow value"),
				 errdetail("The window holds values of a non-portable type with OID %u, which does not exist in this database or cannot be the element type of a filter.",
						   hdr.slot.detail),
				 errhint("Non-portable windows can only be moved between databases in their text form, which names the type.")));
	vl = palloc_extended(VARHDRSZ + len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, VARHDRSZ + len);
	memcpy(VARDATA(vl), data, len);
	return vl;
}

/*
 * Check the parameters of a new window and size its slices: each slice
 * must stay under its share fpr / (N + 1) of the rate even if every key of
 * a window falls into it, so that all N + 1 live slices together stay
 * under fpr (docs/FORMAT.md section 7.3).
 */
void
bw_params(const Interval *window, int64 capacity, double fpr, int32 nslices,
		  int64 *slice_us, uint64 *nblocks, int *nhashes)
{
	int64		us;

	if (window->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow window must not contain months or years"),
				 errdetail("Months and years have no fixed length."),
				 errhint("Give the window in days or smaller units, for example '30 days'.")));
	if (pg_mul_s64_overflow(window->day, USECS_PER_DAY, &us) ||
		pg_add_s64_overflow(us, window->time, &us) || us > BLOOM_WINDOW_MAX_US)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow window is too long"),
				 errdetail("The longest window is 2^61 microseconds, about 73 000 years.")));
	if (us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow window must be positive")));
	if (nslices < 1 || nslices > BLOOM_WINDOW_MAX_SLICES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow slices must be between 1 and %d", BLOOM_WINDOW_MAX_SLICES),
				 errdetail("The number given was %d.", nslices)));
	if (us % nslices != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow window must split into slices of a whole number of microseconds"),
				 errdetail("A window of " INT64_FORMAT " microseconds does not divide into %d equal slices.",
						   us, nslices),
				 errhint("Choose a number of slices that divides the window.")));
	*slice_us = us / nslices;
	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomwindow capacity_per_window must be positive"),
				 errdetail("The capacity given was " INT64_FORMAT ".", capacity)));
	bf_check_fpr(fpr);
	bf_size_or_error(capacity, bloom_window_slot_fpr(fpr, nslices), nblocks, nhashes);
	if (*nblocks > BLOOM_MAX_BLOCKS / (uint64) (nslices + 1))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("bloomwindow too large"),
				 errdetail("%d slices of %llu bytes of bits each exceed the largest size, %llu bytes of bits.",
						   nslices + 1,
						   (unsigned long long) (*nblocks * BLOOM_BLOCK_BYTES),
						   (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BYTES)),
				 errhint("Ask for fewer slices, a larger false-positive rate or a smaller capacity.")));
}

/* the slice of a time; infinite times belong to no slice */
int64
bw_slice_at(const BloomWindowHeader *hdr, TimestampTz at)
{
	if (TIMESTAMP_NOT_FINITE(at))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("bloomwindow time must be finite"),
				 errdetail("Infinite times fall into no slice of a window.")));
	return bloom_window_slice_of((int64) at, hdr->slice_us);
}

/* the start of a slice as a timestamptz, infinite beyond the type's range */
TimestampTz
bw_slice_time(const BloomWindowHeader *hdr, int64 slice)
{
	int64		t;

	if (pg_mul_s64_overflow(slice, hdr->slice_us, &t) || t >= END_TIMESTAMP)
		return slice < 0 ? DT_NOBEGIN : DT_NOEND;
	if (t < MIN_TIMESTAMP)
		return DT_NOBEGIN;
	return (TimestampTz) t;
}

/* microseconds as an interval of days and time, as people write windows */
Interval *
bw_interval(int64 us)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->day = (int32) (us / USECS_PER_DAY);
	iv->time = us % USECS_PER_DAY;
	return iv;
}

/*
 * Check that values described by ti may be added to / tested against the
 * window; with setting, an empty window takes ti's family in every slot.
 */
void
bw_check_family(uint8 *buf, BloomWindowHeader *hdr, BfTypeInfo *ti, bool setting)
{
	if (hdr->slot.family != BF_FAMILY_NONE || !setting)
	{
		bf_check_family(&hdr->slot, NULL, ti, false);
		return;
	}
	bf_check_family(&hdr->slot, bloom_window_slot(buf, hdr, 0), ti, true);
	/* an empty window's slots are all empty: same header in each */
	for (int j = 1; j <= hdr->nslices; j++)
		bloom_header_write(bloom_window_slot(buf, hdr, j), &hdr->slot);
}

/*
 * Add hash h at a time in the given slice of a window we own.  Returns
 * false when the slice is older than the oldest one stored: nothing is
 * stored then.  With count, such adds are counted in "ignored", and adds
 * that turned on a bit in their slot's "inserted", as for a bloomfilter;
 * aggregates recompute both from the result instead.
 */
bool
bw_add_hash(uint8 *buf, BloomWindowHeader *hdr, int64 slice, uint64 h, bool count)
{
	int			j = bloom_window_prepare_add(buf, hdr, slice);
	uint8	   *slot;

	if (j < 0)
	{
		if (count && hdr->ignored < BLOOM_WINDOW_MAX_IGNORED)
		{
			hdr->ignored++;
			bloom_store_u64(buf + BLOOM_WINDOW_IGNORED_OFFSET, hdr->ignored);
		}
		return false;
	}
	slot = bloom_window_slot(buf, hdr, j);
	if (bloom_set_hash(slot + BLOOM_HEADER_SIZE, hdr->slot.nblocks,
					   hdr->slot.nhashes, h) && count)
		bloom_store_u64(slot + BLOOM_INSERTED_OFFSET,
						bloom_load_u64(slot + BLOOM_INSERTED_OFFSET) + 1);
	return true;
}

/* error out, naming the first difference, unless a and b can be combined */
void
bw_check_compatible(const BloomWindowHeader *a, const BloomWindowHeader *b)
{
	switch (bloom_window_compare(a, b))
	{
		case BLOOM_WINDOW_SAME:
			/* equal parameters give equal slots unless made by hand */
			bf_check_compatible(&a->slot, &b->slot);
			return;
		case BLOOM_WINDOW_DIFF_NSLICES:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomwindows with different parameters"),
					 errdetail("The first window has %d slices, the second has %d.",
							   a->nslices, b->nslices)));
			break;
		case BLOOM_WINDOW_DIFF_SLICE_WIDTH:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomwindows with different parameters"),
					 errdetail("The first window has slices of " INT64_FORMAT " microseconds, the second of " INT64_FORMAT ".",
							   a->slice_us, b->slice_us)));
			break;
		case BLOOM_WINDOW_DIFF_CAPACITY:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomwindows with different parameters"),
					 errdetail("The first window has capacity " INT64_FORMAT ", the second has capacity " INT64_FORMAT ".",
							   a->capacity, b->capacity)));
			break;
		case BLOOM_WINDOW_DIFF_FPR:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomwindows with different parameters"),
					 errdetail("The first window has fpr %g, the second has fpr %g.",
							   a->fpr, b->fpr)));
			break;
		case BLOOM_WINDOW_DIFF_SEED:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomwindows with different parameters"),
					 errdetail("The first window has seed " INT64_FORMAT ", the second has seed " INT64_FORMAT ".",
							   a->slot.seed, b->slot.seed)));
			break;
	}
}

/*
 * Set each slot's "inserted" counter of a computed window from its bits,
 * as bf_union does for a bloomfilter, so that the result does not depend
 * on the order in which it was computed.
 */
void
bw_finish_combined(uint8 *buf, BloomWindowHeader *hdr)
{
	for (int j = 0; j <= hdr->nslices; j++)
	{
		uint8	   *slot = bloom_window_slot(buf, hdr, j);
		BloomHeader sh = hdr->slot;

		bf_finish_combined(&sh, slot, false);
	}
	hdr->slot.inserted = bloom_load_u64(bloom_window_slot(buf, hdr, 0) + BLOOM_INSERTED_OFFSET);
}

/* ---- SQL functions ---- */

PG_FUNCTION_INFO_V1(bf_window_create);
Datum
bf_window_create(PG_FUNCTION_ARGS)
{
	Interval   *window = PG_GETARG_INTERVAL_P(0);
	int64		capacity = PG_GETARG_INT64(1);
	double		fpr = PG_GETARG_FLOAT8(2);
	int32		nslices = PG_GETARG_INT32(3);
	int64		seed = PG_GETARG_INT64(4);
	int64		slice_us;
	uint64		nblocks;
	int			nhashes;
	size_t		size;
	struct varlena *vl;
	BloomWindowHeader hdr;

	bw_params(window, capacity, fpr, nslices, &slice_us, &nblocks, &nhashes);
	size = bloom_window_size(nslices, nblocks);
	vl = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(vl, VARHDRSZ + size);
	bloom_window_init(BW_PAYLOAD(vl), &hdr, nslices, slice_us, capacity, fpr,
					  nblocks, nhashes, seed);
	PG_RETURN_POINTER(vl);
}

/*
 * Per-call-site state in fn_extra: how to hash the value argument, and for
 * lookups the last window argument stored out of line, detoasted and
 * validated, keyed by its TOAST pointer.  A window in a table handed to
 * every row by a scalar subquery arrives as the same pointer each time, and
 * is then read once per query instead of once per call.
 */
typedef struct BwCallCache
{
	BfTypeCache types;
	bool		have_window;
	varatt_external ext;
	BwWindow	window;			/* in fn_mcxt */
} BwCallCache;

static BwCallCache *
get_cache(FunctionCallInfo fcinfo)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BwCallCache));
	return (BwCallCache *) fcinfo->flinfo->fn_extra;
}

static BfTypeInfo *
get_typeinfo(FunctionCallInfo fcinfo, int argno, bool element)
{
	return bf_typecache_lookup(&get_cache(fcinfo)->types, fcinfo, argno, element);
}

/* the window argument argno, read only */
static BwWindow
get_window_cached(FunctionCallInfo fcinfo, int argno)
{
	BwCallCache *cache = get_cache(fcinfo);
	struct varlena *raw = (struct varlena *) PG_GETARG_POINTER(argno);
	varatt_external ext;
	MemoryContext old;

	if (!VARATT_IS_EXTERNAL_ONDISK(raw))
		return bw_fetch(PointerGetDatum(raw));
	VARATT_EXTERNAL_GET_POINTER(ext, raw);
	if (cache->have_window && memcmp(&ext, &cache->ext, sizeof(ext)) == 0)
		return cache->window;
	if (cache->have_window)
		pfree(cache->window.vl);
	cache->have_window = false;
	old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cache->window = bw_fetch(PointerGetDatum(raw));
	MemoryContextSwitchTo(old);
	cache->ext = ext;
	cache->have_window = true;
	return cache->window;
}

static void
require_time(FunctionCallInfo fcinfo, int argno)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("bloomwindow time must not be NULL"),
				 errdetail("A value is remembered for the window that follows the time it was added at.")));
}

/* add one non-NULL value at a time in slice; counts as bf_add does */
static void
add_value(BwWindow *w, BfTypeInfo *ti, Datum value, int64 slice)
{
	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
	bw_check_family(BW_PAYLOAD(w->vl), &w->hdr, ti, true);
	bw_add_hash(BW_PAYLOAD(w->vl), &w->hdr, slice,
				bf_hash_datum(ti, value, w->hdr.slot.seed), true);
}

/*
 * bf_window_add(window, value, at): not STRICT, so that adding a NULL
 * value returns the window unchanged (UPDATE ... SET w = bf_window_add(w,
 * x) must not wipe it); a NULL window stays NULL; a NULL time is an error.
 */
PG_FUNCTION_INFO_V1(bf_window_add);
Datum
bf_window_add(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti;
	BwWindow	w;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	require_time(fcinfo, 2);
	ti = get_typeinfo(fcinfo, 1, false);
	w = bw_fetch_copy(PG_GETARG_DATUM(0));
	add_value(&w, ti, PG_GETARG_DATUM(1), bw_slice_at(&w.hdr, PG_GETARG_TIMESTAMPTZ(2)));
	PG_RETURN_POINTER(w.vl);
}

/* bf_window_add_all(window, array, at): not STRICT, as bf_window_add */
PG_FUNCTION_INFO_V1(bf_window_add_all);
Datum
bf_window_add_all(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti;
	BwWindow	w;
	ArrayIterator it;
	Datum		value;
	bool		isnull;
	int64		slice;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	if (PG_ARGISNULL(1))
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	require_time(fcinfo, 2);
	ti = get_typeinfo(fcinfo, 1, true);
	w = bw_fetch_copy(PG_GETARG_DATUM(0));
	slice = bw_slice_at(&w.hdr, PG_GETARG_TIMESTAMPTZ(2));
	it = array_create_iterator(PG_GETARG_ARRAYTYPE_P(1), 0, NULL);
	while (array_iterate(it, &value, &isnull))
	{
		CHECK_FOR_INTERRUPTS();
		if (!isnull)
			add_value(&w, ti, value, slice);
	}
	array_free_iterator(it);
	PG_RETURN_POINTER(w.vl);
}

PG_FUNCTION_INFO_V1(bf_window_contains);
Datum
bf_window_contains(PG_FUNCTION_ARGS)
{
	BfTypeInfo *ti = get_typeinfo(fcinfo, 1, false);
	BwWindow	w = get_window_cached(fcinfo, 0);
	Datum		value = PG_GETARG_DATUM(1);
	int64		slice = bw_slice_at(&w.hdr, PG_GETARG_TIMESTAMPTZ(2));

	if (w.hdr.slot.family == BF_FAMILY_NONE)
		PG_RETURN_BOOL(false);	/* nothing was ever added */
	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
	bw_check_family(NULL, &w.hdr, ti, false);
	PG_RETURN_BOOL(bloom_window_test_hash(BW_PAYLOAD(w.vl), &w.hdr, slice,
										  bf_hash_datum(ti, value, w.hdr.slot.seed)));
}
