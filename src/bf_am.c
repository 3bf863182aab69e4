/*-------------------------------------------------------------------------
 *
 * bf_am.c
 *	  The bloomfilter index access method: a per-table Bloom filter kept in
 *	  pages of the index relation and maintained by the server on every
 *	  INSERT, COPY and (non-HOT) UPDATE, with generic WAL.
 *
 * A filter's bits only ever turn on, so the index needs no tuples, no
 * visibility and nothing to vacuum: inserting a key sets k bits of one
 * 512-bit block, on exactly one data page, under that page's exclusive
 * buffer lock.  Deleted keys disappear at REINDEX.  It is read by
 * bf_index_contains() and friends (bf_index.c), and the planner uses it
 * only to skip the table for col = const when the key is definitely
 * absent (bfcostestimate, bfgetbitmap).  See bf_am.h for the layout.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

#include <limits.h>
#include <math.h>

#include "access/amapi.h"
#include "access/amvalidate.h"
#include "access/generic_xlog.h"
#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/index.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/tidbitmap.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/selfuncs.h"
#include "utils/syscache.h"

/* the smallest default capacity, and the growth room of the default rule */
#define BF_DEFAULT_MIN_CAPACITY 100000
#define BF_DEFAULT_GROWTH	2.0

static relopt_kind bf_relopt_kind;
static bool bf_relopt_ready = false;

static void
bf_init_reloptions(void)
{
	if (bf_relopt_ready)
		return;
	bf_relopt_kind = add_reloption_kind();
	add_int_reloption(bf_relopt_kind, "capacity",
					  "Number of distinct keys the filter is sized for (0 = twice the table's rows at build time, at least 100000)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_real_reloption(bf_relopt_kind, "fpr",
					   "False-positive rate at capacity keys, between 0 and 1 exclusive",
					   0.01, 0.0, 1.0, AccessExclusiveLock);
	bf_relopt_ready = true;
}

static bytea *
bfoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{.optname = "capacity", .opttype = RELOPT_TYPE_INT,
		.offset = offsetof(BfOptions, capacity)},
		{.optname = "fpr", .opttype = RELOPT_TYPE_REAL,
		.offset = offsetof(BfOptions, fpr)},
	};
	BfOptions  *opts;

	bf_init_reloptions();
	opts = (BfOptions *) build_reloptions(reloptions, validate, bf_relopt_kind,
										  sizeof(BfOptions), tab, lengthof(tab));
	if (validate && opts)
	{
		if (!(opts->fpr > 0.0 && opts->fpr < 1.0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("value %g out of bounds for option \"fpr\"", opts->fpr),
					 errdetail("The false-positive rate must be greater than 0 and less than 1."),
					 errhint("Give a rate such as 0.01 for 1 %%.")));
		if (opts->capacity > 0)
		{
			uint64		nblocks;
			int			nhashes;

			/* refuse now what the build could not allocate */
			bf_size_or_error(opts->capacity, opts->fpr, &nblocks, &nhashes);
		}
	}
	return (bytea *) opts;
}

/* ---- key columns and hashing ---- */

/* type info of the index's key columns; errors for unsupported keys */
static int
bf_key_columns(Relation index, BfTypeInfo *cols, MemoryContext mcxt)
{
	TupleDesc	desc = RelationGetDescr(index);
	int			ncols = IndexRelationGetNumberOfKeyAttributes(index);

	if (ncols > BLOOM_MAX_RECORD_FIELDS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a bloomfilter index can have at most %d key columns",
						BLOOM_MAX_RECORD_FIELDS)));
	for (int i = 0; i < ncols; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		bf_typeinfo_init(&cols[i], att->atttypid, att->attcollation, mcxt);
		if (cols[i].family == BF_FAMILY_RECORD || cols[i].family == BF_FAMILY_OTHER)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a bloomfilter index cannot hash type %s",
							format_type_be(att->atttypid)),
					 errdetail("Index keys must be of a type with a portable hash (integers, floats, numeric, text types, bytea, uuid, boolean, date and time types, enums)."),
					 errhint("Index an expression casting the column to text.")));
	}
	return ncols;
}

/* the key's family and detail, as a bloomfilter value records them */
static void
bf_key_family(BfIndexMeta *meta, BfTypeInfo *cols, int ncols)
{
	meta->ncols = ncols;
	memset(meta->colfamilies, 0, sizeof(meta->colfamilies));
	for (int i = 0; i < ncols; i++)
		meta->colfamilies[i] = (uint8) cols[i].family;
	if (ncols == 1)
	{
		meta->family = (uint8) cols[0].family;
		meta->detail = 0;
	}
	else
	{
		meta->family = BF_FAMILY_RECORD;
		meta->detail = 0;
		for (int i = 0; i < ncols; i++)
			meta->detail |= (uint32) cols[i].family << (4 * i);
	}
}

/*
 * The filter hash of one index key: a single column hashes as bf_add of
 * the value, several as bf_add of ROW(...) (bf_hash_fields).  A NULL
 * single-column key is skipped, as bf_add skips NULL; a row with NULL
 * fields is a value and is hashed.
 */
uint64
bf_index_hash_key(BfIndexState *st, Datum *values, bool *isnull, bool *skip)
{
	*skip = false;
	if (st->meta.ncols == 1)
	{
		if (isnull[0])
		{
			*skip = true;
			return 0;
		}
		return bf_hash_datum(&st->cols[0], values[0], st->meta.seed);
	}
	return bf_hash_fields(st->cols, (int) st->meta.ncols, values, isnull,
						  st->meta.seed);
}

/* ---- metapage ---- */

static void
bf_corrupt(Relation index, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INDEX_CORRUPTED),
			 errmsg("bloomfilter index \"%s\" has an invalid metapage",
					RelationGetRelationName(index)),
			 errdetail("%s", what),
			 errhint("Rebuild the index with REINDEX.")));
}

/* read block 0, validate it against the index definition, cache it */
static void
bf_load_state(Relation index)
{
	BfIndexState st;
	Buffer		buf;
	Page		page;
	BfIndexMeta *meta;
	int			ncols;
	BfIndexMeta expect;

	memset(&st, 0, sizeof(st));
	if (RelationGetNumberOfBlocks(index) == 0)
		bf_corrupt(index, "The index has no metapage.");
	buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	meta = (BfIndexMeta *) (page + BF_PAGE_BITS_OFFSET);
	memcpy(&st.meta, meta, sizeof(BfIndexMeta));
	UnlockReleaseBuffer(buf);

	if (st.meta.magic != BF_INDEX_MAGIC)
		bf_corrupt(index, "The metapage does not start with the bloomfilter index magic number.");
	if (st.meta.version != BF_INDEX_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomfilter index \"%s\" has layout version %u, this library reads version %d",
						RelationGetRelationName(index), st.meta.version, BF_INDEX_VERSION),
				 errhint("Rebuild the index with REINDEX.")));
	if (st.meta.blocks_per_page != BF_BLOCKS_PER_PAGE)
		bf_corrupt(index, "The metapage records a different number of filter blocks per page.");
	if (st.meta.nblocks < 1 || st.meta.nblocks > BLOOM_MAX_BLOCKS ||
		st.meta.nhashes < 1 || st.meta.nhashes > BLOOM_MAX_HASHES)
		bf_corrupt(index, "The filter size or number of hashes is out of range.");
	if (RelationGetNumberOfBlocks(index) <
		1 + bloom_paged_npages(st.meta.nblocks, BF_BLOCKS_PER_PAGE))
		bf_corrupt(index, "The index has fewer pages than its filter needs.");

	/* the key columns must still hash as they did at build time */
	ncols = bf_key_columns(index, st.cols, index->rd_indexcxt);
	memset(&expect, 0, sizeof(expect));
	bf_key_family(&expect, st.cols, ncols);
	if (st.meta.ncols != expect.ncols || st.meta.family != expect.family ||
		st.meta.detail != expect.detail ||
		memcmp(st.meta.colfamilies, expect.colfamilies, sizeof(expect.colfamilies)) != 0)
		bf_corrupt(index, "The key columns' element families differ from those the filter was built with.");

	/* only now: the lookups above may have reset rd_amcache */
	if (index->rd_amcache == NULL)
		index->rd_amcache = MemoryContextAlloc(index->rd_indexcxt, sizeof(BfIndexState));
	memcpy(index->rd_amcache, &st, sizeof(BfIndexState));
}

/* a private copy of the index's validated state */
void
bf_index_state(Relation index, BfIndexState *st)
{
	if (index->rd_amcache == NULL)
		bf_load_state(index);
	memcpy(st, index->rd_amcache, sizeof(BfIndexState));
}

/* locate filter block b: its data page and the byte offset on it */
static inline void
bf_locate(uint64 h, const BfIndexMeta *meta, BlockNumber *blkno, Size *offset)
{
	uint64		b = bloom_block_of(h, meta->nblocks);

	*blkno = (BlockNumber) (1 + b / BF_BLOCKS_PER_PAGE);
	*offset = BF_PAGE_BITS_OFFSET + (Size) (b % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
}

/* the validated metapage only (what a probe needs) */
void
bf_index_meta(Relation index, BfIndexMeta *meta)
{
	if (index->rd_amcache == NULL)
		bf_load_state(index);
	memcpy(meta, &((BfIndexState *) index->rd_amcache)->meta, sizeof(BfIndexMeta));
}

/*
 * Test a hash: one data page read under a share lock.  recent, if not
 * NULL, has one entry per data page: the buffer that held it last time,
 * tried first with ReadRecentBuffer (which checks that the buffer still
 * holds that page), which skips the shared buffer mapping lookup: for a
 * large index that lookup is a cache miss per call.
 */
bool
bf_index_test_hash(Relation index, const BfIndexMeta *meta, uint64 h,
				   Buffer *recent)
{
	BlockNumber blkno;
	Size		offset;
	Buffer		buf = InvalidBuffer;
	bool		found;

	bf_locate(h, meta, &blkno, &offset);
	if (recent && BufferIsValid(recent[blkno - 1]) &&
		bf_read_recent_buffer(index, blkno, recent[blkno - 1]))
		buf = recent[blkno - 1];
	if (!BufferIsValid(buf))
	{
		buf = ReadBuffer(index, blkno);
		if (recent)
			recent[blkno - 1] = buf;
	}
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	found = bloom_block_test((const uint8 *) BufferGetPage(buf) + offset,
							 (int) meta->nhashes, h);
	UnlockReleaseBuffer(buf);
	return found;
}

/* ---- build ---- */

/* page images: the metapage, and a data page from a slice of the bits */
static void
bf_fill_metapage(Page page, const BfIndexMeta *meta)
{
	PageInit(page, BLCKSZ, 0);
	memcpy(page + BF_PAGE_BITS_OFFSET, meta, sizeof(BfIndexMeta));
	/* pd_lower past the contents, so WAL full-page images keep them */
	((PageHeader) page)->pd_lower = BF_PAGE_BITS_OFFSET + sizeof(BfIndexMeta);
}

static void
bf_fill_datapage(Page page, const uint8 *blocks, uint64 nblocks)
{
	PageInit(page, BLCKSZ, 0);
	if (blocks)
		memcpy(page + BF_PAGE_BITS_OFFSET, blocks, nblocks * BLOOM_BLOCK_BYTES);
	((PageHeader) page)->pd_lower = BF_PAGE_BITS_OFFSET + BF_BLOCKS_PER_PAGE * BLOOM_BLOCK_BYTES;
}

/*
 * The filter parameters for a new index: the reloptions, or for an unset
 * capacity the default rule: twice the table's estimated rows (the
 * planner's estimate, which also covers never-analyzed tables), at least
 * BF_DEFAULT_MIN_CAPACITY, reduced if needed to the largest filter.
 */
static void
bf_build_meta(Relation heap, Relation index, BfIndexMeta *meta)
{
	BfOptions  *opts = (BfOptions *) index->rd_options;
	BfTypeInfo	cols[BLOOM_MAX_RECORD_FIELDS];
	int64		capacity = opts ? opts->capacity : 0;
	double		fpr = opts ? opts->fpr : 0.01;
	uint64		nblocks;
	int			nhashes;
	int			ncols;

	ncols = bf_key_columns(index, cols, CurrentMemoryContext);
	if (capacity <= 0)
	{
		BlockNumber pages = 0;
		double		tuples = 0;
		double		allvisfrac = 0;
		double		want;

		if (heap)
			table_relation_estimate_size(heap, NULL, &pages, &tuples, &allvisfrac);
		want = Max(BF_DEFAULT_GROWTH * tuples, (double) BF_DEFAULT_MIN_CAPACITY);
		want = Min(want, (double) INT_MAX);
		while (want > BF_DEFAULT_MIN_CAPACITY &&
			   (!bloom_size_for(want, fpr, &nblocks, &nhashes) ||
				nblocks > BLOOM_MAX_BLOCKS))
			want *= 0.9;
		capacity = (int64) ceil(want);
	}
	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);

	memset(meta, 0, sizeof(*meta));
	meta->magic = BF_INDEX_MAGIC;
	meta->version = BF_INDEX_VERSION;
	meta->nblocks = nblocks;
	meta->nhashes = (uint32) nhashes;
	meta->blocks_per_page = BF_BLOCKS_PER_PAGE;
	meta->seed = 0;
	meta->capacity = capacity;
	meta->fpr = fpr;
	bf_key_family(meta, cols, ncols);
}

typedef struct BfBuildState
{
	BfIndexState st;
	uint8	   *bits;
	double		indtuples;
	MemoryContext tmpcxt;
} BfBuildState;

static void
bf_build_callback(Relation index, ItemPointer tid, Datum *values,
				  bool *isnull, bool tupleIsAlive, void *state)
{
	BfBuildState *bs = (BfBuildState *) state;
	MemoryContext old = MemoryContextSwitchTo(bs->tmpcxt);
	bool		skip;
	uint64		h = bf_index_hash_key(&bs->st, values, isnull, &skip);

	if (!skip)
	{
		bloom_set_hash(bs->bits, bs->st.meta.nblocks, (int) bs->st.meta.nhashes, h);
		bs->indtuples += 1;
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(bs->tmpcxt);
}

/*
 * Build the whole filter in memory from a table scan, then write the
 * pages and WAL-log them in one go (as GiST's sorted build does).
 */
static IndexBuildResult *
bfbuild(Relation heap, Relation index, IndexInfo *indexInfo)
{
	IndexBuildResult *result;
	BfBuildState bs;
	double		reltuples;
	uint64		npages;
	Buffer		buf;

	if (RelationGetNumberOfBlocks(index) != 0)
		elog(ERROR, "index \"%s\" already contains data",
			 RelationGetRelationName(index));

	memset(&bs, 0, sizeof(bs));
	bf_build_meta(heap, index, &bs.st.meta);
	(void) bf_key_columns(index, bs.st.cols, CurrentMemoryContext);
	bs.bits = palloc_extended(bs.st.meta.nblocks * BLOOM_BLOCK_BYTES,
							  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	bs.tmpcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "bloomfilter build temporary context",
									  ALLOCSET_DEFAULT_SIZES);

	reltuples = table_index_build_scan(heap, index, indexInfo, true, true,
									   bf_build_callback, &bs, NULL);

	/* metapage, then the data pages */
	buf = bf_extend_relation(index, MAIN_FORKNUM);
	Assert(BufferGetBlockNumber(buf) == BF_METAPAGE_BLKNO);
	bf_fill_metapage(BufferGetPage(buf), &bs.st.meta);
	MarkBufferDirty(buf);
	UnlockReleaseBuffer(buf);

	npages = bloom_paged_npages(bs.st.meta.nblocks, BF_BLOCKS_PER_PAGE);
	for (uint64 p = 0; p < npages; p++)
	{
		uint64		first = p * BF_BLOCKS_PER_PAGE;
		uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, bs.st.meta.nblocks - first);

		CHECK_FOR_INTERRUPTS();
		buf = bf_extend_relation(index, MAIN_FORKNUM);
		bf_fill_datapage(BufferGetPage(buf), bs.bits + first * BLOOM_BLOCK_BYTES, n);
		MarkBufferDirty(buf);
		UnlockReleaseBuffer(buf);
	}
	if (RelationNeedsWAL(index))
		log_newpage_range(index, MAIN_FORKNUM, 0, (BlockNumber) (npages + 1), true);

	pfree(bs.bits);
	MemoryContextDelete(bs.tmpcxt);

	result = (IndexBuildResult *) palloc(sizeof(IndexBuildResult));
	result->heap_tuples = reltuples;
	result->index_tuples = bs.indtuples;
	return result;
}

/*
 * The init fork of an index on an UNLOGGED table: an empty filter of the
 * size the main fork got, so that after a crash the reset index has the
 * same parameters.  WAL-logged, as init forks must be.
 */
static void
bfbuildempty(Relation index)
{
	BfIndexMeta meta;
	Relation	heap;
	uint64		npages;
	Buffer		buf;

	/* the caller (index_build) holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	bf_build_meta(heap, index, &meta);
	table_close(heap, NoLock);

	npages = bloom_paged_npages(meta.nblocks, BF_BLOCKS_PER_PAGE);
	for (uint64 p = 0; p <= npages; p++)
	{
		buf = bf_extend_relation(index, INIT_FORKNUM);
		START_CRIT_SECTION();
		if (p == 0)
			bf_fill_metapage(BufferGetPage(buf), &meta);
		else
			bf_fill_datapage(BufferGetPage(buf), NULL, 0);
		MarkBufferDirty(buf);
		log_newpage_buffer(buf, true);
		END_CRIT_SECTION();
		UnlockReleaseBuffer(buf);
	}
}

/* ---- insert ---- */

/*
 * Set the bits of one key: test under a share lock (a key already present
 * writes nothing, not even WAL), else set them under the exclusive lock of
 * that one data page with a generic WAL record of the changed bytes.
 */
static bool
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

/* ---- vacuum ---- */

/* nothing is ever removed: bits of deleted keys go away at REINDEX */
static IndexBulkDeleteResult *
bfbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

static IndexBulkDeleteResult *
bfvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	/* the filter does not count keys; report the table's rows, as estimated */
	stats->num_index_tuples = info->num_heap_tuples;
	stats->estimated_count = true;
	return stats;
}

/* ---- scans: only "definitely not here" ---- */

/*
 * The key of col = const clauses on every key column, or false when some
 * column has none (or a NULL constant, or a non-constant comparison).
 * types[] get the constants' types and collations for hashing.
 */
static bool
bf_key_of_clauses(List *clauses, int ncols, Datum *values, bool *isnull,
				  Oid *types, Oid *colls)
{
	bool		have[BLOOM_MAX_RECORD_FIELDS] = {false};
	ListCell   *lc;

	foreach(lc, clauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		RestrictInfo *rinfo;
		Node	   *right;

		if (list_length(ic->indexquals) != 1 || ic->indexcol >= ncols)
			continue;
		rinfo = linitial_node(RestrictInfo, ic->indexquals);
		if (!IsA(rinfo->clause, OpExpr))
			continue;
		right = get_rightop(rinfo->clause);
		if (right == NULL || !IsA(right, Const) || ((Const *) right)->constisnull)
			continue;
		values[ic->indexcol] = ((Const *) right)->constvalue;
		isnull[ic->indexcol] = false;
		types[ic->indexcol] = ((Const *) right)->consttype;
		colls[ic->indexcol] = ((OpExpr *) rinfo->clause)->inputcollid;
		have[ic->indexcol] = true;
	}
	for (int i = 0; i < ncols; i++)
		if (!have[i])
			return false;
	return true;
}

/* is the key (of values of the given types) definitely absent? */
static bool
bf_key_absent(Relation index, Datum *values, bool *isnull, Oid *types, Oid *colls)
{
	BfIndexState st;
	BfTypeInfo	ti[BLOOM_MAX_RECORD_FIELDS];
	uint64		h;

	bf_index_state(index, &st);
	for (uint32 i = 0; i < st.meta.ncols; i++)
	{
		bf_typeinfo_init(&ti[i], types[i], colls[i], CurrentMemoryContext);
		/* the operator family guarantees this; never trust it blindly */
		if (ti[i].family != st.meta.colfamilies[i])
			return false;
	}
	if (st.meta.ncols == 1)
		h = bf_hash_datum(&ti[0], values[0], st.meta.seed);
	else
		h = bf_hash_fields(ti, (int) st.meta.ncols, values, isnull, st.meta.seed);
	return !bf_index_test_hash(index, &st.meta, h, NULL);
}

/*
 * The planner may use the index only for col = const (on every key
 * column) when the filter says the key is definitely absent: then the
 * scan costs one page and returns an empty bitmap.  In every other case
 * the cost is prohibitive.  The filter is probed at plan time; a plan kept
 * after the key was inserted stays correct (the scan then returns every
 * heap page, lossy, and the heap scan rechecks), only slow.
 */
static void
bfcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			   Cost *indexStartupCost, Cost *indexTotalCost,
			   Selectivity *indexSelectivity, double *indexCorrelation,
			   double *indexPages)
{
	IndexOptInfo *info = path->indexinfo;
	Datum		values[BLOOM_MAX_RECORD_FIELDS];
	bool		isnull[BLOOM_MAX_RECORD_FIELDS];
	Oid			types[BLOOM_MAX_RECORD_FIELDS];
	Oid			colls[BLOOM_MAX_RECORD_FIELDS];
	bool		absent = false;

	*indexCorrelation = 0.0;
	if (info->nkeycolumns <= BLOOM_MAX_RECORD_FIELDS &&
		bf_key_of_clauses(path->indexclauses, info->nkeycolumns, values, isnull,
						  types, colls))
	{
		/* the planner holds a lock on the index */
		Relation	index = index_open(info->indexoid, NoLock);

		absent = bf_key_absent(index, values, isnull, types, colls);
		index_close(index, NoLock);
	}
	if (absent)
	{
		*indexStartupCost = random_page_cost + cpu_operator_cost;
		*indexTotalCost = *indexStartupCost;
		*indexSelectivity = 0.0;
		*indexPages = 1;
	}
	else
	{
		*indexStartupCost = 1.0e10;
		*indexTotalCost = 1.0e10;
		*indexSelectivity = 1.0;
		*indexPages = info->pages;
	}
}

static IndexScanDesc
bfbeginscan(Relation index, int nkeys, int norderbys)
{
	return RelationGetIndexScan(index, nkeys, norderbys);
}

static void
bfrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
		 int norderbys)
{
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

static void
bfendscan(IndexScanDesc scan)
{
}

/*
 * Empty when the filter rules the key out; otherwise every page of the
 * table, lossy (the heap scan rechecks the condition).
 */
static int64
bfgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	index = scan->indexRelation;
	int			ncols = IndexRelationGetNumberOfKeyAttributes(index);
	Datum		values[BLOOM_MAX_RECORD_FIELDS];
	bool		isnull[BLOOM_MAX_RECORD_FIELDS];
	Oid			types[BLOOM_MAX_RECORD_FIELDS];
	Oid			colls[BLOOM_MAX_RECORD_FIELDS];
	bool		have[BLOOM_MAX_RECORD_FIELDS] = {false};
	bool		all = ncols <= BLOOM_MAX_RECORD_FIELDS;
	Relation	heap;
	BlockNumber nblocks;

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			col = key->sk_attno - 1;

		if (key->sk_flags & SK_ISNULL)
			return 0;			/* col = NULL is never true */
		if (col < 0 || col >= ncols || key->sk_strategy != 1 ||
			(key->sk_flags & (SK_SEARCHARRAY | SK_ROW_HEADER | SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			continue;
		values[col] = key->sk_argument;
		isnull[col] = false;
		types[col] = OidIsValid(key->sk_subtype) ? key->sk_subtype :
			TupleDescAttr(RelationGetDescr(index), col)->atttypid;
		colls[col] = key->sk_collation;
		have[col] = true;
	}
	for (int i = 0; all && i < ncols; i++)
		all = have[i];
	if (all && bf_key_absent(index, values, isnull, types, colls))
		return 0;

	/* the executor holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	nblocks = RelationGetNumberOfBlocks(heap);
	table_close(heap, NoLock);
	for (BlockNumber b = 0; b < nblocks; b++)
		tbm_add_page(tbm, b);
	return (int64) nblocks * MaxHeapTuplesPerPage;
}

/* ---- operator classes ---- */

/*
 * An operator class of this method has one operator, strategy 1, an
 * equality returning bool, and no support functions (keys are hashed by
 * the extension's own typed hashing).  Every operator of a family must
 * compare types of one element family, so that a probe of any of them
 * hashes like the indexed values.
 */
static bool
bfvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		has_self = false;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomfilter operator family of operator class \"%s\" has support functions, which are not used",
						opclassname)));
		result = false;
	}
	for (int i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);
		int			lf,
					rf;

		if (oprform->amopstrategy != 1 || oprform->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomfilter operator family of operator class \"%s\" contains invalid operator %s with strategy %d",
							opclassname, format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		lf = oprform->amoplefttype == ANYENUMOID ? BF_FAMILY_ENUM :
			bf_family_of_type(getBaseType(oprform->amoplefttype));
		rf = oprform->amoprighttype == ANYENUMOID ? BF_FAMILY_ENUM :
			bf_family_of_type(getBaseType(oprform->amoprighttype));
		if (lf != rf || lf == BF_FAMILY_OTHER || lf == BF_FAMILY_RECORD)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomfilter operator family of operator class \"%s\" contains operator %s comparing types that do not hash alike",
							opclassname, format_operator(oprform->amopopr))));
			result = false;
		}
		if (oprform->amoplefttype == opcintype && oprform->amoprighttype == opcintype)
			has_self = true;
	}
	if (!has_self)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomfilter operator class \"%s\" is missing an equality operator for its type",
						opclassname)));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}

bool
bf_is_bloomfilter_index(Relation index)
{
	return index->rd_rel->relkind == RELKIND_INDEX &&
		index->rd_indam != NULL && index->rd_indam->aminsert == bfinsert;
}

PG_FUNCTION_INFO_V1(bloomfilter_am_handler);

Datum
bloomfilter_am_handler(PG_FUNCTION_ARGS)
{
	IndexAmRoutine *amroutine = makeNode(IndexAmRoutine);

	bf_init_reloptions();

	amroutine->amstrategies = 1;
	amroutine->amsupport = 0;
	amroutine->amoptsprocnum = 0;
	amroutine->amcanorder = false;
	amroutine->amcanorderbyop = false;
	amroutine->amcanbackward = false;
	amroutine->amcanunique = false;
	amroutine->amcanmulticol = true;
	amroutine->amoptionalkey = true;
	amroutine->amsearcharray = false;
	amroutine->amsearchnulls = false;
	amroutine->amstorage = false;
	amroutine->amclusterable = false;
	amroutine->ampredlocks = false;
	amroutine->amcanparallel = false;
	amroutine->amcaninclude = false;
	amroutine->amusemaintenanceworkmem = false;
	amroutine->amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL;
	bf_amroutine_newer_fields(amroutine);
	amroutine->amkeytype = InvalidOid;

	amroutine->ambuild = bfbuild;
	amroutine->ambuildempty = bfbuildempty;
	amroutine->aminsert = bfinsert;
	amroutine->ambulkdelete = bfbulkdelete;
	amroutine->amvacuumcleanup = bfvacuumcleanup;
	amroutine->amcanreturn = NULL;
	amroutine->amcostestimate = bfcostestimate;
	amroutine->amoptions = bfoptions;
	amroutine->amproperty = NULL;
	amroutine->ambuildphasename = NULL;
	amroutine->amvalidate = bfvalidate;
	amroutine->amadjustmembers = NULL;
	/* bitmap scans only, to rule out an absent key (bfcostestimate) */
	amroutine->ambeginscan = bfbeginscan;
	amroutine->amrescan = bfrescan;
	amroutine->amgettuple = NULL;
	amroutine->amgetbitmap = bfgetbitmap;
	amroutine->amendscan = bfendscan;
	amroutine->ammarkpos = NULL;
	amroutine->amrestrpos = NULL;
	amroutine->amestimateparallelscan = NULL;
	amroutine->aminitparallelscan = NULL;
	amroutine->amparallelrescan = NULL;

	PG_RETURN_POINTER(amroutine);
}
