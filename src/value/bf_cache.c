/*-------------------------------------------------------------------------
 *
 * bf_cache.c
 *	  The per-backend cache of detoasted filters: every detoasted copy of a
 *	  filter that outlives one call is an entry here.
 *
 * Applications probe one key per statement:
 *   SELECT bf_contains((SELECT f FROM filters WHERE id = $1), $2)
 *   SELECT bf_might_contain('users', 'email', $1)
 * Without this cache every such statement detoasts the whole stored filter
 * (12 MB for 10 M keys at 1 %).  Entries of stored values are keyed by the
 * value's TOAST pointer, checked on every statement's first use (see
 * value_unchanged for why the check is enough; a caller that knows the
 * value's version, as the registry of tracked filters does, skips it) and
 * kept for later statements, evicted least recently used first.  Entries
 * that cannot be kept (the cache is too small or off, the value's pages
 * carry no trustworthy LSN, or the value was compressed in line) live
 * while their holder holds them.  All are counted against
 * bloomfilter.filter_cache_size: entries held by running statements are
 * never evicted, so the cache may hold more while they run.
 * bf_filter_cache_stats() shows the counters of the calling backend.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_cache.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/toast_internals.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "lib/ilist.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

/* a few 10-million-key filters at 1 % (12 MB each) */
#define BF_FILTER_CACHE_DEFAULT_KB	(64 * 1024)

struct BfCachedFilter
{
	varatt_external ext;		/* the TOAST pointer it was read from */
	/* where the value's first chunk was, and the LSN of its page then */
	BlockNumber blkno;
	OffsetNumber offnum;
	XLogRecPtr	lsn;
	Buffer		recent;			/* the buffer that held that page last */
	int64		version;		/* the caller's version of the value, or -1 */
	void	   *alloc;			/* holds filter.vl */
	Size		size;
	BfFilter	filter;
	int			refcount;		/* callers holding it (bf_filter_cache_get) */
	bool		in_table;		/* still reachable by its key */
	dlist_node	lru;			/* most recently used first */
};

typedef struct CacheKey
{
	Oid			toastrelid;
	Oid			valueid;
} CacheKey;

typedef struct CacheSlot
{
	CacheKey	key;
	BfCachedFilter *cf;
} CacheSlot;

static int	filter_cache_kb = BF_FILTER_CACHE_DEFAULT_KB;
static MemoryContext cache_cxt = NULL;
static HTAB *cache_table = NULL;
static dlist_head cache_lru = DLIST_STATIC_INIT(cache_lru);
static Size cache_bytes = 0;
static int64 n_entries,
			n_hits,
			n_misses,
			n_stale,
			n_evictions;

static void cache_shrink(Size limit);

/* bloomfilter.filter_cache_size in bytes: also the bound of other copies */
Size
bf_filter_cache_limit(void)
{
	return (Size) filter_cache_kb * 1024;
}

static void
assign_filter_cache_size(int newval, void *extra)
{
	(void) extra;
	if (cache_table != NULL)
		cache_shrink((Size) newval * 1024);
}

void
bf_filter_cache_define_gucs(void)
{
	DefineCustomIntVariable("bloomfilter.filter_cache_size",
							"Memory each backend may keep for detoasted stored filters.",
							"A stored filter probed by one statement after another is "
							"detoasted once and kept here; 0 turns the cache off.",
							&filter_cache_kb,
							BF_FILTER_CACHE_DEFAULT_KB, 0, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, assign_filter_cache_size, NULL);
}

/* copy a detoasted filter into mcxt with its bit array 64-byte aligned */
static struct varlena *
copy_aligned(MemoryContext mcxt, const struct varlena *vl, void **alloc)
{
	size_t		size = VARSIZE(vl);
	char	   *p;
	uintptr_t	pad;

	p = MemoryContextAllocExtended(mcxt, size + 64, MCXT_ALLOC_HUGE);
	/* place vl so that vl + VARHDRSZ + BLOOM_HEADER_SIZE is a multiple of 64 */
	pad = (uintptr_t) (-(intptr_t) ((uintptr_t) p + VARHDRSZ + BLOOM_HEADER_SIZE)) & 63;
	memcpy(p + pad, vl, size);
	*alloc = p;
	return (struct varlena *) (p + pad);
}

static void
cache_init(void)
{
	HASHCTL		ctl;

	if (cache_table != NULL)
		return;
	cache_cxt = AllocSetContextCreate(TopMemoryContext, "bloomfilter filter cache",
									  ALLOCSET_DEFAULT_SIZES);
	ctl.keysize = sizeof(CacheKey);
	ctl.entrysize = sizeof(CacheSlot);
	ctl.hcxt = cache_cxt;
	cache_table = hash_create("bloomfilter filter cache", 64, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

static void
cached_free(BfCachedFilter *cf)
{
	cache_bytes -= cf->size;
	n_entries--;
	pfree(cf->alloc);
	pfree(cf);
}

/* make cf unreachable by its key; freed now, or by its last holder */
static void
cache_detach(BfCachedFilter *cf)
{
	CacheKey	key;

	Assert(cf->in_table);
	key.toastrelid = cf->ext.va_toastrelid;
	key.valueid = cf->ext.va_valueid;
	hash_search(cache_table, &key, HASH_REMOVE, NULL);
	dlist_delete(&cf->lru);
	cf->in_table = false;
	if (cf->refcount == 0)
		cached_free(cf);
}

/* evict unused entries, least recently used first, down to limit bytes */
static void
cache_shrink(Size limit)
{
	dlist_node *node = dlist_is_empty(&cache_lru) ? NULL : dlist_tail_node(&cache_lru);

	while (node != NULL && cache_bytes > limit)
	{
		dlist_node *prev = dlist_has_prev(&cache_lru, node) ?
			dlist_prev_node(&cache_lru, node) : NULL;
		BfCachedFilter *cf = dlist_container(BfCachedFilter, lru, node);

		if (cf->refcount == 0)
		{
			cache_detach(cf);
			n_evictions++;
		}
		node = prev;
	}
}

/*
 * Find the first chunk of TOAST value valueid through the TOAST index, as
 * seen by the active snapshot.
 */
static bool
find_first_chunk(Relation toastrel, Oid valueid, ItemPointer tid)
{
	Relation   *toastidxs;
	int			num_indexes;
	int			valid;
	ScanKeyData key[2];
	SysScanDesc scan;
	HeapTuple	tup;

	valid = toast_open_indexes(toastrel, AccessShareLock, &toastidxs, &num_indexes);
	ScanKeyInit(&key[0], (AttrNumber) 1, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(valueid));
	ScanKeyInit(&key[1], (AttrNumber) 2, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(0));
	scan = systable_beginscan_ordered(toastrel, toastidxs[valid], GetActiveSnapshot(),
									  2, key);
	tup = systable_getnext_ordered(scan, ForwardScanDirection);
	if (tup != NULL)
		*tid = tup->t_self;
	systable_endscan_ordered(scan);
	toast_close_indexes(toastidxs, num_indexes, AccessShareLock);
	return tup != NULL;
}

/*
 * Is the tuple at (blkno, offnum) of toastrel the first chunk of value
 * valueid, visible to the active snapshot?  Its page's LSN goes to *lsn.
 */
static bool
check_first_chunk(Relation toastrel, Oid valueid, BlockNumber blkno,
				  OffsetNumber offnum, XLogRecPtr *lsn, Buffer *recent)
{
	Buffer		buf;
	Page		page;
	ItemId		lp;
	bool		ok = false;

	/*
	 * The buffer that held the page last time, if it still does, saves the
	 * size check (a system call per statement) and the buffer mapping
	 * lookup: a block in shared buffers exists (truncation drops the
	 * buffers of the blocks it removes).
	 */
	if (BufferIsValid(*recent) && bf_read_recent_buffer(toastrel, blkno, *recent))
		buf = *recent;
	else
	{
		if (blkno >= RelationGetNumberOfBlocks(toastrel))
			return false;
		buf = ReadBuffer(toastrel, blkno);
		*recent = buf;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	if (offnum >= FirstOffsetNumber && offnum <= PageGetMaxOffsetNumber(page) &&
		ItemIdIsNormal(lp = PageGetItemId(page, offnum)))
	{
		HeapTupleData tup;
		TupleDesc	desc = RelationGetDescr(toastrel);
		bool		isnull1,
					isnull2;
		Datum		id,
					seq;

		tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tup.t_len = ItemIdGetLength(lp);
		tup.t_tableOid = RelationGetRelid(toastrel);
		ItemPointerSet(&tup.t_self, blkno, offnum);
		id = heap_getattr(&tup, 1, desc, &isnull1);
		seq = heap_getattr(&tup, 2, desc, &isnull2);
		ok = !isnull1 && !isnull2 &&
			DatumGetObjectId(id) == valueid && DatumGetInt32(seq) == 0 &&
			HeapTupleSatisfiesVisibility(&tup, GetActiveSnapshot(), buf);
	}
	/* after the check, which may set hint bits (and log them) */
	*lsn = BufferGetLSNAtomic(buf);
	UnlockReleaseBuffer(buf);
	return ok;
}

/*
 * Open the TOAST relation of ext, if its page LSNs can be trusted: it must
 * still be a TOAST relation and be WAL-logged (not temporary or unlogged,
 * and not new in this transaction under wal_level = minimal, where pages
 * change without their LSN moving).
 */
static Relation
open_toast(const varatt_external *ext)
{
	Relation	rel = try_relation_open(ext->va_toastrelid, AccessShareLock);

	if (rel == NULL)
		return NULL;
	if (rel->rd_rel->relkind != RELKIND_TOASTVALUE || !RelationNeedsWAL(rel))
	{
		relation_close(rel, AccessShareLock);
		return NULL;
	}
	return rel;
}

/*
 * Does the pointer ext still name the value cf was read from?
 *
 * The pointer alone does not say: once a value is deleted and its chunks
 * are removed, toast_save_datum may give the same OID to a new value
 * (GetNewOidWithIndex only avoids OIDs still present in the TOAST index).
 * So an entry also keeps where the value's first chunk was and the LSN of
 * that page, and is used only when
 *
 * 1. the page's LSN is unchanged: the relation is WAL-logged, and every
 *    change that removes a tuple or reuses its line pointer (pruning,
 *    VACUUM, an insertion, a rewrite into a new file) gives the page a new
 *    LSN; only hint bits change without one.  So the tuple there is still
 *    the first chunk we read; and
 * 2. that tuple is visible to the current snapshot.  Then it is not, and
 *    never was, dead to every transaction, so neither pruning, VACUUM nor
 *    the index's own clean-up can have removed it or its index entry, and
 *    while that entry exists GetNewOidWithIndex gives its OID to no other
 *    value.  So no other value with this OID can exist, and the pointer
 *    names exactly the bytes the entry holds.
 */
static bool
value_unchanged(BfCachedFilter *cf)
{
	Relation	rel;
	XLogRecPtr	lsn;
	bool		ok;

	if (!ActiveSnapshotSet() || (rel = open_toast(&cf->ext)) == NULL)
		return false;
	ok = check_first_chunk(rel, cf->ext.va_valueid, cf->blkno, cf->offnum, &lsn, &cf->recent) &&
		lsn == cf->lsn;
	relation_close(rel, AccessShareLock);
	return ok;
}

/* where the first chunk of value valueid of rel is now, to check it later */
static bool
locate_value(Relation rel, Oid valueid, BlockNumber *blkno,
			 OffsetNumber *offnum, XLogRecPtr *lsn, Buffer *recent)
{
	ItemPointerData tid;

	if (!find_first_chunk(rel, valueid, &tid))
		return false;
	*blkno = ItemPointerGetBlockNumber(&tid);
	*offnum = ItemPointerGetOffsetNumber(&tid);
	return check_first_chunk(rel, valueid, *blkno, *offnum, lsn, recent) &&
		!XLogRecPtrIsInvalid(*lsn);
}

/* a new entry holding a validated copy of vl, held once, not yet listed */
static BfCachedFilter *
entry_new(struct varlena *vl)
{
	BloomHeader hdr;
	BfCachedFilter *cf;

	bf_read_any_header(vl, &hdr);
	cache_init();
	cf = MemoryContextAllocZero(cache_cxt, sizeof(BfCachedFilter));
	cf->filter.vl = copy_aligned(cache_cxt, vl, &cf->alloc);
	cf->filter.hdr = hdr;
	cf->size = VARSIZE(cf->filter.vl) + 64 + sizeof(BfCachedFilter);
	cf->refcount = 1;
	cf->recent = InvalidBuffer;
	cf->version = -1;
	cache_bytes += cf->size;
	n_entries++;
	return cf;
}

/*
 * The listed entry for the stored value raw, if it still holds that
 * value: the same version as the caller's (version >= 0), or checked by
 * value_unchanged.  A stale entry is dropped.
 */
static BfCachedFilter *
cache_find(const varatt_external *ext, int64 version)
{
	CacheKey	key;
	CacheSlot  *slot;
	BfCachedFilter *cf;

	if (cache_table == NULL)
		return NULL;
	key.toastrelid = ext->va_toastrelid;
	key.valueid = ext->va_valueid;
	slot = hash_search(cache_table, &key, HASH_FIND, NULL);
	if (slot == NULL)
		return NULL;
	cf = slot->cf;
	if (memcmp(&cf->ext, ext, sizeof(*ext)) == 0 &&
		((version >= 0 && cf->version == version) || value_unchanged(cf)))
	{
		if (version >= 0)
			cf->version = version;
		n_hits++;
		dlist_move_head(&cache_lru, &cf->lru);
		cf->refcount++;
		return cf;
	}
	n_stale++;
	cache_detach(cf);
	return NULL;
}

/* keep cf (read from ext) for later statements, if it fits and can be checked */
static void
cache_list(BfCachedFilter *cf, const varatt_external *ext)
{
	Relation	rel;
	CacheKey	key;
	CacheSlot  *slot;
	bool		found;

	if (cf->size > bf_filter_cache_limit() || !ActiveSnapshotSet() || (rel = open_toast(ext)) == NULL)
		return;
	/* the new entry counts already: make room for it among the others */
	cache_shrink(bf_filter_cache_limit());
	if (cache_bytes <= bf_filter_cache_limit() &&
		locate_value(rel, ext->va_valueid, &cf->blkno, &cf->offnum, &cf->lsn, &cf->recent))
	{
		key.toastrelid = ext->va_toastrelid;
		key.valueid = ext->va_valueid;
		slot = hash_search(cache_table, &key, HASH_ENTER, &found);
		Assert(!found);
		slot->cf = cf;
		cf->in_table = true;
		dlist_push_head(&cache_lru, &cf->lru);
	}
	relation_close(rel, AccessShareLock);
}

/*
 * The stored filter raw (an on-disk TOAST pointer) detoasted and
 * validated, from the cache or read into it.  version is the caller's
 * version of the value, if it has one (-1 if not): a value of the same
 * pointer and version is the same value.  The caller holds the result
 * until bf_filter_cache_release; it stays valid even if evicted or found
 * stale meanwhile.
 */
BfCachedFilter *
bf_filter_cache_get(struct varlena *raw, int64 version)
{
	varatt_external ext;
	BfCachedFilter *cf;
	struct varlena *vl;

	Assert(VARATT_IS_EXTERNAL_ONDISK(raw));
	VARATT_EXTERNAL_GET_POINTER(ext, raw);
	cf = cache_find(&ext, version);
	if (cf != NULL)
		return cf;
	n_misses++;

	/*
	 * Detoast and validate before anything goes into the cache; then note
	 * where the first chunk is (after detoasting, which sets the chunks'
	 * hint bits, so that their page LSNs have settled where checksums log
	 * hint bits).  Both see the value under the same snapshot.
	 */
	vl = detoast_attr(raw);
	cf = entry_new(vl);
	pfree(vl);
	cf->ext = ext;
	cf->version = version;
	cache_list(cf, &ext);
	return cf;
}

/*
 * An entry holding a copy of the detoasted filter vl (validated), for a
 * holder that reads it beyond one call (a compressed in-line value); never
 * listed, freed when released.
 */
BfCachedFilter *
bf_filter_cache_hold(struct varlena *vl)
{
	return entry_new(vl);
}

const BfFilter *
bf_cached_filter(const BfCachedFilter *cf)
{
	return &cf->filter;
}

void
bf_filter_cache_release(BfCachedFilter *cf)
{
	Assert(cf->refcount > 0);
	if (--cf->refcount == 0 && !cf->in_table)
		cached_free(cf);
}

static void
release_callback(void *arg)
{
	bf_filter_cache_release((BfCachedFilter *) arg);
}

/*
 * The stored filter raw (version as for bf_filter_cache_get) if the cache
 * already holds it, held until the current memory context is reset or
 * deleted; NULL (and nothing read) if not.
 */
const BfFilter *
bf_filter_cache_use_if_cached(struct varlena *raw, int64 version)
{
	MemoryContextCallback *cb = palloc(sizeof(MemoryContextCallback));
	varatt_external ext;
	BfCachedFilter *cf;

	Assert(VARATT_IS_EXTERNAL_ONDISK(raw));
	VARATT_EXTERNAL_GET_POINTER(ext, raw);
	cf = cache_find(&ext, version);
	if (cf == NULL)
	{
		pfree(cb);
		return NULL;
	}
	cb->func = release_callback;
	cb->arg = cf;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, cb);
	return &cf->filter;
}

/* bf_filter_cache_stats(): this backend's cache and its counters */
PG_FUNCTION_INFO_V1(bf_filter_cache_stats);
Datum
bf_filter_cache_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		values[6];
	bool		nulls[6] = {0};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(n_entries);
	values[1] = Int64GetDatum((int64) cache_bytes);
	values[2] = Int64GetDatum(n_hits);
	values[3] = Int64GetDatum(n_misses);
	values[4] = Int64GetDatum(n_stale);
	values[5] = Int64GetDatum(n_evictions);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* bf_filter_cache_reset(): drop this backend's entries, zero its counters */
PG_FUNCTION_INFO_V1(bf_filter_cache_reset);
Datum
bf_filter_cache_reset(PG_FUNCTION_ARGS)
{
	(void) fcinfo;
	if (cache_table != NULL)
	{
		dlist_mutable_iter it;

		dlist_foreach_modify(it, &cache_lru)
			cache_detach(dlist_container(BfCachedFilter, lru, it.cur));
	}
	n_hits = n_misses = n_stale = n_evictions = 0;
	PG_RETURN_VOID();
}
