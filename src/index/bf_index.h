/*-------------------------------------------------------------------------
 *
 * bf_index.h
 *	  The bloomfilter index access method (src/index/; its files are
 *	  mapped in src/README.md): on-disk layout (metapage and data pages)
 *	  and the functions shared by its files.
 *
 * Block 0 is the metapage.  Blocks 1.. are data pages, each holding
 * BF_BLOCKS_PER_PAGE whole 512-bit filter blocks from byte
 * BF_PAGE_BITS_OFFSET on (a cache-line boundary after the page header);
 * filter block b lives on page 1 + b / BF_BLOCKS_PER_PAGE.  The bits are
 * those of docs/FORMAT.md, so concatenating the data pages' blocks gives
 * the bit array of an equivalent bloomfilter value.
 *
 * A growing index (reloption growth, metapage version 2) is a list of such
 * filters, its layers, sized as the layers of a growing bloomfilter value
 * (FORMAT.md section 9); the metapage's layer table (BfIndexLayers, after
 * BfIndexMeta) gives each layer's first data page.  Layers are appended at
 * the end of the relation when the newest one fills; keys go to the
 * newest, lookups test every layer.  A version 1 metapage is one layer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_INDEX_H
#define BF_INDEX_H

#include "bf_grow.h"

#include "access/amapi.h"
#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "nodes/tidbitmap.h"
#include "utils/array.h"
#include "storage/buf.h"
#include "storage/bufpage.h"
#include "utils/guc.h"
#include "utils/rel.h"

#define BF_INDEX_MAGIC		0x424C4958	/* "BLIX" */
#define BF_INDEX_VERSION	1	/* one filter */
#define BF_INDEX_VERSION_GROWING 2	/* layers: BfIndexLayers follows */
#define BF_METAPAGE_BLKNO	0
#define BF_PAGE_BITS_OFFSET 64
#define BF_BLOCKS_PER_PAGE	((uint32) bloom_paged_blocks_per_page(BLCKSZ - BF_PAGE_BITS_OFFSET))

/* the metapage contents, stored at BF_PAGE_BITS_OFFSET of block 0 */
typedef struct BfIndexMeta
{
	uint32		magic;
	uint32		version;
	uint64		nblocks;		/* filter blocks of 512 bits */
	uint32		nhashes;
	uint32		blocks_per_page;	/* BF_BLOCKS_PER_PAGE when built */
	int64		seed;
	int64		capacity;		/* as sized (explicit or the default rule) */
	double		fpr;
	uint32		ncols;			/* key columns, 1..8 */
	uint32		detail;			/* family detail of the key (FORMAT.md) */
	uint8		family;			/* family of the key: the column's, or record */
	uint8		colfamilies[BLOOM_MAX_RECORD_FIELDS];

	/*
	 * The data page (0 = block 1) where this filter starts.  0 on disk (and
	 * in every metapage written before layers existed, whose bytes here are
	 * the zeros of PageInit); a layer's in the views of BfIndexState.
	 */
	uint32		first_page;
} BfIndexMeta;

/* one layer of a growing index */
typedef struct BfIndexLayer
{
	uint64		nblocks;
	uint32		nhashes;
	uint32		first_page;		/* data page (0 = block 1) of its block 0 */
	int64		capacity;		/* as FORMAT.md section 9.1 sizes it */
	double		fpr;
} BfIndexLayer;

/*
 * The layer table: on the metapage of a growing index, at
 * BF_LAYERS_OFFSET; for a version 1 index, made up from the metapage (one
 * layer, growth 0).
 */
typedef struct BfIndexLayers
{
	uint32		growth;			/* 0: the index does not grow */
	uint32		nlayers;
	int64		capacity;		/* layer 0's */
	double		fpr;			/* the whole index's target */
	double		ratio;			/* tightening ratio of the layers' rates */
	BfIndexLayer layer[BLOOM_GROW_MAX_LAYERS];
} BfIndexLayers;

#define BF_LAYERS_OFFSET	(BF_PAGE_BITS_OFFSET + MAXALIGN(sizeof(BfIndexMeta)))

/*
 * What a backend needs to hash keys for, and probe, one index: the
 * validated metapage and how to hash each key column.  Kept in the
 * relcache entry's rd_amcache; callers work on a copy (bf_index_state),
 * because a cache invalidation may free rd_amcache at any catalog access.
 */
typedef struct BfIndexState
{
	BfIndexMeta meta;			/* of a growing index: its newest layer */
	BfTypeInfo	cols[BLOOM_MAX_RECORD_FIELDS];
	BfIndexLayers layers;
} BfIndexState;

/* reloptions */
typedef struct BfOptions
{
	int32		vl_len_;		/* varlena header (do not touch directly!) */
	int			capacity;		/* 0 = choose from the table's size */
	double		fpr;
	int			growth;			/* 0 = a filter that does not grow */
} BfOptions;

/* the data page (0 = block 1) holding the filter block of hash h */
static inline uint32
bf_page_of(uint64 h, const BfIndexMeta *meta)
{
	return (uint32) (bloom_block_of(h, meta->nblocks) / BF_BLOCKS_PER_PAGE);
}

/* the byte offset, on its data page, of the filter block of hash h */
static inline Size
bf_offset_of(uint64 h, const BfIndexMeta *meta)
{
	return BF_PAGE_BITS_OFFSET +
		(Size) (bloom_block_of(h, meta->nblocks) % BF_BLOCKS_PER_PAGE) * BLOOM_BLOCK_BYTES;
}

/* locate the filter block of hash h: its data page and the byte offset on it */
static inline void
bf_locate(uint64 h, const BfIndexMeta *meta, BlockNumber *blkno, Size *offset)
{
	*blkno = (BlockNumber) (1 + meta->first_page + bf_page_of(h, meta));
	*offset = bf_offset_of(h, meta);
}

/* number of data pages of a filter of nblocks blocks */
static inline uint64
bf_data_pages(const BfIndexMeta *meta)
{
	return bloom_paged_npages(meta->nblocks, BF_BLOCKS_PER_PAGE);
}

/* bf_index_am.c: the handler (nothing else calls into it) */

/* bf_index_meta.c: key columns, metapage, cached state, probes */
extern int	bf_key_columns(Relation index, BfTypeInfo *cols, MemoryContext mcxt);
extern void bf_key_family(BfIndexMeta *meta, BfTypeInfo *cols, int ncols);
extern uint64 bf_index_hash_key(BfIndexState *st, Datum *values, bool *isnull,
								bool *skip);
extern void bf_index_state(Relation index, BfIndexState *st);
extern void bf_index_meta(Relation index, BfIndexMeta *meta);
extern bool bf_index_test_hash(Relation index, const BfIndexLayers *layers,
							   uint32 nlayers, uint64 h, Buffer *recent);

/* bf_index_layers.c: the layer table, per-layer views, growth */
extern void bf_layer_view(const BfIndexMeta *meta, const BfIndexLayer *layer,
						  BfIndexMeta *view);
extern uint32 bf_index_data_pages(const BfIndexLayers *layers);
extern const char *bf_layers_read(Page page, const BfIndexMeta *meta,
								  BlockNumber relpages, BfIndexLayers *layers);
extern void bf_index_grow(Relation index, uint32 full_first_page);

/* fn(arg, first block, blocks of the layer on it, page): false stops */
typedef bool (*BfPageFn) (void *arg, uint64 first, uint32 n, Page page);
extern void bf_layer_pages(Relation index, const BfIndexLayer *l, uint64 step,
						   BufferAccessStrategy strategy, BfPageFn fn, void *arg);
extern void bf_read_bits(Relation index, const BfIndexLayer *layer, uint8 *dst);

/* bf_index_page.c: page images, setting bits, the fill test */
extern void bf_fill_metapage(Page page, const BfIndexMeta *meta,
							 const BfIndexLayers *layers);
extern void bf_fill_datapage(Page page, const uint8 *blocks, uint64 nblocks);
extern bool bf_layer_page_full(const BfIndexMeta *meta, BlockNumber blkno, Page page);
extern bool bf_insert_page(Relation index, const BfIndexMeta *meta,
						   BlockNumber blkno, const uint64 *hashes, int n);

/* bf_index_build.c */
extern IndexBuildResult *bfbuild(Relation heap, Relation index,
								 IndexInfo *indexInfo);
extern void bfbuildempty(Relation index);
extern bool bf_is_bloomfilter_index(Relation index);
extern bool bf_is_bloomfilter_am(Relation index);

/* bf_index_insert.c */
extern bool bfinsert(Relation index, Datum *values, bool *isnull,
					 ItemPointer ht_ctid, Relation heapRel,
					 IndexUniqueCheck checkUnique, bool indexUnchanged,
					 IndexInfo *indexInfo);

/* bf_index_pending.c: keys inserted by this transaction, not yet in the pages */
extern bool bf_pending_add(Relation index, const BfIndexMeta *meta, uint64 h);
extern void bf_pending_flush_all(void);
extern bool bf_pending_unknown(void);

/* bf_index_scan.c: the planner's cost and the bitmap scan */
extern void bfcostestimate(PlannerInfo *root, IndexPath *path,
						   double loop_count, Cost *indexStartupCost,
						   Cost *indexTotalCost, Selectivity *indexSelectivity,
						   double *indexCorrelation, double *indexPages);
extern IndexScanDesc bfbeginscan(Relation index, int nkeys, int norderbys);
extern void bfrescan(IndexScanDesc scan, ScanKey keys, int nkeys,
					 ScanKey orderbys, int norderbys);
extern void bfendscan(IndexScanDesc scan);
extern int64 bfgetbitmap(IndexScanDesc scan, TIDBitmap *tbm);

/* bf_index_vacuum.c */
extern IndexBulkDeleteResult *bfbulkdelete(IndexVacuumInfo *info,
										   IndexBulkDeleteResult *stats,
										   IndexBulkDeleteCallback callback,
										   void *callback_state);
extern IndexBulkDeleteResult *bfvacuumcleanup(IndexVacuumInfo *info,
											  IndexBulkDeleteResult *stats);

/* bf_index_access.c: opening an index for lookups, and who may read it */
extern void bf_index_check_complete(Relation index);
extern Relation bf_index_open(Oid indexoid, bool allow_partitioned,
							  const char *what);
extern bool bf_index_readable(Relation index, Oid userid, Oid relid,
							  AttrNumber *badcol);
extern void bf_index_check_access(Relation index);
extern void bf_index_check_access_oid(Oid indexoid);
extern bool bf_index_current(Relation index);
extern bool bf_index_complete(Form_pg_index ix);
extern bool bf_index_answers(Relation index);

/*
 * A caller's state for repeated lookups (bf_index_might_contain_cached):
 * zero it once; keep it, and the memory context given, across calls.
 */
typedef struct BfIndexLookup
{
	Oid			indexoid;		/* opened and checked in lxid/subxid/cid */
	LocalTransactionId lxid;
	SubTransactionId subxid;
	CommandId	cid;
	Oid			userid;			/* privileges checked for (bf_index_contains) */
	List	   *leaves;			/* the partitions' indexes, when partitioned */
	Oid			recent_index;	/* the buffers last read, per data page */
	uint32		recent_npages;
	Buffer	   *recent;
} BfIndexLookup;

/* bf_index_lookup.c */
extern List *bf_index_leaves(Oid indexoid);
extern Relation bf_lookup_open(BfIndexLookup *lk, Oid indexoid, MemoryContext mcxt,
							   const char *what);
extern bool bf_probe(Relation index, List *leaves, BfTypeInfo *ti, Datum value,
					 BfIndexLookup *lk, MemoryContext mcxt);
extern bool bf_index_might_contain(Oid indexoid, BfTypeInfo *ti, Datum value);
extern bool bf_index_might_contain_cached(BfIndexLookup *lk, Oid indexoid,
										  BfTypeInfo *ti, Datum value,
										  MemoryContext mcxt, const char *what);
typedef struct BfIndexCopy BfIndexCopy;
extern BfIndexCopy *bf_index_copy(BfIndexLookup *lk, Oid indexoid, Size max_bytes,
								  MemoryContext mcxt, const char *what, Size *bytes);
extern bool bf_index_copy_contains(const BfIndexCopy *c, BfTypeInfo *ti, Datum value);

#endif							/* BF_INDEX_H */
