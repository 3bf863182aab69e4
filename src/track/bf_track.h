/*-------------------------------------------------------------------------
 *
 * bf_track.h
 *	  Declarations shared by the tracked-filter code (src/track/; its
 *	  files are mapped in src/README.md).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_TRACK_H
#define BF_TRACK_H

#include "bf_grow.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "nodes/pg_list.h"
#include "storage/buf.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

/* attribute numbers of bf_registry as created by 1.0 (never reordered) */
#define Anum_bf_registry_id			1
#define Anum_bf_registry_tbl		2
#define Anum_bf_registry_col		3
#define Anum_bf_registry_method		4
#define Anum_bf_registry_capacity	5
#define Anum_bf_registry_fpr		6
#define Anum_bf_registry_filter		7
#define Anum_bf_registry_deleted	8

/* names of the sync triggers of registry row id: bf_sync_<id>_<suffix> */
#define BF_NTRIGGERS 4
extern const char *const bf_trigger_suffixes[BF_NTRIGGERS];

/* the search_path every SPI query of the extension runs under */
#define BF_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

/* the NULL-capacity rule: max(BF_MIN_CAPACITY, BF_GROWTH * rows) */
#define BF_MIN_CAPACITY 1000
#define BF_GROWTH		2

/*
 * The extension as this backend found it: its schema, the registry and
 * its indexes, and which columns 1.1 added to the registry (0 while the
 * catalog is still 1.0's, until ALTER EXTENSION UPDATE).  Rebuilt after
 * any invalidation of the registry or of pg_proc.
 */
#define BF_QUALNAME_LEN (4 * NAMEDATALEN + 8)

typedef struct BfExt
{
	Oid			nsp;
	char		nspname[BF_QUALNAME_LEN];	/* quoted */
	char		registry[BF_QUALNAME_LEN];	/* quoted and qualified */
	char		registry_attnum[BF_QUALNAME_LEN];	/* quoted and qualified */
	Oid			registry_relid;
	Oid			registry_pkey;
	Oid			registry_tbl_col_key;
	Oid			registry_attnum_relid;
	Oid			registry_attnum_pkey;
	Oid			registry_owner;
	Oid			sync_fn;		/* bf_track_sync() */
	Oid			bftype;			/* the bloomfilter type */
	AttrNumber	att_stale;		/* text: why the filter is stale, or NULL */
	AttrNumber	att_created_index;	/* name of the index bf_track made */
	AttrNumber	att_version;	/* bigint: changes with every filter write */
	AttrNumber	att_changes;	/* bytea: which chunks each write changed */
	/* 1.2: chunked storage (0 / InvalidOid before ALTER EXTENSION UPDATE) */
	AttrNumber	att_header;		/* bytea: the header of a chunked filter */
	AttrNumber	att_chunk_bytes;	/* int4: its chunk size, NULL if whole */
	AttrNumber	att_written;	/* xid8: last writer of its header */
	Oid			chunk_relid;	/* bf_registry_chunk */
	Oid			chunk_pkey;
} BfExt;

extern const BfExt *bf_ext(Oid fn_oid, bool missing_ok);

/*
 * A layer of a chunked filter (a plain filter has one, a growing one L):
 * its header as the registry row holds it (its count without its chunks'),
 * its chunks' numbers, and where its header starts in the whole value.
 */
typedef struct BfChunkLayer
{
	BloomHeader hdr;
	int32		first;
	int32		nchunks;
	Size		offset;
} BfChunkLayer;

/* a registry row as read by bf_registry_fetch */
typedef struct RegRow
{
	int64		id;
	Oid			tbl;
	NameData	col;
	bool		use_index;		/* method 'index': the filter is an index */
	int64		capacity;
	double		fpr;
	char	   *stale;			/* why the filter is stale, or NULL */
	bool		has_created_index;
	NameData	created_index;	/* when has_created_index */
	bool		has_version;
	int64		version;
	struct varlena *filter_raw; /* as stored (maybe a TOAST pointer), or NULL */
	struct varlena *changes_raw;	/* as stored, or NULL */
	/*
	 * A chunked filter (filter_raw NULL): its chunk size, the header of its
	 * (first) layer, which holds the family and seed of all, and its layers
	 * (growing: the growing header and a frame of L layer headers).
	 */
	int32		chunk_bytes;	/* 0 if not chunked */
	BloomHeader hdr;
	bool		growing;
	BloomGrowHeader gh;			/* when growing */
	int			nlayers;
	BfChunkLayer *layers;
	uint64		written;		/* full xid of the header's last writer */
	const char *malformed;		/* what is wrong with the header, or NULL */
	bool		rebuilding;		/* an online rebuild runs: writers log their keys */
	bool		mine;			/* this row version was written by this transaction */
	ItemPointerData tid;		/* this row version's place and writer */
	TransactionId xmin;
} RegRow;

/*
 * The chunk size of newly stored plain trigger filters, in bytes (whole
 * 64-byte blocks; chosen by measurement, docs/PERFORMANCE.md; a filter
 * keeps the size it was stored with).
 */
#ifndef BF_TRACK_CHUNK_BYTES
#define BF_TRACK_CHUNK_BYTES 128
#endif
/* statements with this many keys read a filter's chunks in one ordered scan */
#define BF_TRACK_BULK_KEYS 1024

/* the largest chunk size a registry row may name (a row fits a page) */
#define BF_TRACK_MAX_CHUNK_BYTES 4096

extern void bf_not_tracked(Oid relid, const char *colname);
extern bool bf_tracked_join_usable(const BfExt *ext, Oid relid, const char *colname,
								   Oid userid);
extern bool bf_tracked_might_contain(FunctionCallInfo fcinfo, bool *found);
extern void **bf_tracked_call_state(FunctionCallInfo fcinfo);
extern bool bf_registry_fetch(const BfExt *ext, int64 id, Oid relid,
							  const char *colname, bool latest, RegRow *out);
extern bool bf_registry_fetch_damaged(const BfExt *ext, int64 id, Oid relid,
									  const char *colname, bool latest, RegRow *out);
extern void bf_registry_decode(const BfExt *ext, TupleDesc desc, HeapTuple tup,
							   RegRow *out);
extern bool bf_registry_attnum(const BfExt *ext, int64 id, AttrNumber *attnum,
							   Oid *typid, Oid *collid);
extern struct BfCachedFilter *bf_registry_filter_hold(RegRow *r, BfFilter *f);
extern bool bf_registry_filter_cached(RegRow *r, BfFilter *f);
extern void bf_registry_changed(const BfExt *ext);
extern const char *bf_registry_new_value_sql(const BfExt *ext);
extern struct varlena *bf_registry_value(const BfExt *ext, RegRow *r, Snapshot snap);

/*
 * SPI under the safe search_path.  Statements run as the caller unless
 * bracketed by bf_as_owner / bf_as_caller: the registry is written as its
 * owner (whose rights the caller does not need), while DDL that creates
 * objects on the caller's tables runs with the caller's own rights.
 */
typedef struct BfSpiContext
{
	const BfExt *ext;
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
	MemoryContext caller_cxt;	/* current at bf_spi_begin */
} BfSpiContext;

extern void bf_spi_begin(BfSpiContext *cx, Oid fn_oid, bool as_owner);
extern void bf_spi_end(BfSpiContext *cx);
extern void bf_as_owner(BfSpiContext *cx);
extern void bf_as_caller(BfSpiContext *cx);
extern void bf_spi_exec(const char *sql, int nargs, Oid *types, Datum *values,
						int expect);
extern void bf_spi_ddl(const char *sql);
extern bool bf_in_own_ddl(void);
extern uint64 bf_spi_ids(const char *sql, int nargs, Oid *types, Datum *values,
						 int64 **ids, Oid **rels);
extern void bf_registry_mark_stale(BfSpiContext *cx, int64 id, const char *why);
extern void bf_registry_delete(BfSpiContext *cx, int64 id);
extern bool bf_registry_lock(BfSpiContext *cx, int64 id, RegRow *now);
extern void bf_registry_relock(BfSpiContext *cx, const RegRow *r, RegRow *now);
extern char *bf_registry_pending_table(const BfExt *ext);
extern void bf_registry_clear_log(BfSpiContext *cx, int64 id);
extern void bf_registry_lock_col(BfSpiContext *cx, Oid relid, Datum colname, RegRow *r);
extern void bf_registry_write_header(BfSpiContext *cx, const RegRow *r);
extern void bf_registry_set_value(BfSpiContext *cx, int64 id, struct varlena *vl,
								  const char *extra, int nextra, Oid *xtypes,
								  Datum *xvalues);
extern void bf_registry_set_rebuilt(BfSpiContext *cx, int64 id, struct varlena *vl,
									int64 capacity, double fpr);
extern char *bf_qualified_rel(Oid relid);

/* bf_track_changes.c: a tracked filter's changes, per chunk of its value */
extern bool *bf_track_touched(Size value_len);
extern bytea *bf_track_stamps(struct varlena *old, int64 version, Size value_len,
							  const bool *touched);
extern bytea *bf_track_patch(const struct varlena *f, struct varlena *changes,
							 int64 version, bool since_null, uint64 since, bool *full);

extern bytea *bf_chunks_patch(const BfExt *ext, const RegRow *r, Snapshot snap,
							  bool since_null, uint64 since, uint64 *next, bool *full);

/* bf_track_chunks.c */
extern bool bf_chunks_layout(RegRow *r, const uint8 *header, Size len);
extern bytea *bf_chunks_frame(const RegRow *r);
extern bytea *bf_chunks_value_frame(const struct varlena *vl);
extern int32 bf_chunks_count(const RegRow *r);
extern const BfChunkLayer *bf_chunks_layer_of(const RegRow *r, int32 c);
struct BfChunkPlaces;
extern bool bf_chunks_test(const BfExt *ext, const RegRow *r, BfTypeInfo *ti,
						   Datum value, Snapshot snap, struct BfChunkPlaces *places);
extern bool bf_chunks_test_hash(const BfExt *ext, const RegRow *r, uint64 h,
								int nlayers, Snapshot snap, struct BfChunkPlaces *places);
extern int64 bf_chunks_sample(const BfExt *ext, const RegRow *r, int32 limit);
extern struct varlena *bf_chunks_assemble(const BfExt *ext, const RegRow *r,
										  Snapshot snap, uint64 since, bool *changed);
extern struct varlena *bf_chunks_assemble_latest(const BfExt *ext, const RegRow *r);
extern struct varlena *bf_chunks_empty(const RegRow *r);
extern void bf_chunks_delete(const BfExt *ext, int64 id);
extern void bf_chunks_replace(const BfExt *ext, int64 id, const struct varlena *vl,
							  int32 chunk_bytes);
extern void bf_chunks_replaced(const RegRow *r);
extern void bf_chunks_add(const BfExt *ext, const RegRow *r, uint64 *hashes,
						  int n, bool force);
extern void bf_chunks_or(const BfExt *ext, const RegRow *r, const struct varlena *src);
extern void bf_chunks_or_layer(const BfExt *ext, const RegRow *r, int layer,
							   const uint8 *bits, const uint8 *before);
extern void bf_chunks_insert_layer(const BfExt *ext, const RegRow *r, int layer,
								   const uint8 *bits);

/* shared by the chunk files (bf_track_chunks.c, bf_track_chunks_write.c) */
#define Anum_chunk_id		1
#define Anum_chunk_chunk	2
#define Anum_chunk_inserted 3
#define Anum_chunk_written	4
#define Anum_chunk_bits		5
#define Natts_chunk			5

/* the fields of a chunk row of @extschema@.bf_registry_chunk */
typedef struct BfChunkRow
{
	int32		chunk;
	int64		inserted;
	uint64		written;
	const uint8 *bits;
	Size		len;
} BfChunkRow;

extern SysScanDesc bf_chunk_scan(Relation rel, Relation idx, int64 id, int32 chunk,
								 bool one, Snapshot snap);
extern void bf_chunk_row(HeapTuple tup, TupleDesc desc, BfChunkRow *c);
extern uint64 bf_chunk_blocks(const RegRow *r, int32 c);
extern void bf_bad_chunk(const RegRow *r, int32 c);

/*
 * bf_track_places.c: where a registry row and chunk rows lie, kept by a
 * backend between statements.  Only places are kept, never what a row
 * says: each use fetches the row version the snapshot sees at the place
 * kept (the root of its HOT chain), checks that it is the row wanted (its
 * key: unique, so the one version a snapshot sees), and falls back to
 * the index when it is not.
 */
typedef struct BfRowPlace
{
	ItemPointerData root;		/* of the registry row's HOT chain */
	ItemPointerData seen;		/* the version last decoded, and its writer */
	TransactionId seen_xmin;
} BfRowPlace;

typedef struct BfChunkPlaces BfChunkPlaces;

typedef enum BfFetchKept
{
	BF_KEPT_NONE,				/* no registry row */
	BF_KEPT_SAME,				/* the version last decoded: *out untouched */
	BF_KEPT_NEW					/* another version, decoded into *out */
} BfFetchKept;

/* bf_track_registry.c */
extern BfFetchKept bf_registry_fetch_kept(const BfExt *ext, BfRowPlace *place, Oid relid,
										  const char *colname, Snapshot snap, RegRow *out);
extern bool bf_place_fetch(Relation rel, const ItemPointerData *root, Snapshot snap,
						   Buffer *buf, HeapTuple tup);
extern void bf_place_root(Relation rel, const ItemPointerData *tid, ItemPointerData *root);
extern BfChunkPlaces *bf_chunk_places_new(MemoryContext mcxt);
extern void bf_chunk_places_reset(BfChunkPlaces *p);
extern bool bf_chunk_place_fetch(Relation rel, Oid idxoid, Relation *idx, BfChunkPlaces *p,
								 int64 id, int32 nchunks, int32 c, Snapshot snap,
								 Buffer *buf, HeapTuple tup);
extern void bf_chunk_place_set(Relation rel, BfChunkPlaces *p, int32 c,
							   const ItemPointerData *tid);

/* bf_track_grow.c: growing filters in chunks */
extern void bf_grow_chunks_add(BfSpiContext *cx, RegRow *r, BfTypeInfo *ti,
							   uint64 *hashes, int n, bool reader);
extern void bf_grow_chunks_fill(BfSpiContext *cx, RegRow *now, Oid relid);
extern void bf_grow_chunks_store(BfSpiContext *cx, const RegRow *r,
								 const struct varlena *before,
								 const struct varlena *after);
extern uint64 bf_chunks_header_written(const RegRow *r);
extern uint64 bf_chunks_position(Snapshot snap);
extern bool bf_chunks_position_xid(uint64 pos, uint64 *xid);

/* bf_track_worker.c: its settings, and the worker when preloaded */
extern void bf_track_worker_init(void);

/* bf_track_objects.c */
extern List *bf_tree_members(Oid relid);
extern bool bf_in_tree(Oid relid, Oid root);
extern void bf_lock_tree(Oid relid, LOCKMODE mode);
extern void bf_check_no_children(Oid relid, const char *what);
extern Oid	bf_find_bloom_index(Oid relid, AttrNumber attnum, Oid *invalid);
extern AttrNumber bf_user_column(Oid relid, const char *colname);
extern bool bf_index_usable(Oid indexoid);
extern void bf_install_triggers(BfSpiContext *cx, int64 id, Oid relid);
extern void bf_install_missing_triggers(BfSpiContext *cx, int64 id, Oid root);
extern void bf_drop_triggers(BfSpiContext *cx, int64 id, bool stale_only);
extern char *bf_sync_trigger_problem(const BfExt *ext, int64 id, Oid root);
extern bool bf_parse_trigger_name(const char *name, int64 *id, int *suffix);
extern int64 bf_fill_from_rel(BfFilter *f, Oid relid, const char *colname,
							  bool only, const char *what);
extern BfFilter bf_detoast_copy(Datum d);

/* a new growing tracked filter's growth */
#define BF_TRACK_GROWTH 2
extern BfFilter bf_new_tracked_filter(int64 capacity, double fpr, bool growing,
									  int64 seed);

/* bf_track_rebuild.c: online rebuilds of trigger filters */
extern void bf_rebuild_note_writes(Oid fn_oid, const RegRow *r, const uint64 *hashes,
								   int n);
extern void bf_rebuild_online(BfSpiContext *cx, const RegRow *before, Oid relid,
							  Datum colname, int64 capacity, double fpr, bool growing);

#endif							/* BF_TRACK_H */
