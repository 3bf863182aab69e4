/*-------------------------------------------------------------------------
 *
 * bf_index_changes.c
 *	  bf_index_changes(index, since): what changed in an index's filter
 *	  since a WAL position, as a patch of the bytes of bf_index_filter
 *	  (docs/FORMAT.md, "Change sets"), so that a client holding a copy
 *	  can refresh it by fetching only the pages that changed.
 *
 * Why no change can be missed.  Every change to a data page after the
 * build is made under the page's exclusive buffer lock, and WAL-logged
 * (generic WAL or a full-page image) before the lock is released; the
 * record's end, above the WAL insert position of any moment before the
 * change began, becomes the page LSN.  We read the insert position first
 * (next_lsn), then each page under its share lock.  A change that had
 * begun before we read the position holds the lock until it is done, so
 * our read of that page sees it; a change that begins later gets a page
 * LSN above next_lsn, so the next call, with since = next_lsn, sends the
 * page (a change may be sent twice, never missed).  On a standby the
 * replay position plays the insert position's part: a record's redo
 * sets the page LSN before the replay position moves past it.
 *
 * When page LSNs cannot tell, the whole value is sent (full_refresh):
 * since NULL; since beyond the current WAL position (another server, a
 * restored backup); an index not WAL-logged (unlogged, temporary, or
 * rebuilt in this transaction with wal_level = minimal), whose pages
 * change without a new LSN; and a filter built or rebuilt (CREATE INDEX,
 * REINDEX, TRUNCATE) after since, or built without WAL: the build writes
 * the metapage, whose LSN is then that of the build or invalid, and
 * nothing else writes it.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index_sql.h"
#include "bf_dist.h"
#include "bf_patch.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"

/* the WAL position every later change of a page will be above */
static XLogRecPtr
bf_wal_position(void)
{
	return RecoveryInProgress() ? GetXLogReplayRecPtr(NULL) : GetXLogInsertRecPtr();
}

static XLogRecPtr
bf_metapage_lsn(Relation index)
{
	Buffer		buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	XLogRecPtr	lsn;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	lsn = PageGetLSN(BufferGetPage(buf));
	UnlockReleaseBuffer(buf);
	return lsn;
}

typedef struct PagePatch
{
	BfPatch    *pb;
	uint64		bits_off;		/* where the layer's bits are in the value */
	bool		full;
	XLogRecPtr	since;
	uint64		ones;			/* bits set in the pages seen */
	bool		changed;		/* a page's LSN is above since */
} PagePatch;

/* one page: count its bits, and add it to the patch if it changed */
static bool
patch_page(void *arg, uint64 first, uint32 n, Page page)
{
	PagePatch  *pp = (PagePatch *) arg;
	const uint8 *bits = (const uint8 *) page + BF_PAGE_BITS_OFFSET;

	pp->ones += bloom_popcount(bits, (size_t) n * BLOOM_BLOCK_BYTES);
	if (pp->full || PageGetLSN(page) > pp->since)
		bf_patch_range(pp->pb, pp->bits_off + first * BLOOM_BLOCK_BYTES, bits,
					   n * BLOOM_BLOCK_BYTES);
	return true;
}

/*
 * Add to pb the data pages of layer l (the only one of an index that does
 * not grow) whose page LSN is above since, or all when full; its bits are
 * at value offset bits_off.  Returns the number of bits set in the layer.
 */
static uint64
patch_layer_pages(Relation index, const BfIndexLayer *l, uint64 bits_off, bool full,
				  XLogRecPtr since, BufferAccessStrategy strategy, BfPatch *pb)
{
	PagePatch	pp = {pb, bits_off, full, since, 0, false};

	bf_layer_pages(index, l, 1, strategy, patch_page, &pp);
	return pp.ones;
}

/* stop at the first page changed since */
static bool
page_unchanged(void *arg, uint64 first, uint32 n, Page page)
{
	PagePatch  *pp = (PagePatch *) arg;

	pp->changed = PageGetLSN(page) > pp->since;
	return !pp->changed;
}

/* has any page of layer l changed since? */
static bool
bf_layer_changed(Relation index, const BfIndexLayer *l, XLogRecPtr since,
				 BufferAccessStrategy strategy)
{
	PagePatch	pp = {NULL, 0, false, since, 0, false};

	bf_layer_pages(index, l, 1, strategy, page_unchanged, &pp);
	return pp.changed;
}

/*
 * The patch of a growing index's value (FORMAT.md section 9): its header,
 * then for each layer with a page changed since (every layer when full)
 * the layer's header and its changed pages.  A growth rewrites the
 * metapage, so a patch across one is full (bf_index_changes_of).
 */
static bytea *
bf_index_patch_growing(Relation index, const BfIndexState *st, bool full, XLogRecPtr since)
{
	static const uint8 zeros[BLOOM_HEADER_SIZE] = {0};
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	uint64		off = BLOOM_GROW_HEADER_SIZE;
	BfPatch		pb;

	bf_patch_begin(&pb, BLOOM_GROW_HEADER_SIZE);
	bf_index_growing_header(&st->layers, bf_patch_head(&pb));
	for (uint32 i = 0; i < st->layers.nlayers; i++)
	{
		const BfIndexLayer *l = &st->layers.layer[i];
		uint64		ones;
		Size		head;
		BfIndexMeta view;

		if (full || bf_layer_changed(index, l, since, strategy))
		{
			/* the layer's header is filled in once its bits are counted */
			head = bf_patch_range(&pb, off, zeros, BLOOM_HEADER_SIZE);
			ones = patch_layer_pages(index, l, off + BLOOM_HEADER_SIZE, full, since,
									 strategy, &pb);
			bf_layer_view(&st->meta, l, &view);
			bf_index_value_header(&view, ones, bf_patch_at(&pb, head));
		}
		off += bloom_total_size(l->nblocks);
	}
	FreeAccessStrategy(strategy);
	return bf_patch_finish(&pb, full, false, off);
}

/*
 * The patch taking a copy of bf_index_filter(index) from its state at
 * since to its state now (full: the whole value).  The header's run comes
 * first, filled once every page has been counted; it merges with page
 * 0's run when that page changed.
 */
static bytea *
bf_index_patch(Relation index, const BfIndexState *st, bool full, XLogRecPtr since)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	uint64		total = BLOOM_HEADER_SIZE + st->meta.nblocks * BLOOM_BLOCK_BYTES;
	uint64		ones;
	BfPatch		pb;

	bf_patch_begin(&pb, BLOOM_HEADER_SIZE);
	ones = patch_layer_pages(index, &st->layers.layer[0], BLOOM_HEADER_SIZE, full, since,
							 strategy, &pb);
	FreeAccessStrategy(strategy);

	/* the header follows the bits: it changed only if a page did */
	bf_index_value_header(&st->meta, ones, bf_patch_head(&pb));
	return bf_patch_finish(&pb, full, false, total);
}

/*
 * The row of bf_index_changes(indexoid, since) (since_null: since is
 * NULL), put into fcinfo's materialized result.  Also answers
 * bf_tracked_changes for a column tracked by an index.
 */
Datum
bf_index_changes_of(FunctionCallInfo fcinfo, Oid indexoid, bool since_null,
					XLogRecPtr since)
{
	BfIndexState st;
	Relation	index;
	XLogRecPtr	next;
	XLogRecPtr	metalsn;
	bool		full;
	bytea	   *patch;

	/* a table of Citus's: patches of the union of its shards' filters */
	if (bf_dist_index_changes(fcinfo, indexoid, since_null, since))
		return (Datum) 0;
	index = bf_index_open_checked(indexoid, &st, "bf_index_changes");
	/* read before any page: see the file's header comment */
	next = bf_wal_position();
	metalsn = bf_metapage_lsn(index);
	full = since_null || !RelationNeedsWAL(index) || since > next ||
		XLogRecPtrIsInvalid(metalsn) || metalsn > since;
	patch = st.meta.version == BF_INDEX_VERSION_GROWING ?
		bf_index_patch_growing(index, &st, full, since) :
		bf_index_patch(index, &st, full, since);
	index_close(index, NoLock);
	return bf_changes_result(fcinfo, next, full, patch);
}

PG_FUNCTION_INFO_V1(bf_index_changes);

/*
 * bf_index_changes(index regclass, since pg_lsn) -> one row (next_lsn,
 * full_refresh, patch).  Rights as for bf_index_filter.
 */
Datum
bf_index_changes(PG_FUNCTION_ARGS)
{
	InitMaterializedSRF(fcinfo, 0);
	/* not STRICT for since; a NULL index gives no row, as STRICT would */
	if (PG_ARGISNULL(0))
		return (Datum) 0;
	return bf_index_changes_of(fcinfo, PG_GETARG_OID(0), PG_ARGISNULL(1),
							   PG_ARGISNULL(1) ? InvalidXLogRecPtr : PG_GETARG_LSN(1));
}
