/*-------------------------------------------------------------------------
 *
 * bf_insert.c
 *	  Inserting keys into a bloomfilter index.  A key sets k bits of one
 *	  512-bit block, on exactly one data page.  For a WAL-logged index the
 *	  keys a transaction inserts are buffered (bf_pending.c) and set page
 *	  by page, one WAL record per page; an unlogged or temporary index has
 *	  no WAL to save, so its keys are set at once.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

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

/*
 * Set the bits of n keys (hashes) that all live on data page blkno.
 *
 * Few keys: test them under a share lock first (keys already present
 * write nothing, not even WAL), then set the others under the exclusive
 * lock with one generic WAL record of the changed bytes.  Many keys: set
 * them under the exclusive lock and log the whole page.
 */
void
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
			return;
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

	/*
	 * The newest layer of a growing index holds its capacity when a page of
	 * it estimates a rate above the layer's target: keys spread evenly over
	 * its pages, so one page tells.  Every page written with many keys is
	 * looked at, and one in 64 of the single-key writes (chosen by the hash,
	 * i.e. at random): a layer overfills by a few dozen keys at most.
	 */
	if (full)
		bf_index_grow(index, meta->first_page);
}

/*
 * aminsert: hash the key (a NULL single-column key is skipped, as bf_add
 * skips NULL), then buffer it or set it.
 */
bool
bfinsert(Relation index, Datum *values, bool *isnull, ItemPointer ht_ctid,
		 Relation heapRel, IndexUniqueCheck checkUnique,
		 bool indexUnchanged,
		 IndexInfo *indexInfo)
{
	BfIndexState st;
	bool		skip;
	uint64		h;

	bf_index_state(index, &st);
	h = bf_index_hash_key(&st, values, isnull, &skip);
	if (skip)
		return false;
	if (RelationNeedsWAL(index) && bf_pending_add(index, &st.meta, h))
		return false;
	/* a growing index: a key an older layer holds is not added again */
	if (st.layers.nlayers > 1 &&
		bf_index_test_hash(index, &st.layers, st.layers.nlayers - 1, h, NULL))
		return false;
	bf_insert_page(index, &st.meta, 1 + st.meta.first_page + bf_page_of(h, &st.meta), &h, 1);
	return false;
}
