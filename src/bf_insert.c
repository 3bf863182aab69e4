/*-------------------------------------------------------------------------
 *
 * bf_insert.c
 *	  Inserting keys into a bloomfilter index: set the key's bits on its
 *	  one data page, WAL-logged.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

#include "access/generic_xlog.h"
#include "storage/bufmgr.h"

/*
 * Set the bits of one key: test under a share lock (a key already present
 * writes nothing, not even WAL), else set them under the exclusive lock of
 * that one data page with a generic WAL record of the changed bytes.
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
	BlockNumber blkno;
	Size		offset;
	Buffer		buf;
	GenericXLogState *xlog;
	Page		page;

	bf_index_state(index, &st);
	h = bf_index_hash_key(&st, values, isnull, &skip);
	if (skip)
		return false;
	bf_locate(h, &st.meta, &blkno, &offset);

	buf = ReadBuffer(index, blkno);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	if (bloom_block_test((const uint8 *) BufferGetPage(buf) + offset,
						 (int) st.meta.nhashes, h))
	{
		UnlockReleaseBuffer(buf);
		return false;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);

	xlog = GenericXLogStart(index);
	page = GenericXLogRegisterBuffer(xlog, buf, 0);
	if (bloom_block_set((uint8 *) page + offset, (int) st.meta.nhashes, h))
		GenericXLogFinish(xlog);
	else
		GenericXLogAbort(xlog); /* another backend set them meanwhile */
	UnlockReleaseBuffer(buf);
	return false;
}

