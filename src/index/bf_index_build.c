/*-------------------------------------------------------------------------
 *
 * bf_index_build.c
 *	  Building a bloomfilter index: the filter's parameters (reloptions or
 *	  the default rule), one table scan setting bits in memory, then the
 *	  pages written and WAL-logged in one go; and the empty filter of an
 *	  unlogged table's init fork.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include <limits.h>
#include <math.h>

#include "access/table.h"
#include "access/tableam.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/memutils.h"

/* the smallest default capacity, and the growth room of the default rule */
#define BF_DEFAULT_MIN_CAPACITY 100000
#define BF_DEFAULT_GROWTH	2.0

/*
 * The filter parameters for a new index: the reloptions, or for an unset
 * capacity the default rule: twice the table's estimated rows (the
 * planner's estimate, which also covers never-analyzed tables), at least
 * BF_DEFAULT_MIN_CAPACITY, reduced if needed to the largest filter.  With
 * growth, the metapage is version 2 and layers its one layer: sized for
 * capacity at the first layer's share of the rate (FORMAT.md section 9),
 * or, when the table already holds more than half that many rows, for
 * twice its rows by the same rule: a REINDEX of an index that grew many
 * layers compacts it into one.
 */
static void
bf_build_meta(Relation heap, Relation index, BfIndexMeta *meta, BfIndexLayers *layers)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	BfTypeInfo	cols[BLOOM_MAX_RECORD_FIELDS];
	int64		capacity = opts ? opts->capacity : 0;
	double		fpr = opts ? opts->fpr : 0.01;
	int			growth = opts ? opts->growth : 0;
	double		layer_fpr = growth ? fpr * (1.0 - BLOOM_GROW_RATIO) : fpr;
	uint64		nblocks;
	int			nhashes;
	int			ncols;

	ncols = bf_key_columns(index, cols, CurrentMemoryContext);
	/* (an empty table is estimated at ten pages: no rows to size for) */
	if (capacity <= 0 ||
		(growth > 0 && heap && RelationGetNumberOfBlocks(heap) > 0))
	{
		BlockNumber pages = 0;
		double		tuples = 0;
		double		allvisfrac = 0;
		double		want;
		/* the least it may be: what the reloption asked for */
		double		least = capacity > 0 ? (double) capacity : (double) BF_DEFAULT_MIN_CAPACITY;

		if (heap)
			table_relation_estimate_size(heap, NULL, &pages, &tuples, &allvisfrac);
		want = Max(BF_DEFAULT_GROWTH * tuples, least);
		want = Min(want, (double) INT_MAX);
		while (want > least &&
			   (!bloom_size_for(want, layer_fpr, &nblocks, &nhashes) ||
				nblocks > BLOOM_MAX_BLOCKS))
			want = Max(want * 0.9, least);
		capacity = (int64) ceil(want);
	}
	bf_size_or_error(capacity, layer_fpr, &nblocks, &nhashes);

	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_INDEX_MAGIC;
	meta->version = growth ? BF_INDEX_VERSION_GROWING : BF_INDEX_VERSION;
	meta->nblocks = nblocks;
	meta->nhashes = (uint32) nhashes;
	meta->blocks_per_page = BF_BLOCKS_PER_PAGE;
	meta->seed = 0;
	meta->capacity = capacity;
	meta->fpr = fpr;
	bf_key_family(meta, cols, ncols);

	memset(layers, 0, sizeof(*layers));
	layers->growth = (uint32) growth;
	layers->nlayers = 1;
	layers->capacity = capacity;
	layers->fpr = fpr;
	layers->ratio = growth ? BLOOM_GROW_RATIO : 0.0;
	layers->layer[0].nblocks = nblocks;
	layers->layer[0].nhashes = (uint32) nhashes;
	layers->layer[0].capacity = capacity;
	layers->layer[0].fpr = layer_fpr;
}

typedef struct BfBuildState
{
	BfIndexState st;
	uint8	   *bits;
	BfGrowAdder grow;			/* a growing index: its layers as a value */
	double		indtuples;
	MemoryContext tmpcxt;
} BfBuildState;

static void
bf_build_callback(Relation index, ItemPointer tid, Datum *values,
				  bool *isnull, bool tupleIsAlive, void *state)
{
	BfBuildState *bs = (BfBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmpcxt);
	bool		skip;
	uint64		h = bf_index_hash_key(&bs->st, values, isnull, &skip);

	if (!skip)
	{
		if (bs->bits)
			bloom_set_hash(bs->bits, bs->st.meta.nblocks, (int) bs->st.meta.nhashes, h);
		else
			bf_grow_adder_add_hash(&bs->grow, h);
		bs->indtuples += 1;
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
}

/* write count data pages from blocks (nblocks of them) */
static void
bf_write_datapages(Relation index, const uint8 *blocks, uint64 nblocks)
{
	uint64		npages = bloom_paged_npages(nblocks, BF_BLOCKS_PER_PAGE);

	for (uint64 p = 0; p < npages; p++)
	{
		uint64		first = p * BF_BLOCKS_PER_PAGE;
		uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, nblocks - first);
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, MAIN_FORKNUM);
		bf_fill_datapage(BufferGetPage(buf), blocks + first * BLOOM_BLOCK_BYTES, n);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
}

/*
 * An empty growing value with the index's first layer and key family, to
 * add the table's keys to (bf_grow_adder_add_hash): the layers it grows
 * are those the index gets.
 */
static struct varlena *
bf_build_growing_value(const BfIndexMeta *meta, const BfIndexLayers *layers)
{
	size_t		size = VARHDRSZ + bloom_grow_size(meta->nblocks);
	struct varlena *vl = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	BloomGrowHeader gh;

	SET_VARSIZE(vl, size);
	bloom_grow_init(BF_PAYLOAD(vl), &gh, layers->capacity, layers->fpr, layers->ratio,
					layers->growth, meta->nblocks, (int) meta->nhashes, meta->seed);
	gh.first.family = meta->family;
	gh.first.detail = meta->detail;
	bloom_header_write(BF_PAYLOAD(vl) + BLOOM_GROW_HEADER_SIZE, &gh.first);
	return vl;
}

/*
 * Build the whole filter in memory from a table scan, then write the
 * pages and WAL-log them in one go (as GiST's sorted build does).  A
 * growing index is built as a growing value, whose layers become the
 * index's, one after the other.
 */
IndexBuildResult *
bfbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BfBuildState bs;
	double		reltuples;
	Buffer		buf;
	struct varlena *grown = NULL;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	memset(&bs, 0, sizeof(bs));
	bf_build_meta(heap, index, &bs.st.meta, &bs.st.layers);
	(void) bf_key_columns(index, bs.st.cols, CurrentMemoryContext);
	if (bs.st.meta.version == BF_INDEX_VERSION_GROWING)
		bf_grow_adder_init(&bs.grow, bf_build_growing_value(&bs.st.meta, &bs.st.layers), NULL);
	else
		bs.bits = palloc_extended(bs.st.meta.nblocks * BLOOM_BLOCK_BYTES,
								  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomfilter build temporary context",
									  ALLOCSET_DEFAULT_SIZES);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   bf_build_callback, &bs, NULL);

	/* the layers of a growing index: where each one's pages start */
	if (bs.bits == NULL)
	{
		BloomGrowHeader gh;
		BloomHeader h;
		size_t		next = 0;
		uint32		page = 0;

		grown = bf_grow_adder_finish(&bs.grow);
		bf_grow_read(grown, &gh, ERRCODE_INTERNAL_ERROR);
		bs.st.layers.nlayers = 0;
		while (bloom_grow_next_layer(BF_PAYLOAD(grown), &gh, &next, &h) != 0)
		{
			BfIndexLayer *l = &bs.st.layers.layer[bs.st.layers.nlayers++];

			l->nblocks = h.nblocks;
			l->nhashes = h.nhashes;
			l->first_page = page;
			l->capacity = h.capacity;
			l->fpr = h.fpr;
			page += (uint32) bloom_paged_npages(h.nblocks, BF_BLOCKS_PER_PAGE);
		}
	}

	/* metapage, then the data pages */
	buf = bf_extend_relation(index, MAIN_FORKNUM);
	Assert(BufferGetBlockNumber(buf) == BF_METAPAGE_BLKNO);
	bf_fill_metapage(BufferGetPage(buf), &bs.st.meta, &bs.st.layers);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);
	if (bs.bits)
	{
		bf_write_datapages(index, bs.bits, bs.st.meta.nblocks);
		pfree(bs.bits);
	}
	else
	{
		BloomGrowHeader gh;
		BloomHeader h;
		size_t		next = 0;
		size_t		off;

		bf_grow_read(grown, &gh, ERRCODE_INTERNAL_ERROR);
		while ((off = bloom_grow_next_layer(BF_PAYLOAD(grown), &gh, &next, &h)) != 0)
			bf_write_datapages(index, BF_PAYLOAD(grown) + off + BLOOM_HEADER_SIZE, h.nblocks);
		pfree(grown);
	}
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, RelationGetNumberOfBlocks(index), true);

	MemoryContextDelete(bs.tmpcxt);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * The init fork of an index on an UNLOGGED table: an empty filter of the
 * size the main fork got, so that after a crash the reset index has the
 * same parameters.  WAL-logged, as init forks must be.
 */
void
bfbuildempty(Relation index)
{
	BfIndexMeta meta;
	BfIndexLayers layers;
	Relation	heap;
	uint64		npages;
	Buffer		buf;

	/* the caller (index_build) holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	bf_build_meta(heap, index, &meta, &layers);
	table_close(heap, NoLock);

	npages = bloom_paged_npages(meta.nblocks, BF_BLOCKS_PER_PAGE);
	for (uint64 p = 0; p <= npages; p++)
	{
		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, INIT_FORKNUM);
		START_CRIT_SECTION();
		if (p == 0)
			bf_fill_metapage(BufferGetPage(buf), &meta, &layers);
		else
			bf_fill_datapage(BufferGetPage(buf), NULL, 0);
		MarkBufferDirty(buf);
		log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
}


bool
bf_is_bloomfilter_index(Relation index)
{
	return index->rd_rel->relkind == RELKIND_INDEX && bf_is_bloomfilter_am(index);
}

/* an index of the bloomfilter access method: a leaf's or a partitioned one */
bool
bf_is_bloomfilter_am(Relation index)
{
	return index->rd_indam != NULL && index->rd_indam->ambuild == bfbuild;
}
