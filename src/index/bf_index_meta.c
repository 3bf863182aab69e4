/*-------------------------------------------------------------------------
 *
 * bf_index_meta.c
 *	  The bloomfilter index's metapage and the state a backend caches from
 *	  it: the key columns and how to hash them, reading and validating
 *	  block 0, the page images written by builds, and the probe of one
 *	  hash (one data page under a share lock).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "catalog/index.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

/* ---- key columns and hashing ---- */

/* type info of the index's key columns; errors for unsupported keys */
int
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
void
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

	const char *bad;
	BlockNumber relpages = RelationGetNumberOfBlocks(index);

	memset(&st, 0, sizeof(st));
	if (relpages == 0)
		bf_corrupt(index, "The index has no metapage.");
	buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	meta = (BfIndexMeta *) (page + BF_PAGE_BITS_OFFSET);
	memcpy(&st.meta, meta, sizeof(BfIndexMeta));
	bad = st.meta.magic != BF_INDEX_MAGIC ? NULL :
		bf_layers_read(page, &st.meta, relpages, &st.layers);
	UnlockReleaseBuffer(buf);

	if (st.meta.magic != BF_INDEX_MAGIC)
		bf_corrupt(index, "The metapage does not start with the bloomfilter index magic number.");
	if (st.meta.version != BF_INDEX_VERSION && st.meta.version != BF_INDEX_VERSION_GROWING)
		ereport(ERROR,
				(errcode(ERRCODE_INDEX_CORRUPTED),
				 errmsg("bloomfilter index \"%s\" has layout version %u, this library reads versions %d and %d",
						RelationGetRelationName(index), st.meta.version, BF_INDEX_VERSION,
						BF_INDEX_VERSION_GROWING),
				 errhint("Rebuild the index with REINDEX.")));
	if (st.meta.blocks_per_page != BF_BLOCKS_PER_PAGE)
		bf_corrupt(index, "The metapage records a different number of filter blocks per page.");
	if (st.meta.nblocks < 1 || st.meta.nblocks > BLOOM_MAX_BLOCKS ||
		st.meta.nhashes < 1 || st.meta.nhashes > BLOOM_MAX_HASHES)
		bf_corrupt(index, "The filter size or number of hashes is out of range.");
	if (relpages < 1 + bloom_paged_npages(st.meta.nblocks, BF_BLOCKS_PER_PAGE))
		bf_corrupt(index, "The index has fewer pages than its filter needs.");
	if (bad)
		bf_corrupt(index, bad);
	/* inserts go to the newest layer: the state's meta is its view */
	bf_layer_view(&st.meta, &st.layers.layer[st.layers.nlayers - 1], &st.meta);

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

/*
 * The cached state, read again when another backend has grown the index:
 * the layer count on the metapage is read each time for a growing index
 * (one shared buffer access), so that no lookup misses a layer that
 * existed when its snapshot was taken.
 */
static BfIndexState *
bf_current_state(Relation index)
{
	BfIndexState *cached = (BfIndexState *) index->rd_amcache;

	if (cached != NULL && cached->meta.version == BF_INDEX_VERSION_GROWING)
	{
		Buffer		buf = ReadBuffer(index, BF_METAPAGE_BLKNO);
		uint32		nlayers;

		LockBuffer(buf, BUFFER_LOCK_SHARE);
		nlayers = ((BfIndexLayers *) (BufferGetPage(buf) + BF_LAYERS_OFFSET))->nlayers;
		UnlockReleaseBuffer(buf);
		if (cached->layers.nlayers != nlayers)
			cached = NULL;
	}
	if (cached == NULL)
	{
		bf_load_state(index);
		cached = (BfIndexState *) index->rd_amcache;
	}
	return cached;
}

/* a private copy of the index's validated state */
void
bf_index_state(Relation index, BfIndexState *st)
{
	BfIndexState *cached = bf_current_state(index);
	uint32		nlayers = cached->layers.nlayers;

	/* only what is used: this runs for every inserted row */
	memcpy(&st->meta, &cached->meta, sizeof(BfIndexMeta));
	memcpy(st->cols, cached->cols, sizeof(BfTypeInfo) * cached->meta.ncols);
	memcpy(&st->layers, &cached->layers,
		   offsetof(BfIndexLayers, layer) + sizeof(BfIndexLayer) * nlayers);
}

/* the validated metapage only: of a growing index, its newest layer's view */
void
bf_index_meta(Relation index, BfIndexMeta *meta)
{
	memcpy(meta, &bf_current_state(index)->meta, sizeof(BfIndexMeta));
}

/*
 * Test a hash against layers 0 .. nlayers - 1 (all of them, or the older
 * ones): one data page per layer read under a share lock.  recent, if not
 * NULL, has one entry per data page: the buffer that held it last time,
 * tried first with ReadRecentBuffer (which checks that the buffer still
 * holds that page), which skips the shared buffer mapping lookup: for a
 * large index that lookup is a cache miss per call.
 */
bool
bf_index_test_hash(Relation index, const BfIndexLayers *layers, uint32 nlayers,
				   uint64 h, Buffer *recent)
{
	uint64		words[(BLOOM_MAX_HASHES + 6) / 7];
	uint32		kmax = 0;

	/* the bit positions depend on h alone: mix it once for every layer */
	for (uint32 i = 0; i < nlayers; i++)
		kmax = Max(kmax, layers->layer[i].nhashes);
	bloom_block_words(h, (int) kmax, words);
	/* newest first: it holds the most keys */
	for (int i = (int) nlayers - 1; i >= 0; i--)
	{
		const BfIndexLayer *l = &layers->layer[i];
		uint64		b = bloom_block_of(h, l->nblocks);
		BlockNumber blkno = (BlockNumber) (1 + l->first_page + b / BF_BLOCKS_PER_PAGE);
		Size		offset = BF_PAGE_BITS_OFFSET + (Size) (b % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
		Buffer		buf = InvalidBuffer;
		bool		found;

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
		found = bloom_block_test_words((const uint8 *) BufferGetPage(buf) + offset,
									   (int) l->nhashes, words);
		UnlockReleaseBuffer(buf);
		if (found)
			return true;
	}
	return false;
}

