/*-------------------------------------------------------------------------
 *
 * bf_index_funcs.c
 *	  SQL-callable functions reading a bloomfilter index (bf_index_am.c):
 *	  bf_index_contains, bf_index_filter, bf_index_layers, bf_index_info
 *	  and bf_index_layer_count.
 *
 * They require SELECT on every column the index reads (bf_index_access.c):
 * the filter reveals which keys are present.  Only a complete index
 * answers (valid, ready and live), and only for a table whose rows live in
 * its own heap (bf_relcheck.c), or whose shards answer for it (a table
 * distributed by Citus: bf_index_dist.c): anything else could give false
 * negatives.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index_sql.h"
#include "bf_stats.h"
#include "bf_dist.h"
#include "bf_relcheck.h"

#include <math.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "catalog/pg_inherits.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* per call site: the probe's type, and the index as opened and checked */
typedef struct BfIndexCallCache
{
	bool		ti_valid;
	BfTypeInfo	ti;
	Oid			argtype;
	BfIndexLookup lk;
	Oid			local_index;	/* known not to be of a distributed table */
} BfIndexCallCache;

PG_FUNCTION_INFO_V1(bf_index_contains);

/* bf_index_contains(regclass, anyelement) and (regclass, text) */
Datum
bf_index_contains(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Datum		value = PG_GETARG_DATUM(1);
	BfIndexCallCache *cache = (BfIndexCallCache *) fcinfo->flinfo->fn_extra;
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	Relation	index;
	bool		found;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(mcxt, sizeof(BfIndexCallCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	if (!cache->ti_valid)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 1);

		if (!OidIsValid(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the type of the value to look up")));
		bf_typeinfo_init(&cache->ti, argtype, PG_GET_COLLATION(), mcxt);
		cache->argtype = argtype;
		cache->ti_valid = true;
	}
	/* an index of a distributed table: its shards answer */
	if (indexoid != cache->local_index)
	{
		if (bf_dist_index_contains(fcinfo, indexoid, cache->argtype, value, &found))
		{
			bf_stats_count(indexoid, 0, !found);
			PG_RETURN_BOOL(found);
		}
		cache->local_index = indexoid;
	}
	index = bf_lookup_open(&cache->lk, indexoid, mcxt, "bf_index_contains");
	/* privileges: once per user while the lookup state is valid */
	if (cache->lk.userid != GetUserId())
	{
		bf_index_check_access(index);
		cache->lk.userid = GetUserId();
	}
	found = bf_probe(index, cache->lk.leaves, &cache->ti, value, &cache->lk, mcxt);
	index_close(index, NoLock);
	bf_stats_count(indexoid, 0, !found);
	PG_RETURN_BOOL(found);
}

/*
 * Open a leaf index for reading its whole filter: checked as
 * bf_index_open does, rights checked, and its state copied into st.
 */
Relation
bf_index_open_checked(Oid indexoid, BfIndexState *st, const char *what)
{
	Relation	index = bf_index_open(indexoid, false, what);

	if (bf_pending_unknown())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot run in a parallel worker of a transaction that has written", what),
				 errdetail("The keys the transaction inserted are not yet in the index pages a worker reads."),
				 errhint("Run ALTER EXTENSION bloomfilter UPDATE, which makes the function parallel restricted.")));

	bf_index_check_access(index);
	bf_index_state(index, st);
	return index;
}

/*
 * The 64-byte header of the bloomfilter value equivalent to an index
 * whose bit array has ones bits set (bf_index_filter, bf_index_changes):
 * same parameters and family; "inserted" estimated from the set bits, as
 * for computed filters, since the index counts no inserts.
 */
void
bf_index_value_header(const BfIndexMeta *meta, uint64 ones, uint8 *dst)
{
	BloomHeader hdr;

	bloom_header_init(&hdr, meta->nblocks, (int) meta->nhashes, meta->seed,
					  meta->capacity, meta->fpr);
	hdr.family = meta->family;
	hdr.detail = meta->detail;
	hdr.flags = 0;
	hdr.inserted = bloom_estimate_inserted(ones, meta->nblocks, (int) meta->nhashes);
	bloom_header_write(dst, &hdr);
}

PG_FUNCTION_INFO_V1(bf_index_filter);

/*
 * The 64-byte header of the growing bloomfilter value equivalent to a
 * growing index (bf_index_filter, bf_index_changes).
 */
void
bf_index_growing_header(const BfIndexLayers *layers, uint8 *dst)
{
	BloomGrowHeader gh;

	memset(&gh, 0, sizeof(gh));
	gh.version = BLOOM_GROW_VERSION;
	gh.nlayers = (uint16) layers->nlayers;
	gh.growth = layers->growth;
	gh.capacity = layers->capacity;
	gh.fpr = layers->fpr;
	gh.ratio = layers->ratio;
	bloom_grow_header_write(dst, &gh);
}

/*
 * The index's filter as a bloomfilter value: same bits, parameters and
 * family, so bf_contains on it answers as bf_index_contains.  A growing
 * index gives a growing value (FORMAT.md section 9), its layers in order;
 * the index of a table of Citus's the union of its shards' filters
 * (section 10).
 */
struct varlena *
bf_index_value(Oid indexoid, const char *what)
{
	BfIndexState st;
	Relation	index;
	bool		growing;
	Size		size;
	Size		off;
	struct varlena *vl;

	/* a table of Citus's: the union of its shards' filters */
	if (bf_dist_index_value(indexoid, &vl))
		return vl;
	index = bf_index_open_checked(indexoid, &st, what);
	growing = st.meta.version == BF_INDEX_VERSION_GROWING;
	size = VARHDRSZ + (growing ? BLOOM_GROW_HEADER_SIZE : 0);

	for (uint32 i = 0; i < st.layers.nlayers; i++)
		size += bloom_total_size(st.layers.layer[i].nblocks);
	vl = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(vl, size);
	if (growing)
		bf_index_growing_header(&st.layers, BF_PAYLOAD(vl));
	off = growing ? BLOOM_GROW_HEADER_SIZE : 0;
	for (uint32 i = 0; i < st.layers.nlayers; i++)
	{
		const BfIndexLayer *l = &st.layers.layer[i];
		uint8	   *layer = BF_PAYLOAD(vl) + off;
		BfIndexMeta view;

		bf_read_bits(index, l, layer + BLOOM_HEADER_SIZE);
		bf_layer_view(&st.meta, l, &view);
		bf_index_value_header(&view,
							  bloom_popcount(layer + BLOOM_HEADER_SIZE, l->nblocks * BLOOM_BLOCK_BYTES),
							  layer);
		off += bloom_total_size(l->nblocks);
	}
	index_close(index, NoLock);
	return vl;
}

Datum
bf_index_filter(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(bf_index_value(PG_GETARG_OID(0), "bf_index_filter"));
}

/*
 * bf_index_layers(regclass): bf_layers of bf_index_filter(index), which
 * checks the index and the caller's rights
 */
PG_FUNCTION_INFO_V1(bf_index_layers);
Datum
bf_index_layers(PG_FUNCTION_ARGS)
{
	return bf_layers_rows(fcinfo, PointerGetDatum(bf_index_value(PG_GETARG_OID(0),
																	"bf_index_layers")));
}

/*
 * bf_index_layer_count(regclass): how many layers the filter of a leaf
 * index has (1 for an index that does not grow), from its metapage alone;
 * rights checked as for bf_index_info.  The bf_tracked view's rebuild_due
 * uses it: a REINDEX compacts a grown index into one layer.
 */
PG_FUNCTION_INFO_V1(bf_index_layer_count);
Datum
bf_index_layer_count(PG_FUNCTION_ARGS)
{
	BfIndexState st;
	Relation	index = bf_index_open_checked(PG_GETARG_OID(0), &st, "bf_index_layer_count");

	index_close(index, NoLock);
	PG_RETURN_INT32((int32) Max(st.layers.nlayers, 1));
}

PG_FUNCTION_INFO_V1(bf_index_size);

/*
 * bf_index_size(regclass): pg_relation_size of an index, or of
 * a table of Citus's, the size of its shards' indexes (asked of them with
 * the rights of bf_index_info).
 */
Datum
bf_index_size(PG_FUNCTION_ARGS)
{
	Datum		values[8];
	bool		nulls[8];
	int64		bytes;
	Relation	rel;

	if (bf_dist_index_info(fcinfo, PG_GETARG_OID(0), values, nulls, &bytes))
		PG_RETURN_INT64(bytes);
	rel = try_relation_open(PG_GETARG_OID(0), AccessShareLock);
	if (rel == NULL)
		PG_RETURN_NULL();
	bytes = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) ?
		(int64) RelationGetNumberOfBlocks(rel) * BLCKSZ : 0;
	relation_close(rel, AccessShareLock);
	PG_RETURN_INT64(bytes);
}

PG_FUNCTION_INFO_V1(bf_index_info);

/*
 * bf_index_info(regclass) -> (capacity, fpr, estimated_cardinality, fill,
 * estimated_fpr, saturated, nbits, nhashes).  saturated: the estimated
 * false-positive rate exceeds the one the filter was sized for, i.e. it
 * holds more keys than its capacity; REINDEX with a larger capacity.
 */
Datum
bf_index_info(PG_FUNCTION_ARGS)
{
	BfIndexState st;
	Relation	index;
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};
	uint64		ones = 0;
	double		nbits = 0;
	double		card = 0;
	double		efpr = 0;
	int64		capacity = 0;
	int64		bytes;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* a table of Citus's: the estimates of its shards (bf_index_dist_info.c) */
	if (bf_dist_index_info(fcinfo, PG_GETARG_OID(0), values, nulls, &bytes))
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	index = bf_index_open_checked(PG_GETARG_OID(0), &st, "bf_index_info");

	/*
	 * The same estimates as bf_info of the type (docs/FORMAT.md section 6);
	 * of a growing index, as bf_info of its value: sums over the layers,
	 * the rate that of any layer answering, the capacity of the layers so
	 * far, nhashes NULL (its layers differ).
	 */
	for (uint32 i = 0; i < st.layers.nlayers; i++)
	{
		const BfIndexLayer *l = &st.layers.layer[i];
		uint8	   *bits = palloc_extended(l->nblocks * BLOOM_BLOCK_BYTES, MCXT_ALLOC_HUGE);
		uint64		layer_ones;
		double		layer_fpr;

		bf_read_bits(index, l, bits);
		layer_fpr = bloom_fill_fpr(bits, l->nblocks, (int) l->nhashes, &layer_ones);
		card += bloom_estimate_cardinality(layer_ones, l->nblocks, (int) l->nhashes);
		efpr = efpr + layer_fpr - efpr * layer_fpr;
		ones += layer_ones;
		nbits += (double) l->nblocks * BLOOM_BLOCK_BITS;
		capacity += l->capacity;
		pfree(bits);
	}
	index_close(index, NoLock);

	values[0] = Int64GetDatum(capacity);
	values[1] = Float8GetDatum(st.layers.fpr);
	values[2] = Float8GetDatum(card);	/* Infinity when every bit is set */
	values[3] = Float8GetDatum((double) ones / nbits);
	values[4] = Float8GetDatum(efpr);
	values[5] = BoolGetDatum(efpr > st.layers.fpr);
	values[6] = Int64GetDatum((int64) nbits);
	values[7] = Int32GetDatum((int32) st.meta.nhashes);
	nulls[7] = st.meta.version == BF_INDEX_VERSION_GROWING;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
