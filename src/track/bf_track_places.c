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
 * falls back to the index, and the place found there is kept instead.
 * A chunk's bits are always read from the page, under its lock.
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
 * with *buf pinned and share-locked; false (nothing held) if none.
 */
static bool
fetch_root(Relation rel, const ItemPointerData *root, Snapshot snap, Buffer *buf,
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
	return false;
}

/* the root of the HOT chain that version *tid belongs to (invalid if none) */
static void
root_of(Relation rel, const ItemPointerData *tid, ItemPointerData *root)
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

/* ---- the registry row ---- */

static bool
registry_key_is(Relation rel, HeapTuple tup, Oid relid, const char *colname)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;

	return DatumGetObjectId(heap_getattr(tup, Anum_bf_registry_tbl, desc, &isnull)) == relid &&
		strcmp(NameStr(*DatumGetName(heap_getattr(tup, Anum_bf_registry_col, desc, &isnull))),
			   colname) == 0;
}

/*
 * The registry row of (relid, colname) that snap sees, through the place
 * kept in *place: BF_KEPT_SAME when it is the version *place last saw
 * (*out untouched: the caller's copy of it is still right), BF_KEPT_NEW
 * when decoded into *out, BF_KEPT_NONE when there is none.
 */
BfFetchKept
bf_registry_fetch_kept(const BfExt *ext, BfRowPlace *place, Oid relid,
					   const char *colname, Snapshot snap, RegRow *out)
{
	Relation	rel = table_open(ext->registry_relid, AccessShareLock);
	Buffer		buf;
	HeapTupleData tup;
	HeapTuple	copy = NULL;
	bool		same = false;

	if (fetch_root(rel, &place->root, snap, &buf, &tup))
	{
		if (registry_key_is(rel, &tup, relid, colname))
		{
			same = ItemPointerEquals(&tup.t_self, &place->seen) &&
				HeapTupleHeaderGetXmin(tup.t_data) == place->seen_xmin;
			if (!same)
				copy = heap_copytuple(&tup);
		}
		UnlockReleaseBuffer(buf);
	}
	if (copy)
	{
		bf_registry_decode(ext, RelationGetDescr(rel), copy, out);
		heap_freetuple(copy);
		/* a malformed header: the index fetch below says so */
		if (out->malformed)
			copy = NULL;
	}
	if (!same && copy == NULL)
	{
		if (!bf_registry_fetch(ext, 0, relid, colname, false, out))
		{
			ItemPointerSetInvalid(&place->root);
			ItemPointerSetInvalid(&place->seen);
			table_close(rel, NoLock);
			return BF_KEPT_NONE;
		}
		root_of(rel, &out->tid, &place->root);
	}
	table_close(rel, NoLock);
	if (same)
		return BF_KEPT_SAME;
	place->seen = out->tid;
	place->seen_xmin = out->xmin;
	return BF_KEPT_NEW;
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

/* the places of r's chunks (those of another row or fewer chunks forgotten) */
static void
places_for(BfChunkPlaces *p, const RegRow *r)
{
	int32		need = (bf_chunks_count(r) + BF_PLACE_WINDOW - 1) / BF_PLACE_WINDOW;

	if (p->id == r->id && p->nwindows >= need)
		return;
	bf_chunk_places_reset(p);
	p->windows = MemoryContextAllocZero(p->mcxt, sizeof(ItemPointerData *) * need);
	p->nwindows = need;
	p->id = r->id;
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

/* the chunks' primary key, opened when first needed (*idx NULL till then) */
static Relation
chunk_index(Oid idxoid, Relation *idx)
{
	if (*idx == NULL)
		*idx = index_open(idxoid, AccessShareLock);
	return *idx;
}

/*
 * The version of chunk c of r that snap sees, in *tup: with *buf pinned
 * and share-locked (the caller releases it with UnlockReleaseBuffer), or,
 * found through the index, a copy in the current memory context with
 * *buf InvalidBuffer.  False if there is no such chunk row.  The index
 * idxoid is opened into *idx only if needed (the caller closes it).
 */
bool
bf_chunk_fetch(Relation rel, Oid idxoid, Relation *idx, BfChunkPlaces *p, const RegRow *r,
			   int32 c, Snapshot snap, Buffer *buf, HeapTuple tup)
{
	ItemPointerData *place;
	SysScanDesc scan;
	HeapTuple	found;

	places_for(p, r);
	if (p->windows[c / BF_PLACE_WINDOW] == NULL)
		learn_window(rel, chunk_index(idxoid, idx), p, c / BF_PLACE_WINDOW, snap);
	place = &p->windows[c / BF_PLACE_WINDOW][c % BF_PLACE_WINDOW];
	if (fetch_root(rel, place, snap, buf, tup))
	{
		if (chunk_key_is(rel, tup, r->id, c))
			return true;
		UnlockReleaseBuffer(*buf);
	}

	/* through the index; keep the place found */
	*buf = InvalidBuffer;
	scan = bf_chunk_scan(rel, chunk_index(idxoid, idx), r->id, c, true, snap);
	found = systable_getnext_ordered(scan, ForwardScanDirection);
	if (HeapTupleIsValid(found))
	{
		*tup = *heap_copytuple(found);
		root_of(rel, &found->t_self, place);
	}
	systable_endscan_ordered(scan);
	return HeapTupleIsValid(found);
}
