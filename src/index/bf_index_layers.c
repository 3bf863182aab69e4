/*-------------------------------------------------------------------------
 *
 * bf_index_layers.c
 *	  The layers of a bloomfilter index: the layer table of a growing
 *	  index's metapage (read, validated, written), the per-layer views the
 *	  insert and probe code works on, the fill test that says the newest
 *	  layer is full, and growth: a new layer of data pages appended at the
 *	  end of the relation.
 *
 * A growing index's layers are sized as those of a growing bloomfilter
 * value (FORMAT.md section 9): layer i for capacity * growth^i keys at the
 * rate fpr * (1 - ratio) * ratio^i, so that bf_index_filter can give them
 * as one growing value.  Growth is decided from the bits, never from a
 * count of inserts (the index keeps none): when a page of the newest layer
 * that an insert wrote estimates a false-positive rate above the layer's
 * target (docs/FORMAT.md section 6.2: the mean of (bits set / 512)^k over
 * its blocks), the layer holds its capacity.
 *
 * Crash safety and concurrency: the new layer's pages are written and
 * WAL-logged before the metapage that names them, all under the relation
 * extension lock, which serializes growers; pages a crash leaves unnamed
 * at the end of the relation are skipped by the next growth.  Every
 * reader of a growing index takes the layer count from the metapage when
 * it reads the index state (bf_index_state), so a lookup sees every layer
 * that existed before its snapshot: a key is set in a layer only after the
 * metapage names it, and committed only after that.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"

/* the view of one layer: the metapage's key columns, the layer's sizing */
void
bf_layer_view(const BfIndexMeta *meta, const BfIndexLayer *layer, BfIndexMeta *view)
{
	*view = *meta;
	view->nblocks = layer->nblocks;
	view->nhashes = layer->nhashes;
	view->first_page = layer->first_page;
	view->capacity = layer->capacity;
	view->fpr = layer->fpr;
}

/* data pages up to the end of the newest layer */
uint32
bf_index_data_pages(const BfIndexLayers *layers)
{
	const BfIndexLayer *last = &layers->layer[layers->nlayers - 1];

	return last->first_page + (uint32) bloom_paged_npages(last->nblocks, BF_BLOCKS_PER_PAGE);
}

/*
 * The layer table of a metapage (meta read from it already).  NULL
 * problem: valid; else what is wrong, for the caller's error.
 */
const char *
bf_layers_read(Page page, const BfIndexMeta *meta, BlockNumber relpages,
			   BfIndexLayers *layers)
{
	uint32		next_page = 0;
	uint64		blocks = 0;

	if (meta->version == BF_INDEX_VERSION)
	{
		memset(layers, 0, sizeof(*layers));
		layers->nlayers = 1;
		layers->capacity = meta->capacity;
		layers->fpr = meta->fpr;
		layers->layer[0].nblocks = meta->nblocks;
		layers->layer[0].nhashes = meta->nhashes;
		layers->layer[0].capacity = meta->capacity;
		layers->layer[0].fpr = meta->fpr;
		return NULL;
	}
	memcpy(layers, (const char *) page + BF_LAYERS_OFFSET, sizeof(*layers));
	if (layers->nlayers < 1 || layers->nlayers > BLOOM_GROW_MAX_LAYERS ||
		layers->growth < BLOOM_GROW_MIN_GROWTH || layers->growth > BLOOM_GROW_MAX_GROWTH ||
		!(layers->ratio > 0.0 && layers->ratio < 1.0) ||
		!(layers->fpr > 0.0 && layers->fpr < 1.0) || layers->capacity < 1)
		return "The layer table's growth, rates or number of layers are out of range.";
	for (uint32 i = 0; i < layers->nlayers; i++)
	{
		const BfIndexLayer *l = &layers->layer[i];
		int64		capacity;
		double		fpr;

		if (l->nblocks < 1 || l->nblocks > BLOOM_MAX_BLOCKS ||
			l->nhashes < 1 || l->nhashes > BLOOM_MAX_HASHES)
			return "A layer's size or number of hashes is out of range.";
		if (!bloom_grow_layer_target(layers->capacity, layers->fpr, layers->ratio,
									 layers->growth, (int) i, &capacity, &fpr) ||
			l->capacity != capacity || l->fpr != fpr)
			return "A layer's capacity or rate disagrees with the index's growth.";
		/* in order, not overlapping; pages a crash left may lie between */
		if (l->first_page < next_page)
			return "The layers' pages overlap.";
		next_page = l->first_page + (uint32) bloom_paged_npages(l->nblocks, BF_BLOCKS_PER_PAGE);
		blocks += l->nblocks;
	}
	if (layers->layer[0].first_page != 0 || layers->layer[0].nblocks != meta->nblocks ||
		layers->layer[0].nhashes != meta->nhashes || blocks > BLOOM_MAX_BLOCKS)
		return "Layer 0 disagrees with the metapage, or the layers are too large.";
	if ((BlockNumber) next_page + 1 > relpages)
		return "The index has fewer pages than its layers need.";
	return NULL;
}

/*
 * Call fn for every step-th data page of layer l, in order, each under a
 * share lock, with the number of its first filter block and of the
 * layer's blocks on it; stop when fn returns false.  The one loop over a
 * layer's pages: reading its bits, change sets, the fill test.
 */
void
bf_layer_pages(Relation index, const BfIndexLayer *l, uint64 step,
			   BufferAccessStrategy strategy, BfPageFn fn, void *arg)
{
	uint64		npages = bloom_paged_npages(l->nblocks, BF_BLOCKS_PER_PAGE);

	for (uint64 p = 0; p < npages; p += step)
	{
		uint64		first = p * BF_BLOCKS_PER_PAGE;
		uint32		n = (uint32) Min((uint64) BF_BLOCKS_PER_PAGE, l->nblocks - first);
		Buffer		buf;
		bool		more;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, (BlockNumber) (1 + l->first_page + p),
								 RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		more = fn(arg, first, n, BufferGetPage(buf));
		UnlockReleaseBuffer(buf);
		if (!more)
			return;
	}
}

/*
 * Read the whole bit array of one layer of a leaf index (the only one of
 * an index that does not grow) into dst (nblocks * 64 bytes), one page at
 * a time under its share lock, with a bulk-read strategy so a large filter
 * does not evict shared buffers.
 */
static bool
copy_page_bits(void *arg, uint64 first, uint32 n, Page page)
{
	memcpy((uint8 *) arg + first * BLOOM_BLOCK_BYTES,
		   (const uint8 *) page + BF_PAGE_BITS_OFFSET, (size_t) n * BLOOM_BLOCK_BYTES);
	return true;
}

void
bf_read_bits(Relation index, const BfIndexLayer *layer, uint8 *dst)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);

	bf_layer_pages(index, layer, 1, strategy, copy_page_bits, dst);
	FreeAccessStrategy(strategy);
}

/* pages of the newest layer read to confirm that it is full */
#define BF_FULL_SAMPLE_PAGES 64

/*
 * Is the layer full, by the estimated rate of up to BF_FULL_SAMPLE_PAGES
 * of its pages spread over it?  One page's estimate varies: the first of
 * many pages to pass the target passes it early, and a growth on that
 * alone would leave layers part empty.
 */
typedef struct FillSum
{
	int			nhashes;
	double		sum;			/* of each page's rate times its blocks */
	uint64		blocks;
} FillSum;

static bool
add_page_fill(void *arg, uint64 first, uint32 n, Page page)
{
	FillSum    *fs = (FillSum *) arg;

	fs->sum += bloom_fill_fpr((const uint8 *) page + BF_PAGE_BITS_OFFSET, n,
							  fs->nhashes, NULL) * (double) n;
	fs->blocks += n;
	return true;
}

static bool
bf_layer_full(Relation index, const BfIndexLayer *l)
{
	uint64		npages = bloom_paged_npages(l->nblocks, BF_BLOCKS_PER_PAGE);
	FillSum		fs = {(int) l->nhashes, 0, 0};

	bf_layer_pages(index, l, Max(npages / BF_FULL_SAMPLE_PAGES, 1), NULL, add_page_fill, &fs);
	return fs.sum / (double) fs.blocks > l->fpr;
}

/*
 * Append the next layer, unless another backend already did: full_first_page
 * is the first page of the layer found full.  A growing index that has its
 * 64 layers, or whose next layer would take it past the largest filter,
 * stays as it is (its newest layer fills on; lookups stay correct).
 */
void
bf_index_grow(Relation index, uint32 full_first_page)
{
	Buffer		metabuf;
	Page		metapage;
	BfIndexMeta meta;
	BfIndexLayers layers;
	BfIndexLayer *next;
	int64		capacity;
	double		fpr;
	uint64		nblocks;
	int			nhashes;
	uint64		npages;
	BlockNumber first;
	bool		needlock = !RELATION_IS_LOCAL(index);

	/* one grower at a time; readers and inserters are not held up */
	if (needlock)
		LockRelationForExtension(index, ExclusiveLock);
	metabuf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(metabuf, BUFFER_LOCK_SHARE);
	metapage = BufferGetPage(metabuf);
	memcpy(&meta, metapage + BF_PAGE_BITS_OFFSET, sizeof(meta));
	memcpy(&layers, metapage + BF_LAYERS_OFFSET, sizeof(layers));
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

	if (meta.version != BF_INDEX_VERSION_GROWING ||
		layers.nlayers < 1 || layers.nlayers >= BLOOM_GROW_MAX_LAYERS ||
		layers.layer[layers.nlayers - 1].first_page != full_first_page ||
		!bf_layer_full(index, &layers.layer[layers.nlayers - 1]) ||
		!bloom_grow_layer_target(layers.capacity, layers.fpr, layers.ratio, layers.growth,
								 (int) layers.nlayers, &capacity, &fpr) ||
		!bloom_size_for((double) capacity, fpr, &nblocks, &nhashes))
		goto done;
	{
		uint64		blocks = nblocks;

		for (uint32 i = 0; i < layers.nlayers; i++)
			blocks += layers.layer[i].nblocks;
		if (blocks > BLOOM_MAX_BLOCKS)
			goto done;
	}

	/* the new pages, empty, after every page there is */
	npages = bloom_paged_npages(nblocks, BF_BLOCKS_PER_PAGE);
	first = InvalidBlockNumber;
	for (uint64 p = 0; p < npages; p++)
	{
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, MAIN_FORKNUM);
		/* consecutive: no one else extends while we hold the lock */
		if (p == 0)
			first = BufferGetBlockNumber(buf);
		else if (BufferGetBlockNumber(buf) != first + p)
			elog(ERROR, "bloomfilter index \"%s\" grew by a page out of order",
				 RelationGetRelationName(index));
		START_CRIT_SECTION();
		bf_fill_datapage(BufferGetPage(buf), NULL, 0);
		MarkBufferDirty(buf);
		if (RelationNeedsWAL(index))
			log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}

	/* then the metapage that names them */
	next = &layers.layer[layers.nlayers];
	next->nblocks = nblocks;
	next->nhashes = (uint32) nhashes;
	next->first_page = first - 1;
	next->capacity = capacity;
	next->fpr = fpr;
	layers.nlayers++;
	LockBuffer(metabuf, BUFFER_LOCK_EXCLUSIVE);
	START_CRIT_SECTION();
	memcpy(metapage + BF_LAYERS_OFFSET, &layers, sizeof(layers));
	MarkBufferDirty(metabuf);
	if (RelationNeedsWAL(index))
		log_newpage_buffer(metabuf, true);
	END_CRIT_SECTION();
	LockBuffer(metabuf, BUFFER_LOCK_UNLOCK);

done:
	ReleaseBuffer(metabuf);
	if (needlock)
		UnlockRelationForExtension(index, ExclusiveLock);
}
