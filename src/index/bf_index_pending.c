/*-------------------------------------------------------------------------
 *
 * bf_index_pending.c
 *	  Keys a transaction has inserted into WAL-logged bloomfilter indexes
 *	  but not yet set in their pages.
 *
 * Setting one key costs a page lock and a WAL record of that page; a bulk
 * load sets thousands of keys on every page.  So a backend keeps the
 * hashes of the keys it inserts, per index, and sets them page by page
 * (bf_insert_page: one WAL record per page) when the buffer fills, before
 * the transaction commits or prepares, and before this backend reads any
 * bloomfilter index.  Hence:
 *
 * - no false negative for a committed row: its key is in the pages (and
 *   in the WAL, ahead of the commit record) before the commit becomes
 *   visible; a crash before that loses only keys of uncommitted rows;
 * - this backend's own reads (lookups, scans, plan-time probes) see its
 *   pending keys, because they flush first;
 * - other backends do not see the keys of rows they cannot see either;
 *   parallel workers cannot see their leader's pending keys, so in a
 *   worker of a transaction that has written, lookups answer "probably"
 *   (bf_pending_unknown) -- the lookup functions are parallel restricted,
 *   which keeps them out of workers altogether;
 * - rows of an aborted (sub)transaction may leave bits, as they always
 *   could: a filter may answer "probably" for a key no row has.
 *
 * The keys are kept as 64-bit hashes, which place a key in a filter of
 * any size with the same seed: if the index was rewritten in the meantime
 * (SET TABLESPACE copies it, REINDEX and TRUNCATE rebuild it) they are
 * set in its new pages; if its seed changed it was rebuilt from the table,
 * which included these rows, and they are dropped.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/parallel.h"
#include "access/relation.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

/* keys buffered per index before its pages are written (8 bytes each) */
#define BF_PENDING_MAX	(256 * 1024)

typedef struct BfPendingIndex
{
	Oid			indexoid;		/* hash key */
	int64		seed;			/* the filter's seed the keys were hashed with */
	uint32		n;
	uint32		max;
	uint64	   *hashes;
} BfPendingIndex;

/* all in a child of TopTransactionContext; reset at transaction end */
static MemoryContext pending_cxt = NULL;
static HTAB *pending = NULL;
static BfPendingIndex *pending_last = NULL;	/* the last index inserted into */
static uint64 pending_total = 0;

/* pre-commit flush done: later inserts (other callbacks) go straight in */
static bool pending_closed = false;
static bool callback_registered = false;

static void bf_pending_xact_callback(XactEvent event, void *arg);

static BfPendingIndex *
bf_pending_entry(Relation index, const BfIndexMeta *meta)
{
	Oid			indexoid = RelationGetRelid(index);
	BfPendingIndex *e;
	bool		found;

	if (pending_last && pending_last->indexoid == indexoid &&
		pending_last->seed == meta->seed)
		return pending_last;
	if (!callback_registered)
	{
		RegisterXactCallback(bf_pending_xact_callback, NULL);
		callback_registered = true;
	}
	if (pending == NULL)
	{
		HASHCTL		ctl;

		pending_cxt = AllocSetContextCreate(TopTransactionContext,
											"bloomfilter pending keys",
											ALLOCSET_DEFAULT_SIZES);
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(BfPendingIndex);
		ctl.hcxt = pending_cxt;
		pending = hash_create("bloomfilter pending keys", 8, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(pending, &indexoid, HASH_ENTER, &found);
	if (!found)
	{
		e->seed = meta->seed;
		e->n = 0;
		e->max = 0;
		e->hashes = NULL;
	}
	else if (e->seed != meta->seed)
	{
		/* rebuilt with another seed since: the build saw these rows */
		pending_total -= e->n;
		e->n = 0;
		e->seed = meta->seed;
	}
	pending_last = e;
	return e;
}

/*
 * Set n key hashes in the pages of the filter meta describes (of a growing
 * index, its newest layer), page by page: a counting sort by page, then
 * one bf_insert_page per page.
 */
static void
bf_set_hashes(Relation index, const BfIndexMeta *meta, const uint64 *hashes, uint32 n)
{
	uint64		npages = bf_data_pages(meta);
	uint32	   *start;
	uint64	   *sorted;

	start = palloc_extended(sizeof(uint32) * (npages + 1),
							MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	sorted = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	for (uint32 i = 0; i < n; i++)
		start[bf_page_of(hashes[i], meta)]++;
	for (uint64 p = 0, sum = 0; p <= npages; p++)
	{
		uint32		c = start[p];

		start[p] = (uint32) sum;
		sum += c;
	}
	for (uint32 i = 0; i < n; i++)
		sorted[start[bf_page_of(hashes[i], meta)]++] = hashes[i];
	/* start[p] is now the end of page p's run, the start of page p + 1's */
	for (uint64 p = 0, from = 0; p < npages; p++)
	{
		if (start[p] > from)
		{
			CHECK_FOR_INTERRUPTS();
			if (bf_insert_page(index, meta, (BlockNumber) (1 + meta->first_page + p),
							   sorted + from, (int) (start[p] - from)))
				bf_index_grow(index, meta->first_page);
		}
		from = start[p];
	}
	pfree(start);
	pfree(sorted);
}

/*
 * Set the buffered keys of one index in its pages, page by page.  The
 * buffer is emptied only once every page is written: after an error the
 * keys are still pending (and setting a key twice is harmless).  A growing
 * index takes them in parts of a thirty-second of its newest layer's capacity,
 * reading its layers again after each part, so that a bulk load fills a
 * layer only a little past its capacity before the next one takes over.
 */
static void
bf_pending_flush_entry(BfPendingIndex *e, Relation index)
{
	Relation	opened = NULL;
	BfIndexMeta meta;

	if (e->n == 0)
		return;
	if (index == NULL)
	{
		/* the lock taken by the insert is still held, unless it was dropped */
		opened = try_relation_open(e->indexoid, RowExclusiveLock);
		if (opened == NULL || !bf_is_bloomfilter_index(opened))
		{
			if (opened)
				relation_close(opened, NoLock);
			pending_total -= e->n;
			e->n = 0;
			return;
		}
		index = opened;
	}
	bf_index_meta(index, &meta);
	if (meta.seed == e->seed && meta.version != BF_INDEX_VERSION_GROWING)
		bf_set_hashes(index, &meta, e->hashes, e->n);
	else if (meta.seed == e->seed)
	{
		BfIndexState *st = palloc(sizeof(BfIndexState));
		uint64	   *fresh = palloc_extended(sizeof(uint64) * e->n, MCXT_ALLOC_HUGE);

		for (uint32 done = 0; done < e->n;)
		{
			uint32		part;
			uint32		nfresh = 0;

			bf_index_state(index, st);
			part = (uint32) Min((int64) (e->n - done), Max(st->meta.capacity / 32, 64));
			/* keys an older layer holds are not added again (updates, reloads) */
			for (uint32 i = done; i < done + part; i++)
				if (st->layers.nlayers == 1 ||
					!bf_index_test_hash(index, &st->layers, st->layers.nlayers - 1,
										e->hashes[i], NULL))
					fresh[nfresh++] = e->hashes[i];
			if (nfresh > 0)
				bf_set_hashes(index, &st->meta, fresh, nfresh);
			done += part;
		}
		pfree(fresh);
		pfree(st);
	}
	pending_total -= e->n;
	e->n = 0;
	if (opened)
		relation_close(opened, NoLock);
}

/*
 * Buffer the key hash h for index.  False when it cannot be buffered (the
 * transaction is committing): the caller sets it at once.
 */
bool
bf_pending_add(Relation index, const BfIndexMeta *meta, uint64 h)
{
	BfPendingIndex *e;

	if (pending_closed)
		return false;
	e = bf_pending_entry(index, meta);
	if (e->n == e->max)
	{
		if (e->max == BF_PENDING_MAX)
			bf_pending_flush_entry(e, index);
		else
		{
			uint32		newmax = e->max == 0 ? 64 : e->max * 2;

			e->hashes = e->hashes == NULL ?
				MemoryContextAlloc(pending_cxt, sizeof(uint64) * newmax) :
				repalloc(e->hashes, sizeof(uint64) * newmax);
			e->max = newmax;
		}
	}
	e->hashes[e->n++] = h;
	pending_total++;
	return true;
}

/* set every buffered key of every index (before a read, and at commit) */
void
bf_pending_flush_all(void)
{
	HASH_SEQ_STATUS seq;
	BfPendingIndex *e;

	if (pending_total == 0)
		return;
	hash_seq_init(&seq, pending);
	while ((e = hash_seq_search(&seq)) != NULL)
		bf_pending_flush_entry(e, NULL);
}

/*
 * In a parallel worker: might the leader hold keys this worker cannot see?
 * Only if the transaction has written (inserting assigns a transaction id).
 */
bool
bf_pending_unknown(void)
{
	return IsParallelWorker() && TransactionIdIsValid(GetTopTransactionIdIfAny());
}

static void
bf_pending_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* an error here aborts the transaction: no commit lacks its keys */
			bf_pending_flush_all();
			pending_closed = true;
			break;
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
			break;
		default:
			/* the memory goes with TopTransactionContext */
			pending_cxt = NULL;
			pending = NULL;
			pending_last = NULL;
			pending_total = 0;
			pending_closed = false;
			break;
	}
}
