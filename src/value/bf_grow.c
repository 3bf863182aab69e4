/*-------------------------------------------------------------------------
 *
 * bf_grow.c
 *	  Growing bloomfilter values (docs/FORMAT.md section 9): the
 *	  constructor, adding (which appends a layer when the newest one holds
 *	  its capacity), testing, clearing and per-layer introspection.  The
 *	  bytes are read and written by bloom_grow.c.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_grow.h"

#include "access/detoast.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

/* ---- constructor ---- */

/* an empty growing filter: capacity keys at rate fpr in all, then growth */
struct varlena *
bf_grow_new(int64 capacity, double fpr, int32 growth, int64 seed)
{
	int64		layer_capacity;
	double		layer_fpr;
	uint64		nblocks;
	int			nhashes;
	size_t		size;
	struct varlena *vl;
	BloomGrowHeader gh;

	if (growth < BLOOM_GROW_MIN_GROWTH || growth > BLOOM_GROW_MAX_GROWTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter growth must be between %d and %d",
						BLOOM_GROW_MIN_GROWTH, BLOOM_GROW_MAX_GROWTH),
				 errdetail("The growth given was %d.", growth),
				 errhint("Each new layer holds growth times as many keys as the one before; 2 is usual.")));
	bf_check_fpr(fpr);
	/* the first layer's share of the rate underflows only for subnormals */
	if (!bloom_grow_layer_target(capacity, fpr, BLOOM_GROW_RATIO, growth, 0,
								 &layer_capacity, &layer_fpr))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate too small for a growing filter"),
				 errdetail("The rate given was %g.", fpr)));
	bf_size_or_error(layer_capacity, layer_fpr, &nblocks, &nhashes);
	size = VARHDRSZ + bloom_grow_size(nblocks);
	vl = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(vl, size);
	bloom_grow_init(BF_PAYLOAD(vl), &gh, capacity, fpr, BLOOM_GROW_RATIO,
					(uint32) growth, nblocks, nhashes, seed);
	return vl;
}

PG_FUNCTION_INFO_V1(bf_create_growing);
Datum
bf_create_growing(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(bf_grow_new(PG_GETARG_INT64(0), PG_GETARG_FLOAT8(1),
								  PG_GETARG_INT32(2), PG_GETARG_INT64(3)));
}

/* ---- adding ---- */

void
bf_grow_adder_init(BfGrowAdder *a, struct varlena *vl, BfTypeInfo *ti)
{
	a->vl = vl;
	a->ti = ti;
	a->checked = false;
	a->n = 0;
	a->touched = NULL;
	a->changed = 0;
	bf_grow_read(vl, &a->gh, ERRCODE_DATA_CORRUPTED);
	if (a->gh.is_union)
		bf_grow_refuse(BF_PAYLOAD(vl));
	a->start_layers = a->gh.nlayers;
}

/* append the next layer, sized as the format says, to a->vl */
static void
append_layer(BfGrowAdder *a)
{
	BloomGrowHeader *gh = &a->gh;
	int64		layer_capacity;
	double		layer_fpr;
	uint64		nblocks = 0;
	int			nhashes = 0;
	size_t		oldsize = VARSIZE(a->vl);
	size_t		newsize;

	if (gh->nlayers >= BLOOM_GROW_MAX_LAYERS ||
		!bloom_grow_layer_target(gh->capacity, gh->fpr, gh->ratio, gh->growth,
								 gh->nlayers, &layer_capacity, &layer_fpr) ||
		!bloom_size_for((double) layer_capacity, layer_fpr, &nblocks, &nhashes) ||
		gh->total_blocks + nblocks > BLOOM_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("growing bloomfilter cannot grow further"),
				 errdetail("It has %d layers of %llu blocks in all; the next layer would take it past the largest bloomfilter (%llu blocks, %d layers).",
						   gh->nlayers, (unsigned long long) gh->total_blocks,
						   (unsigned long long) BLOOM_MAX_BLOCKS, BLOOM_GROW_MAX_LAYERS),
				 errhint("Create the filter with a larger capacity or growth, or split the keys over several filters.")));
	newsize = oldsize + bloom_total_size(nblocks);
	a->vl = repalloc_huge(a->vl, newsize);
	memset((char *) a->vl + oldsize, 0, newsize - oldsize);
	SET_VARSIZE(a->vl, newsize);
	bloom_grow_append(BF_PAYLOAD(a->vl), gh, nblocks, nhashes, layer_capacity, layer_fpr);
}

/* add the waiting hashes, in the order they came */
static void
grow_flush(BfGrowAdder *a)
{
	BloomGrowHeader *gh = &a->gh;

	/* every BF_ADDER_BATCH values: loops over many values stay cancellable */
	CHECK_FOR_INTERRUPTS();
	for (int i = 0; i < a->n; i++)
	{
		uint64		h = a->hashes[i];
		uint8	   *layer;

		/* a key some layer holds already is not added again */
		if (bloom_grow_test_hash(BF_PAYLOAD(a->vl), h))
			continue;
		if (gh->newest.inserted >= (uint64) gh->newest.capacity)
			append_layer(a);
		layer = BF_PAYLOAD(a->vl) + gh->newest_offset;
		if (bloom_set_hash(layer + BLOOM_HEADER_SIZE, gh->newest.nblocks,
						   gh->newest.nhashes, h))
		{
			BLOOM_COUNT_INSERT(&gh->newest);
			bloom_store_u64(layer + BLOOM_INSERTED_OFFSET, gh->newest.inserted);
			a->changed++;
			/* the chunks of the value as it was; after a growth all of it */
			if (a->touched && gh->nlayers == a->start_layers)
			{
				a->touched[gh->newest_offset / BF_CHANGE_CHUNK] = true;
				a->touched[(gh->newest_offset + BLOOM_HEADER_SIZE + BLOOM_BLOCK_BYTES *
							bloom_block_of(h, gh->newest.nblocks)) / BF_CHANGE_CHUNK] = true;
			}
		}
	}
	a->n = 0;
}

/*
 * Add a hash: fetch its blocks now, test and set them with the batch, as
 * bf_adder_add does, so that the cache misses of the layers of many keys
 * overlap.  Called directly with a hash the caller computed, for a filter
 * whose family is set already (an index build: the key family comes from
 * the index).
 */
void
bf_grow_adder_add_hash(BfGrowAdder *a, uint64 h)
{
	bloom_grow_prefetch_hash(BF_PAYLOAD(a->vl), h);
	a->hashes[a->n++] = h;
	if (a->n == BF_ADDER_BATCH)
		grow_flush(a);
}

/* check a value's family (the first sets the filter's), then add its hash */
void
bf_grow_adder_add(BfGrowAdder *a, Datum value)
{
	BloomGrowHeader *gh = &a->gh;

	bf_prepare_value(a->ti, value);
	/* a record's row type may vary per value: check each one */
	if (a->ti->family == BF_FAMILY_RECORD || !a->checked)
	{
		uint8		before = gh->first.family;

		bf_check_family(&gh->first, BF_PAYLOAD(a->vl) + BLOOM_GROW_HEADER_SIZE,
						a->ti, true);
		if (before == BF_FAMILY_NONE)
		{
			bloom_grow_share_family(BF_PAYLOAD(a->vl), gh);
			gh->newest.family = gh->first.family;
			gh->newest.flags = gh->first.flags;
			gh->newest.detail = gh->first.detail;
		}
		a->checked = true;
	}
	bf_grow_adder_add_hash(a, bf_hash_datum(a->ti, value, gh->first.seed));
}

/* the value with every value added (it may have moved as it grew) */
struct varlena *
bf_grow_adder_finish(BfGrowAdder *a)
{
	grow_flush(a);
	return a->vl;
}

/* is the stored value raw (possibly TOASTed) of the growing form? */
bool
bf_datum_is_growing(struct varlena *raw)
{
	struct varlena *head = detoast_attr_slice(raw, 0, 4);

	return bloom_is_layered((const uint8 *) VARDATA_ANY(head), VARSIZE_ANY_EXHDR(head));
}

/* ---- testing ---- */

/*
 * bf_filter_test for a growing filter (value prepared).  f was
 * validated when fetched: its header is layer 0's but for the family,
 * which is read from the bytes.
 */
bool
bf_grow_test(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	const uint8 *payload = BF_PAYLOAD(f->vl);
	uint8		family = payload[BLOOM_GROW_HEADER_SIZE + BLOOM_FAMILY_OFFSET];

	if (family == BF_FAMILY_NONE)
		return false;			/* nothing was ever added */
	if (family != ti->family || f->hdr.detail != ti->detail)
	{
		BloomHeader first = f->hdr;

		first.family = family;
		bf_check_family(&first, NULL, ti, false);
	}
	return bloom_grow_test_hash(payload, bf_hash_datum(ti, value, f->hdr.seed));
}

/* ---- clearing ---- */

/*
 * bf_clear of a growing filter: its first layer, emptied.  A union keeps
 * its layers, each emptied (the union of the emptied filters), in vl, a
 * copy the caller made.
 */
struct varlena *
bf_grow_clear(struct varlena *vl)
{
	BloomGrowHeader gh;
	size_t		size;
	struct varlena *out;

	bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
	if (gh.is_union)
	{
		BloomHeader h;
		size_t		next = 0;
		size_t		off;

		while ((off = bloom_grow_next_layer(BF_PAYLOAD(vl), &gh, &next, &h)) != 0)
		{
			bloom_store_u64(BF_PAYLOAD(vl) + off + BLOOM_INSERTED_OFFSET, 0);
			memset(BF_PAYLOAD(vl) + off + BLOOM_HEADER_SIZE, 0, h.nblocks * BLOOM_BLOCK_BYTES);
		}
		return vl;
	}
	size = VARHDRSZ + bloom_grow_size(gh.first.nblocks);
	out = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(out, size);
	gh.nlayers = 1;
	bloom_grow_header_write(BF_PAYLOAD(out), &gh);
	gh.first.inserted = 0;
	bloom_header_write(BF_PAYLOAD(out) + BLOOM_GROW_HEADER_SIZE, &gh.first);
	return out;
}

/* ---- introspection ---- */

/*
 * The fill of every layer of a filter, plain (one layer) or growing:
 * fn(arg, layer number, its header, its bits) for each.
 */
void
bf_for_each_layer(const BfFilter *f, BfLayerFn fn, void *arg)
{
	const uint8 *payload = BF_PAYLOAD(f->vl);
	BloomGrowHeader gh;
	BloomHeader h;
	size_t		next = 0;
	size_t		off;
	int			i = 0;

	if (f->hdr.family != BF_FAMILY_GROWING)
	{
		fn(arg, 0, &f->hdr, BF_BITS(f->vl));
		return;
	}
	bf_grow_read(f->vl, &gh, ERRCODE_DATA_CORRUPTED);
	while ((off = bloom_grow_next_layer(payload, &gh, &next, &h)) != 0)
	{
		CHECK_FOR_INTERRUPTS();
		fn(arg, i++, &h, payload + off + BLOOM_HEADER_SIZE);
	}
}

static void
sum_layer(void *arg, int layer, const BloomHeader *h, const uint8 *bits)
{
	BfGrowSummary *sum = (BfGrowSummary *) arg;
	uint64		bits_set;
	double		fpr = bloom_fill_fpr(bits, h->nblocks, h->nhashes, &bits_set);

	sum->nlayers = layer + 1;
	sum->nbits += h->nblocks * BLOOM_BLOCK_BITS;
	/* both stop at the largest bigint, as "inserted" of one filter does */
	sum->capacity = h->capacity > PG_INT64_MAX - sum->capacity ?
		PG_INT64_MAX : sum->capacity + h->capacity;
	sum->inserted = h->inserted > BLOOM_MAX_INSERTED - sum->inserted ?
		BLOOM_MAX_INSERTED : sum->inserted + h->inserted;
	sum->bits_set += bits_set;
	sum->cardinality += bloom_estimate_cardinality(bits_set, h->nblocks, h->nhashes);
	/* a key is a false positive if any layer says "probably" */
	sum->fpr = sum->fpr + fpr - sum->fpr * fpr;
}

/*
 * The fill and estimates of a growing filter, summed over its layers:
 * capacity and inserted add up, the rate is that of any layer answering.
 */
BfGrowSummary
bf_grow_summary(const BfFilter *f)
{
	BfGrowSummary sum;
	BloomGrowHeader gh;

	memset(&sum, 0, sizeof(sum));
	bf_for_each_layer(f, sum_layer, &sum);
	bf_grow_read(f->vl, &gh, ERRCODE_DATA_CORRUPTED);
	sum.target_fpr = gh.fpr;
	sum.saturated = sum.fpr > gh.fpr;
	return sum;
}

#define BF_LAYERS_NATTS 8

typedef struct LayerRows
{
	ReturnSetInfo *rsinfo;
} LayerRows;

static void
layer_row(void *arg, int layer, const BloomHeader *h, const uint8 *bits)
{
	LayerRows  *rows = (LayerRows *) arg;
	Datum		values[BF_LAYERS_NATTS];
	bool		nulls[BF_LAYERS_NATTS] = {0};
	uint64		bits_set;
	double		fpr = bloom_fill_fpr(bits, h->nblocks, h->nhashes, &bits_set);

	values[0] = Int32GetDatum(layer);
	values[1] = Int64GetDatum((int64) (h->nblocks * BLOOM_BLOCK_BITS));
	values[2] = Int32GetDatum(h->nhashes);
	nulls[3] = h->capacity == 0;
	values[3] = Int64GetDatum(h->capacity);
	nulls[4] = h->fpr == 0.0;
	values[4] = Float8GetDatum(h->fpr);
	values[5] = Int64GetDatum((int64) h->inserted);
	values[6] = Int64GetDatum((int64) bits_set);
	values[7] = Float8GetDatum(fpr);
	tuplestore_putvalues(rows->rsinfo->setResult, rows->rsinfo->setDesc, values, nulls);
}

/*
 * The rows of bf_layers for the filter value, into fcinfo's materialized
 * result (also bf_index_layers, for an index's value)
 */
Datum
bf_layers_rows(FunctionCallInfo fcinfo, Datum value)
{
	BfFilter	f = bf_fetch_any(value);
	LayerRows	rows;

	InitMaterializedSRF(fcinfo, 0);
	rows.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bf_for_each_layer(&f, layer_row, &rows);
	return (Datum) 0;
}

/* bf_layers(filter): one row per layer (one for a plain filter) */
PG_FUNCTION_INFO_V1(bf_layers);
Datum
bf_layers(PG_FUNCTION_ARGS)
{
	return bf_layers_rows(fcinfo, PG_GETARG_DATUM(0));
}
