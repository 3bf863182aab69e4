/*-------------------------------------------------------------------------
 *
 * bf_index_insert.c
 *	  Inserting keys into a bloomfilter index.  A key sets k bits of one
 *	  512-bit block, on exactly one data page.  For a WAL-logged index the
 *	  keys a transaction inserts are buffered (bf_index_pending.c) and set page
 *	  by page, one WAL record per page; an unlogged or temporary index has
 *	  no WAL to save, so its keys are set at once.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"

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
	if (bf_insert_page(index, &st.meta, 1 + st.meta.first_page + bf_page_of(h, &st.meta), &h, 1))
		bf_index_grow(index, st.meta.first_page);
	return false;
}
