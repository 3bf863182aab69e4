/*-------------------------------------------------------------------------
 *
 * bf_build.c
 *	  Building a bloomfilter index: the filter's parameters (reloptions or
 *	  the default rule), one table scan setting bits in memory, then the
 *	  pages written and WAL-logged in one go; and the empty filter of an
 *	  unlogged table's init fork.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

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

static void
bf_build_meta(Relation heap, Relation index, BfIndexMeta *meta)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	BfTypeInfo	cols[BLOOM_MAX_RECORD_FIELDS];
	int64		capacity = opts ? opts->capacity : 0;
	double		fpr = opts ? opts->fpr : 0.01;
	uint64		nblocks;
	int			nhashes;
	int			ncols;

	ncols = bf_key_columns(index, cols, CurrentMemoryContext);
	if (capacity <= 0)
	{
		BlockNumber pages = 0;
		double		tuples = 0;
		double		allvisfrac = 0;
		double		want;

		if (heap)
			table_relation_estimate_size(heap, NULL, &pages, &tuples, &allvisfrac);
		want = Max(BF_DEFAULT_GROWTH * tuples, (double) BF_DEFAULT_MIN_CAPACITY);
		want = Min(want, (double) INT_MAX);
		while (want > BF_DEFAULT_MIN_CAPACITY &&
			   (!bloom_size_for(want, fpr, &nblocks, &nhashes) ||
				nblocks > BLOOM_MAX_BLOCKS))
			want *= 0.9;
		capacity = (int64) ceil(want);
	}
	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);

	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_INDEX_MAGIC;
	meta->version = BF_INDEX_VERSION;
	meta->nblocks = nblocks;
	meta->nhashes = (uint32) nhashes;
	meta->blocks_per_page = BF_BLOCKS_PER_PAGE;
	meta->seed = 0;
	meta->capacity = capacity;
	meta->fpr = fpr;
	bf_key_family(meta, cols, ncols);
}

typedef struct BfBuildState
{
	BfIndexState st;
	uint8	   *bits;
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
		bloom_set_hash(bs->bits, bs->st.meta.nblocks, (int) bs->st.meta.nhashes, h);
		bs->indtuples += 1;
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
}

/*
 * Build the whole filter in memory from a table scan, then write the
 * pages and WAL-log them in one go (as GiST's sorted build does).
 */
IndexBuildResult *
bfbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BfBuildState bs;
	double		reltuples;
	uint64		npages;
	Buffer		buf;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	memset(&bs, 0, sizeof(bs));
	bf_build_meta(heap, index, &bs.st.meta);
	(void) bf_key_columns(index, bs.st.cols, CurrentMemoryContext);
	bs.bits = palloc_extended(bs.st.meta.nblocks * BLOOM_BLOCK_BYTES,
							  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomfilter build temporary context",
									  ALLOCSET_DEFAULT_SIZES);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   bf_build_callback, &bs, NULL);

	/* metapage, then the data pages */
	buf = bf_extend_relation(index, MAIN_FORKNUM);
	Assert(BufferGetBlockNumber(buf) == BF_METAPAGE_BLKNO);
	bf_fill_metapage(BufferGetPage(buf), &bs.st.meta);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);

	npages = bloom_paged_npages(bs.st.meta.nblocks, BF_BLOCKS_PER_PAGE);
	for (uint64 p = 0; p < npages; p++)
	{
		uint64		first = p * BF_BLOCKS_PER_PAGE;
		uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, bs.st.meta.nblocks - first);

		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, MAIN_FORKNUM);
		bf_fill_datapage(BufferGetPage(buf), bs.bits + first * BLOOM_BLOCK_BYTES, n);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, (BlockNumber) (npages + 1), true);

	pfree(bs.bits);
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
	Relation	heap;
	uint64		npages;
	Buffer		buf;

	/* the caller (index_build) holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	bf_build_meta(heap, index, &meta);
	table_close(heap, NoLock);

	npages = bloom_paged_npages(meta.nblocks, BF_BLOCKS_PER_PAGE);
	for (uint64 p = 0; p <= npages; p++)
	{
		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, INIT_FORKNUM);
		START_CRIT_SECTION();
		if (p == 0)
			bf_fill_metapage(BufferGetPage(buf), &meta);
		else
			bf_fill_datapage(BufferGetPage(buf), NULL, 0);
		MarkBufferDirty(buf);
		log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
}

