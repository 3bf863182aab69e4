/*-------------------------------------------------------------------------
 *
 * bf_track_places.c
 *	  Where a tracked filter's registry row and chunk rows lie, kept by a
 *	  backend between statements, so that a lookup of the trigger method
 *	  reads two heap pages rather than two indexes and two heap pages.
 *
 * Only places are kept, never what a row says.  A place is the root of
 * the row's HOT chain, which the row keeps across HOT updates (a sync
 * trigger's write of a chunk, most updates of a registry row).  Each use
 * fetches, under the caller's snapshot and with the page share-locked,
 * the version of that chain the snapshot sees, as an index scan would
 * (heap_hot_search_buffer), then checks that it is the row wanted by its
 * key: (tbl, col) of the registry, (id, chunk) of a chunk, both unique,
 * so a version the snapshot sees with that key is the one it would find
 * through the index.  Anything else -- a place past the end of the table,
 * a pruned or reused line pointer, a chain ended by an update that was not
 * HOT, a row deleted by a rebuild, untrack or truncation, a version the
 * snapshot does not see (a rolled-back subtransaction, a later writer) --
 * falls back to the index (the callers: bf_registry_fetch_kept,
 * bf_chunks_test_hash), and the place found there is kept instead.  A
 * chunk's bits are always read from the page, under its lock.
 *
 * Chunk places are learned a window of BF_PLACE_WINDOW chunks at a time,
 * from the primary key's entries alone (one ordered index scan, no heap
 * access): a key's chunk is then found without an index descent, for
 * any key, after a handful of misses per window.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* chunks whose places one index scan learns */
#define BF_PLACE_WINDOW 1024

struct BfChunkPlaces
{
	MemoryContext mcxt;
	int64		id;				/* the registry row the places are of */
	int32		nwindows;
	ItemPointerData **windows;	/* NULL until learned */
};

/* ---- fetching a row version by its place ---- */

/*
 * The version of the HOT chain rooted at *root that snap sees, in *tup,
 * with *buf pinned and share-locked; false (nothing held, *buf invalid)
 * if none.
 */
bool
bf_place_fetch(Relation rel, const ItemPointerData *root, Snapshot snap, Buffer *buf,
			   HeapTuple tup)
{
	ItemPointerData tid = *root;

	/* a place learned before the table was truncated by VACUUM */
	if (!ItemPointerIsValid(&tid) ||
		ItemPointerGetBlockNumber(&tid) >= RelationGetNumberOfBlocks(rel))
		return false;
	*buf = ReadBuffer(rel, ItemPointerGetBlockNumber(&tid));
	LockBuffer(*buf, BUFFER_LOCK_SHARE);
	if (heap_hot_search_buffer(&tid, rel, *buf, snap, tup, NULL, true))
		return true;
	UnlockReleaseBuffer(*buf);
	*buf = InvalidBuffer;
	return false;
}

/* the root of the HOT chain that version *tid belongs to (invalid if none) */
void
bf_place_root(Relation rel, const ItemPointerData *tid, ItemPointerData *root)
{
	OffsetNumber roots[MaxHeapTuplesPerPage];
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buf = ReadBuffer(rel, blk);

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	heap_get_root_tuples(BufferGetPage(buf), roots);
	UnlockReleaseBuffer(buf);
	if (off >= FirstOffsetNumber && off <= MaxHeapTuplesPerPage &&
		roots[off - 1] != InvalidOffsetNumber)
		ItemPointerSet(root, blk, roots[off - 1]);
	else
		ItemPointerSetInvalid(root);
}

/* ---- chunk rows ---- */

BfChunkPlaces *
bf_chunk_places_new(MemoryContext mcxt)
{
	BfChunkPlaces *p = MemoryContextAllocZero(mcxt, sizeof(BfChunkPlaces));

	p->mcxt = mcxt;
	return p;
}

/* forget every place (the memory of the learned windows too) */
void
bf_chunk_places_reset(BfChunkPlaces *p)
{
	for (int32 w = 0; w < p->nwindows; w++)
		if (p->windows[w])
			pfree(p->windows[w]);
	if (p->windows)
		pfree(p->windows);
	p->windows = NULL;
	p->nwindows = 0;
	p->id = 0;
}

/* the places of row id's nchunks chunks (those of another row or fewer forgotten) */
static void
places_for(BfChunkPlaces *p, int64 id, int32 nchunks)
{
	int32		need = (nchunks + BF_PLACE_WINDOW - 1) / BF_PLACE_WINDOW;

	if (p->id == id && p->nwindows >= need)
		return;
	bf_chunk_places_reset(p);
	p->windows = MemoryContextAllocZero(p->mcxt, sizeof(ItemPointerData *) * need);
	p->nwindows = need;
	p->id = id;
}

/*
 * Learn the places of window w's chunks from the primary key's entries:
 * the roots their index entries point at.  A chunk with several entries
 * (an update that was not HOT, not yet vacuumed) keeps the last; a wrong
 * one is found out when used.
 */
static void
learn_window(Relation rel, Relation idx, BfChunkPlaces *p, int32 w, Snapshot snap)
{
	ItemPointerData *win = MemoryContextAlloc(p->mcxt,
											  sizeof(ItemPointerData) * BF_PLACE_WINDOW);
	int32		first = w * BF_PLACE_WINDOW;
	ScanKeyData key[2];
	IndexScanDesc scan;
	ItemPointer tid;

	for (int i = 0; i < BF_PLACE_WINDOW; i++)
		ItemPointerSetInvalid(&win[i]);
	ScanKeyInit(&key[0], Anum_chunk_id, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(p->id));
	ScanKeyInit(&key[1], Anum_chunk_chunk, BTGreaterEqualStrategyNumber, F_INT4GE,
				Int32GetDatum(first));
	scan = bf_index_beginscan(rel, idx, snap, 2, 0);
	scan->xs_want_itup = true;
	index_rescan(scan, key, 2, NULL, 0);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		int32		c = DatumGetInt32(index_getattr(scan->xs_itup, 2, scan->xs_itupdesc,
												   &isnull));

		if (c >= first + BF_PLACE_WINDOW)
			break;
		win[c - first] = *tid;
	}
	index_endscan(scan);
	p->windows[w] = win;
}

static bool
chunk_key_is(Relation rel, HeapTuple tup, int64 id, int32 c)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;

	return DatumGetInt64(heap_getattr(tup, Anum_chunk_id, desc, &isnull)) == id &&
		DatumGetInt32(heap_getattr(tup, Anum_chunk_chunk, desc, &isnull)) == c;
}

/*
 * The version of chunk c (of nchunks) of registry row id that snap sees,
 * found at its kept place: in *tup, with *buf pinned and share-locked (the
 * caller releases it with UnlockReleaseBuffer).  False (nothing held) when
 * the place is unknown or wrong: the caller asks the index, and keeps the
 * place it finds there (bf_chunk_place_set).  The places of c's window
 * are learned from index idxoid at its first use, opened into *idx then
 * (NULL till then).
 */
bool
bf_chunk_place_fetch(Relation rel, Oid idxoid, Relation *idx, BfChunkPlaces *p, int64 id,
					 int32 nchunks, int32 c, Snapshot snap, Buffer *buf, HeapTuple tup)
{
	places_for(p, id, nchunks);
	if (p->windows[c / BF_PLACE_WINDOW] == NULL)
	{
		/* the chunks' primary key, opened when first needed (the caller closes it) */
		if (*idx == NULL)
			*idx = index_open(idxoid, AccessShareLock);
		learn_window(rel, *idx, p, c / BF_PLACE_WINDOW, snap);
	}
	if (bf_place_fetch(rel, &p->windows[c / BF_PLACE_WINDOW][c % BF_PLACE_WINDOW], snap,
					   buf, tup))
	{
		if (chunk_key_is(rel, tup, id, c))
			return true;
		UnlockReleaseBuffer(*buf);
		*buf = InvalidBuffer;
	}
	return false;
}

/* chunk c, fetched through the index at version *tid: keep its place */
void
bf_chunk_place_set(Relation rel, BfChunkPlaces *p, int32 c, const ItemPointerData *tid)
{
	if (c / BF_PLACE_WINDOW < p->nwindows && p->windows[c / BF_PLACE_WINDOW] != NULL)
		bf_place_root(rel, tid, &p->windows[c / BF_PLACE_WINDOW][c % BF_PLACE_WINDOW]);
}
