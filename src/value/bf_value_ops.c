/*-------------------------------------------------------------------------
 *
 * bf_value_ops.c
 *	  Set algebra (bf_union / |, bf_intersect / &), equality (= / <>) and
 *	  introspection (bf_cardinality, bf_fpr, bf_saturated, bf_info) for
 *	  the bloomfilter type.  The arithmetic lives in bloom_core.c; this
 *	  file is the fmgr glue and the error reporting.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "bf_grow.h"

#include <math.h>

#include "access/detoast.h"
#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"

/*
 * Whole-array loops go through the bits in steps of this many bytes (well
 * under a millisecond each) and check for interrupts between steps, so
 * that operations on filters of hundreds of MB stay cancellable.
 */
#define BF_STEP_BYTES ((size_t) 1 << 20)

static uint64
popcount_cancellable(const uint8 *bits, size_t nbytes)
{
	uint64		count = 0;

	for (size_t off = 0; off < nbytes; off += BF_STEP_BYTES)
	{
		CHECK_FOR_INTERRUPTS();
		count += bloom_popcount(bits + off, Min(BF_STEP_BYTES, nbytes - off));
	}
	return count;
}

/*
 * dst := dst OR src (or AND).  dst keeps its capacity and target rate; an
 * empty dst takes src's family.  For an intersection the inserted counter
 * carries the smallest of the inputs' until bf_finish_combined.
 */
void
bf_combine(BloomHeader *dst, uint8 *dstbits, const BloomHeader *src,
		   const uint8 *srcbits, bool intersect)
{
	size_t		nbytes;

	bf_check_compatible(dst, src);
	nbytes = dst->nblocks * BLOOM_BLOCK_BYTES;
	for (size_t off = 0; off < nbytes; off += BF_STEP_BYTES)
	{
		size_t		n = Min(BF_STEP_BYTES, nbytes - off);

		CHECK_FOR_INTERRUPTS();
		if (intersect)
			bloom_and(dstbits + off, srcbits + off, n);
		else
			bloom_or(dstbits + off, srcbits + off, n);
	}
	if (intersect && src->inserted < dst->inserted)
		dst->inserted = src->inserted;
	bloom_adopt_family(dst, src);
}

/*
 * Set the inserted counter of a computed filter from its bits (the rounded
 * cardinality estimate; for an intersection at most the smallest input's
 * count) and write the header.  The result depends only on the bits and
 * the inputs' counts, not on the order of combining, so parallel and
 * serial aggregation produce identical bytes.
 */
void
bf_finish_combined(BloomHeader *hdr, uint8 *payload, bool intersect)
{
	uint64		bits_set = popcount_cancellable(payload + BLOOM_HEADER_SIZE,
												hdr->nblocks * BLOOM_BLOCK_BYTES);
	uint64		est = bloom_estimate_inserted(bits_set, hdr->nblocks, hdr->nhashes);

	if (hdr->family == BF_FAMILY_NONE)
		hdr->inserted = 0;		/* the format requires it */
	else if (intersect)
		hdr->inserted = Min(est, hdr->inserted);
	else
		hdr->inserted = est;
	bloom_header_write(payload, hdr);
}

static Datum
combine_two(FunctionCallInfo fcinfo, bool intersect)
{
	struct varlena *a = PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0));
	BfFilter	b = bf_fetch(PG_GETARG_DATUM(1));
	BloomHeader hdr;

	bf_read_header(a, &hdr);
	bf_combine(&hdr, BF_BITS(a), &b.hdr, BF_BITS(b.vl), intersect);
	bf_finish_combined(&hdr, BF_PAYLOAD(a), intersect);
	PG_RETURN_POINTER(a);
}

PG_FUNCTION_INFO_V1(bf_union);
Datum
bf_union(PG_FUNCTION_ARGS)
{
	return combine_two(fcinfo, false);
}

PG_FUNCTION_INFO_V1(bf_intersect);
Datum
bf_intersect(PG_FUNCTION_ARGS)
{
	return combine_two(fcinfo, true);
}

/*
 * Equality: the same bytes except the inserted counter, which records
 * history (how many adds changed a bit) rather than what the filter
 * answers.  Capacity and target rate take part, since bf_saturated and
 * bf_info depend on them.
 */
static bool
filters_equal(Datum da, Datum db)
{
	BfFilter	a = bf_fetch_any(da);
	BfFilter	b = bf_fetch_any(db);
	size_t		len = BF_PAYLOAD_LEN(a.vl);
	const uint8 *pa = BF_PAYLOAD(a.vl);
	const uint8 *pb = BF_PAYLOAD(b.vl);

	/* a growing filter: the same, in each layer; never equal to a plain one */
	if (a.hdr.family == BF_FAMILY_GROWING || b.hdr.family == BF_FAMILY_GROWING)
		return a.hdr.family == b.hdr.family &&
			bloom_grow_equal(pa, len, pb, BF_PAYLOAD_LEN(b.vl));

	if (len != BF_PAYLOAD_LEN(b.vl))
		return false;
	return memcmp(pa, pb, BLOOM_INSERTED_OFFSET) == 0 &&
		memcmp(pa + BLOOM_INSERTED_OFFSET + 8, pb + BLOOM_INSERTED_OFFSET + 8,
			   len - BLOOM_INSERTED_OFFSET - 8) == 0;
}

PG_FUNCTION_INFO_V1(bloomfilter_eq);
Datum
bloomfilter_eq(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(filters_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

PG_FUNCTION_INFO_V1(bloomfilter_ne);
Datum
bloomfilter_ne(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(!filters_equal(PG_GETARG_DATUM(0), PG_GETARG_DATUM(1)));
}

/* ---- introspection ---- */

typedef struct BfFill
{
	uint64		bits_set;
	double		cardinality;
	double		fpr;
	bool		saturated;
} BfFill;

/*
 * Saturated: the estimated rate exceeds the target recorded in the header.
 * A filter sized explicitly (bf_create_sized: no target) is saturated once
 * more than half of its bits are set, the fill at which a filter with the
 * best k for its load stops gaining from more bits per element.
 */
static BfFill
fill_of(const BfFilter *f)
{
	BfFill		r;
	double		nbits = (double) f->hdr.nblocks * BLOOM_BLOCK_BITS;

	r.fpr = bloom_fill_fpr(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes, &r.bits_set);
	r.cardinality = bloom_estimate_cardinality(r.bits_set, f->hdr.nblocks, f->hdr.nhashes);
	if (f->hdr.fpr > 0.0)
		r.saturated = r.fpr > f->hdr.fpr;
	else
		r.saturated = (double) r.bits_set > nbits / 2.0;
	return r;
}

PG_FUNCTION_INFO_V1(bf_cardinality);
Datum
bf_cardinality(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));
	uint64		bits_set;

	if (f.hdr.family == BF_FAMILY_GROWING)
		PG_RETURN_FLOAT8(bf_grow_summary(&f).cardinality);
	bits_set = popcount_cancellable(BF_BITS(f.vl), f.hdr.nblocks * BLOOM_BLOCK_BYTES);
	PG_RETURN_FLOAT8(bloom_estimate_cardinality(bits_set, f.hdr.nblocks, f.hdr.nhashes));
}

PG_FUNCTION_INFO_V1(bf_fpr);
Datum
bf_fpr(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));

	if (f.hdr.family == BF_FAMILY_GROWING)
		PG_RETURN_FLOAT8(bf_grow_summary(&f).fpr);

	PG_RETURN_FLOAT8(bloom_fill_fpr(BF_BITS(f.vl), f.hdr.nblocks, f.hdr.nhashes, NULL));
}

PG_FUNCTION_INFO_V1(bf_saturated);
Datum
bf_saturated(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));

	if (f.hdr.family == BF_FAMILY_GROWING)
		PG_RETURN_BOOL(bf_grow_summary(&f).saturated);

	PG_RETURN_BOOL(fill_of(&f).saturated);
}

#define BF_INFO_NATTS 15

/*
 * The row of bf_info, for either form: sum has the estimates (a growing
 * filter's summed over its layers); nhashes < 0 is NULL (a growing
 * filter's layers differ); a capacity or target of 0 (bf_create_sized) is
 * NULL.
 */
static Datum
info_row(TupleDesc tupdesc, const char *layout, const BfGrowSummary *sum,
		 int nhashes, const BloomHeader *family, Datum raw)
{
	Datum		values[BF_INFO_NATTS];
	bool		nulls[BF_INFO_NATTS] = {0};
	int			i = 0;

	values[i++] = CStringGetTextDatum(layout);
	values[i++] = Int64GetDatum((int64) sum->nbits);
	nulls[i] = nhashes < 0;
	values[i++] = Int32GetDatum(nhashes);
	values[i++] = Int64GetDatum(family->seed);
	/* as pg_column_size: the stored (possibly compressed) size */
	values[i++] = Int64GetDatum((int64) toast_datum_size(raw));
	nulls[i] = sum->capacity == 0;
	values[i++] = Int64GetDatum(sum->capacity);
	nulls[i] = sum->target_fpr == 0.0;
	values[i++] = Float8GetDatum(sum->target_fpr);
	values[i++] = Int64GetDatum((int64) sum->inserted);
	values[i++] = Int64GetDatum((int64) sum->bits_set);
	values[i++] = Float8GetDatum((double) sum->bits_set / (double) sum->nbits);
	values[i++] = Float8GetDatum(sum->cardinality);
	values[i++] = Float8GetDatum(sum->fpr);
	values[i++] = BoolGetDatum(sum->saturated);
	values[i++] = CStringGetTextDatum(bf_family_text(family->family, family->detail));
	values[i++] = BoolGetDatum((family->flags & BLOOM_FLAG_NONPORTABLE) == 0);
	Assert(i == BF_INFO_NATTS);
	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

PG_FUNCTION_INFO_V1(bf_info);
Datum
bf_info(PG_FUNCTION_ARGS)
{
	Datum		raw = PG_GETARG_DATUM(0);
	BfFilter	f = bf_fetch_any(raw);
	BloomHeader family = f.hdr;
	TupleDesc	tupdesc;
	BfGrowSummary sum;
	BfFill		fill;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	if (f.hdr.family == BF_FAMILY_GROWING)
	{
		/* layer 0's header but for the family, which is in its bytes */
		family.family = BF_PAYLOAD(f.vl)[BLOOM_GROW_HEADER_SIZE + BLOOM_FAMILY_OFFSET];
		sum = bf_grow_summary(&f);
		PG_RETURN_DATUM(info_row(tupdesc,
								 memcmp(BF_PAYLOAD(f.vl), BLOOM_UNION_MAGIC, 4) == 0 ?
								 "union" : "growing",
								 &sum, -1, &family, raw));
	}
	fill = fill_of(&f);
	memset(&sum, 0, sizeof(sum));
	sum.nlayers = 1;
	sum.nbits = f.hdr.nblocks * BLOOM_BLOCK_BITS;
	sum.capacity = f.hdr.capacity;
	sum.inserted = f.hdr.inserted;
	sum.bits_set = fill.bits_set;
	sum.cardinality = fill.cardinality;
	sum.fpr = fill.fpr;
	sum.target_fpr = f.hdr.fpr;
	sum.saturated = fill.saturated;
	PG_RETURN_DATUM(info_row(tupdesc, "blocked", &sum, f.hdr.nhashes, &family, raw));
}
