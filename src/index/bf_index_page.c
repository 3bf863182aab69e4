/*-------------------------------------------------------------------------
 *
 * bf_index_page.c
 *	  The pages of a bloomfilter index: images of a new metapage and data
 *	  page, setting keys' bits on a data page (generic WAL for few keys,
 *	  the whole page for many), and the fill test of a growing index's
 *	  newest layer.  Everything that writes bits goes through here.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

/*
 * From this many keys on one page, the page is WAL-logged whole: a delta
 * of that many scattered blocks would be nearly as large, and computing a
 * generic WAL delta compares the whole page byte by byte.
 */
#define BF_FULL_IMAGE_KEYS	64

/* ---- page images ---- */

/* a metapage (with the layer table of a growing index) */
void
bf_fill_metapage(Page page, const BfIndexMeta *meta, const BfIndexLayers *layers)
{
	PageInit(page, BLCKSZ, 0);
	memcpy(page + BF_PAGE_BITS_OFFSET, meta, sizeof(BfIndexMeta));
	/* pd_lower past the contents, so WAL full-page images keep them */
	((PageHeader) page)->pd_lower = BF_PAGE_BITS_OFFSET + sizeof(BfIndexMeta);
	if (meta->version == BF_INDEX_VERSION_GROWING)
	{
		memcpy(page + BF_LAYERS_OFFSET, layers, sizeof(BfIndexLayers));
		((PageHeader) page)->pd_lower = BF_LAYERS_OFFSET + sizeof(BfIndexLayers);
	}
}

/* a data page holding nblocks filter blocks from blocks (zeros if NULL) */
void
bf_fill_datapage(Page page, const uint8 *blocks, uint64 nblocks)
{
	PageInit(page, BLCKSZ, 0);
	if (blocks)
		memcpy(page + BF_PAGE_BITS_OFFSET, blocks, nblocks * BLOOM_BLOCK_BYTES);
	((PageHeader) page)->pd_lower = BF_PAGE_BITS_OFFSET + BF_BLOCKS_PER_PAGE * BLOOM_BLOCK_BYTES;
}

/* ---- setting bits ---- */

/*
 * Does the data page of the newest layer (meta is its view) estimate a
 * false-positive rate above the layer's target?  Its blocks are those of
 * the layer that lie on it.
 */
bool
bf_layer_page_full(const BfIndexMeta *meta, BlockNumber blkno, Page page)
{
	uint64		first = (uint64) (blkno - 1 - meta->first_page) * BF_BLOCKS_PER_PAGE;
	uint64		n;

	if (first >= meta->nblocks)
		return false;
	n = Min((uint64) BF_BLOCKS_PER_PAGE, meta->nblocks - first);
	return bloom_fill_fpr((const uint8 *) page + BF_PAGE_BITS_OFFSET, n,
						  (int) meta->nhashes, NULL) > meta->fpr;
}

/*
 * Set the bits of n keys (hashes) that all live on data page blkno.
 *
 * Few keys: test them under a share lock first (keys already present
 * write nothing, not even WAL), then set the others under the exclusive
 * lock with one generic WAL record of the changed bytes.  Many keys: set
 * them under the exclusive lock and log the whole page.
 *
 * Returns true when the newest layer of a growing index holds its
 * capacity: a page of it estimates a rate above the layer's target (keys
 * spread evenly over its pages, so one page tells).  Every page written
 * with many keys is looked at, and one in 64 of the single-key writes
 * (chosen by the hash, i.e. at random): a layer overfills by a few dozen
 * keys at most.  The caller then grows the index (bf_index_grow).
 */
bool
bf_insert_page(Relation index, const BfIndexMeta *meta, BlockNumber blkno,
			   const uint64 *hashes, int n)
{
	Buffer		buf = ReadBuffer(index, blkno);
	Page		page;
	bool		changed = false;
	bool		full = false;

	if (n < BF_FULL_IMAGE_KEYS)
	{
		bool		all = true;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buf);
		for (int i = 0; all && i < n; i++)
			all = bloom_block_test((const uint8 *) page + bf_offset_of(hashes[i], meta),
								   (int) meta->nhashes, hashes[i]);
		LockBuffer(buf, BUFFER_LOCK_UNLOCK);
		if (all)
		{
			ReleaseBuffer(buf);
			return false;
		}
	}
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (n < BF_FULL_IMAGE_KEYS)
	{
		GenericXLogState *xlog = GenericXLogStart(index);

		page = GenericXLogRegisterBuffer(xlog, buf, 0);
		for (int i = 0; i < n; i++)
			changed |= bloom_block_set((uint8 *) page + bf_offset_of(hashes[i], meta),
									   (int) meta->nhashes, hashes[i]);
		/* is the layer full?  Looked at for one write in 64: see below */
		if (changed && meta->version == BF_INDEX_VERSION_GROWING &&
			(hashes[0] & 63) == 0)
			full = bf_layer_page_full(meta, blkno, page);
		if (changed)
			GenericXLogFinish(xlog);
		else
			GenericXLogAbort(xlog); /* another backend set them meanwhile */
	}
	else
	{
		page = BufferGetPage(buf);
		START_CRIT_SECTION();
		for (int i = 0; i < n; i++)
			changed |= bloom_block_set((uint8 *) page + bf_offset_of(hashes[i], meta),
									   (int) meta->nhashes, hashes[i]);
		if (changed)
		{
			MarkBufferDirty(buf);
			if (RelationNeedsWAL(index))
				log_newpage_buffer(buf, true);
		}
		END_CRIT_SECTION();
		if (changed && meta->version == BF_INDEX_VERSION_GROWING)
			full = bf_layer_page_full(meta, blkno, page);
	}
	UnlockReleaseBuffer(buf);
	return full;
}
