/*-------------------------------------------------------------------------
 *
 * bf_track_chunks.c
 *	  The chunked storage of a filter kept by the trigger method: the
 *	  registry row holds the 64-byte header (a growing filter's frame: its
 *	  growing header and each layer's header), and
 *	  @extschema@.bf_registry_chunk one row per chunk_bytes bytes of each
 *	  layer's bit array (whole 64-byte blocks, so that every key lives in
 *	  exactly one chunk of a layer), numbered on across the layers.  A
 *	  write changes only the chunks whose bits it sets, and locks only those
 *	  rows: writers of different chunks never wait for each other.
 *
 * Each chunk row counts the adds that set a bit in it ("inserted"): a
 * layer's count is its header's plus its chunks', which is what adding the
 * same keys to one value gives, since an add touches one block only.  Each
 * chunk row also records the (full) id of the last transaction that wrote
 * it, from which bf_tracked_changes tells a client what changed.
 *
 * The rows are read and written here directly (heap and index access, not
 * SQL): a sync trigger's write is on the path of every INSERT.  Writers
 * read the latest committed version of a chunk and update it; if another
 * writer updated it first, they wait for that one to end and apply their
 * bits again to the version it committed.  Bits are only ever added, so a
 * write merges into whatever another transaction committed, at any
 * isolation level.  Within a statement chunks are written in ascending
 * order, so sync triggers of single-statement transactions cannot
 * deadlock.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_compat.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/index.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

#define Anum_chunk_id		1
#define Anum_chunk_chunk	2
#define Anum_chunk_inserted 3
#define Anum_chunk_written	4
#define Anum_chunk_bits		5
#define Natts_chunk			5

/* ---- layout ---- */

/*
 * Read the layers of r (chunk_bytes set) from the header its registry row
 * holds: a plain filter's 64-byte header or a growing one's frame.  False
 * if malformed.
 */
bool
bf_chunks_layout(RegRow *r, const uint8 *p, Size len)
{
	int32		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	int32		first = 0;
	Size		offset;

	r->growing = bloom_is_layered(p, len);
	if (r->growing)
	{
		if (bloom_grow_frame_read(p, len, &r->gh, NULL) != BLOOM_GROW_OK)
			return false;
		r->nlayers = r->gh.nlayers;
		p += BLOOM_GROW_HEADER_SIZE;
		offset = BLOOM_GROW_HEADER_SIZE;
	}
	else
	{
		if (len != BLOOM_HEADER_SIZE)
			return false;
		r->nlayers = 1;
		offset = 0;
	}
	r->layers = palloc(sizeof(BfChunkLayer) * r->nlayers);
	for (int i = 0; i < r->nlayers; i++, p += BLOOM_HEADER_SIZE)
	{
		BfChunkLayer *l = &r->layers[i];
		uint64		nblocks = bloom_load_u64(p + 24);

		/* the header of a value of that many blocks */
		if (nblocks < 1 || nblocks > BLOOM_MAX_BLOCKS ||
			bloom_header_read(p, bloom_total_size(nblocks), &l->hdr) != BLOOM_OK)
			return false;
		l->first = first;
		l->nchunks = (int32) ((nblocks + per - 1) / per);
		l->offset = offset;
		first += l->nchunks;
		offset += bloom_total_size(nblocks);
	}
	r->hdr = r->layers[0].hdr;
	return true;
}

/*
 * The header a registry row holds for r: its layers' headers (with their
 * own counts), the family of r->hdr in each.
 */
bytea *
bf_chunks_frame(const RegRow *r)
{
	Size		len = (r->growing ? BLOOM_GROW_HEADER_SIZE : 0) +
		(Size) r->nlayers * BLOOM_HEADER_SIZE;
	bytea	   *b = palloc0(VARHDRSZ + len);
	uint8	   *p = (uint8 *) VARDATA(b);

	SET_VARSIZE(b, VARHDRSZ + len);
	if (r->growing)
	{
		BloomGrowHeader gh = r->gh;

		gh.nlayers = (uint16) r->nlayers;
		bloom_grow_header_write(p, &gh);
		p += BLOOM_GROW_HEADER_SIZE;
	}
	for (int i = 0; i < r->nlayers; i++, p += BLOOM_HEADER_SIZE)
	{
		BloomHeader h = r->layers[i].hdr;

		bloom_adopt_family(&h, &r->hdr);
		bloom_header_write(p, &h);
	}
	return b;
}

/*
 * The header a registry row holds for the whole value vl (plain or
 * growing): vl's headers without the bits.
 */
bytea *
bf_chunks_value_frame(const struct varlena *vl)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(vl);
	BloomGrowHeader gh;
	BloomHeader hdr;
	size_t		offset = 0;
	size_t		layer;
	bytea	   *b;
	uint8	   *p;

	if (!bloom_is_layered(buf, VARSIZE_ANY_EXHDR(vl)))
	{
		b = palloc(VARHDRSZ + BLOOM_HEADER_SIZE);
		SET_VARSIZE(b, VARHDRSZ + BLOOM_HEADER_SIZE);
		memcpy(VARDATA(b), buf, BLOOM_HEADER_SIZE);
		return b;
	}
	bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
	b = palloc(VARHDRSZ + BLOOM_GROW_HEADER_SIZE + (Size) gh.nlayers * BLOOM_HEADER_SIZE);
	SET_VARSIZE(b, VARHDRSZ + BLOOM_GROW_HEADER_SIZE + (Size) gh.nlayers * BLOOM_HEADER_SIZE);
	p = (uint8 *) VARDATA(b);
	memcpy(p, buf, BLOOM_GROW_HEADER_SIZE);
	p += BLOOM_GROW_HEADER_SIZE;
	while ((layer = bloom_grow_next_layer(buf, &gh, &offset, &hdr)) != 0)
	{
		memcpy(p, buf + layer, BLOOM_HEADER_SIZE);
		p += BLOOM_HEADER_SIZE;
	}
	return b;
}

/* the number of chunk rows of r */
int32
bf_chunks_count(const RegRow *r)
{
	const BfChunkLayer *l = &r->layers[r->nlayers - 1];

	return l->first + l->nchunks;
}

/* the layer chunk c belongs to */
const BfChunkLayer *
bf_chunks_layer_of(const RegRow *r, int32 c)
{
	for (int i = r->nlayers - 1; i > 0; i--)
		if (c >= r->layers[i].first)
			return &r->layers[i];
	return &r->layers[0];
}

/* the byte length of r's whole value */
static Size
value_length(const RegRow *r)
{
	const BfChunkLayer *l = &r->layers[r->nlayers - 1];

	return l->offset + bloom_total_size(l->hdr.nblocks);
}

/* ---- reading ---- */

/* the chunk rows of id (from chunk on; only that one if one), in order */
static SysScanDesc
chunk_scan(Relation rel, Relation idx, int64 id, int32 chunk, bool one,
		   Snapshot snap)
{
	ScanKeyData key[2];

	ScanKeyInit(&key[0], Anum_chunk_id, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(id));
	ScanKeyInit(&key[1], Anum_chunk_chunk,
				one ? BTEqualStrategyNumber : BTGreaterEqualStrategyNumber,
				one ? F_INT4EQ : F_INT4GE, Int32GetDatum(chunk));
	return systable_beginscan_ordered(rel, idx, snap, 2, key);
}

/* the chunk table and its index, opened for reading */
static void
readers_open(const BfExt *ext, Relation *rel, Relation *idx)
{
	*rel = table_open(ext->chunk_relid, AccessShareLock);
	*idx = index_open(ext->chunk_pkey, AccessShareLock);
}

static void
readers_close(Relation rel, Relation idx)
{
	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
}

/* the fields of a chunk row */
typedef struct ChunkRow
{
	int32		chunk;
	int64		inserted;
	uint64		written;
	const uint8 *bits;
	Size		len;
} ChunkRow;

static void
chunk_row(HeapTuple tup, TupleDesc desc, ChunkRow *c)
{
	bool		isnull;
	struct varlena *bits;

	c->chunk = DatumGetInt32(heap_getattr(tup, Anum_chunk_chunk, desc, &isnull));
	c->inserted = DatumGetInt64(heap_getattr(tup, Anum_chunk_inserted, desc, &isnull));
	c->written = U64FromFullTransactionId(DatumGetFullTransactionId(heap_getattr(tup, Anum_chunk_written,
																			desc, &isnull)));
	bits = (struct varlena *) DatumGetPointer(heap_getattr(tup, Anum_chunk_bits, desc, &isnull));
	/* stored PLAIN: never compressed nor out of line */
	if (VARATT_IS_EXTENDED(bits) && !VARATT_IS_SHORT(bits))
		elog(ERROR, "bloomfilter chunk stored compressed or out of line");
	c->bits = (const uint8 *) VARDATA_ANY(bits);
	c->len = VARSIZE_ANY_EXHDR(bits);
}

typedef struct ChunkWriter
{
	Relation	rel;
	Relation	idx;
	IndexInfo  *ii;
} ChunkWriter;

/*
 * A "written" as this cluster reads it: the id of a transaction of another
 * cluster (a restore of pg_dump's copy), above any this one has given out,
 * is older than every position this database has given out, so it reads
 * as 0 (written before).  Once this cluster's ids pass it, it reads as a
 * recent write: a chunk sent again, never one missed.
 */
static uint64
written_here(uint64 written, uint64 next)
{
	return written > next ? 0 : written;
}

/* the chunk number of a chunk row */
static int32
chunk_number(HeapTuple tup, const ChunkWriter *w)
{
	bool		isnull;

	return DatumGetInt32(heap_getattr(tup, Anum_chunk_chunk, RelationGetDescr(w->rel), &isnull));
}

/* the blocks of chunk c, in its layer */
static uint64
chunk_blocks(const RegRow *r, int32 c)
{
	const BfChunkLayer *l = bf_chunks_layer_of(r, c);
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	uint64		first = (uint64) (c - l->first) * per;

	return Min(per, l->hdr.nblocks - first);
}

static void
bad_chunk(const RegRow *r, int32 c)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("chunk %d of the filter of column \"%s\" is missing or malformed",
					c, NameStr(r->col)),
			 errhint("Call bf_rebuild for the column.")));
}

/*
 * Test hash h against the first nlayers layers of r, as snap sees them:
 * one chunk row read per layer.
 */
bool
bf_chunks_test_hash(const BfExt *ext, const RegRow *r, uint64 h, int nlayers,
					Snapshot snap)
{
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	Relation	rel;
	Relation	idx;
	bool		found = false;

	readers_open(ext, &rel, &idx);
	for (int i = 0; i < nlayers && !found; i++)
	{
		const BfChunkLayer *l = &r->layers[i];
		uint64		block = bloom_block_of(h, l->hdr.nblocks);
		int32		c = l->first + (int32) (block / per);
		SysScanDesc scan = chunk_scan(rel, idx, r->id, c, true, snap);
		HeapTuple	tup = systable_getnext_ordered(scan, ForwardScanDirection);
		ChunkRow	row;

		if (!HeapTupleIsValid(tup))
			bad_chunk(r, c);
		chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.len != chunk_blocks(r, c) * BLOOM_BLOCK_BYTES)
			bad_chunk(r, c);
		found = bloom_block_test(row.bits + (block % per) * BLOOM_BLOCK_BYTES,
								 l->hdr.nhashes, h);
		systable_endscan_ordered(scan);
	}
	readers_close(rel, idx);
	return found;
}

/*
 * Test value against the chunked filter of r, as snap sees it: one chunk
 * row read per layer.  The family is checked as bf_filter_test does.
 */
bool
bf_chunks_test(const BfExt *ext, const RegRow *r, BfTypeInfo *ti, Datum value,
			   Snapshot snap)
{
	BloomHeader hdr = r->hdr;

	bf_prepare_value(ti, value);
	if (hdr.family != ti->family || hdr.detail != ti->detail)
	{
		if (hdr.family == BF_FAMILY_NONE)
			return false;		/* nothing was ever added */
		bf_check_family(&hdr, NULL, ti, false);
	}
	return bf_chunks_test_hash(ext, r, bf_hash_datum(ti, value, hdr.seed), r->nlayers,
							   snap);
}

/*
 * The count of r's newest layer as its first limit chunks tell it (exact
 * when it has no more), scaled to the whole layer.
 */
int64
bf_chunks_sample(const BfExt *ext, const RegRow *r, int32 limit)
{
	const BfChunkLayer *l = &r->layers[r->nlayers - 1];
	int32		want = Min(l->nchunks, limit);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	Relation	rel;
	Relation	idx;
	SysScanDesc scan;
	HeapTuple	tup;
	double		sum = 0;
	int32		seen = 0;

	readers_open(ext, &rel, &idx);
	scan = chunk_scan(rel, idx, r->id, l->first, false, snap);
	while (seen < want &&
		   HeapTupleIsValid(tup = systable_getnext_ordered(scan, ForwardScanDirection)))
	{
		ChunkRow	row;

		chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.chunk != l->first + seen)
			bad_chunk(r, l->first + seen);
		sum += (double) row.inserted;
		seen++;
	}
	systable_endscan_ordered(scan);
	readers_close(rel, idx);
	UnregisterSnapshot(snap);
	if (seen != want)
		bad_chunk(r, l->first + seen);
	return (int64) Min((double) l->hdr.inserted + sum * l->nchunks / want,
					   (double) PG_INT64_MAX);
}

/*
 * The whole value of the chunked filter of r as snap sees it.  changed,
 * if not NULL: one flag per chunk, set for the chunks whose last writer's
 * transaction id is since or later.
 */
struct varlena *
bf_chunks_assemble(const BfExt *ext, const RegRow *r, Snapshot snap,
				   uint64 since, bool *changed)
{
	Size		total = value_length(r);
	struct varlena *vl = palloc_extended(VARHDRSZ + total, MCXT_ALLOC_HUGE);
	uint8	   *value = (uint8 *) VARDATA(vl);
	int32		n = bf_chunks_count(r);
	int32		seen = 0;
	int			li = 0;
	uint64		next = U64FromFullTransactionId(ReadNextFullTransactionId());
	uint64	   *inserted = palloc(sizeof(uint64) * r->nlayers);
	Relation	rel;
	Relation	idx;
	SysScanDesc scan;
	HeapTuple	tup;

	SET_VARSIZE(vl, VARHDRSZ + total);
	for (int i = 0; i < r->nlayers; i++)
		inserted[i] = r->layers[i].hdr.inserted;
	readers_open(ext, &rel, &idx);
	scan = chunk_scan(rel, idx, r->id, 0, false, snap);

	/*
	 * Rows after r's last chunk are of layers a growth appended since r was
	 * read (with an older snapshot than snap): not r's.
	 */
	while (seen < n &&
		   HeapTupleIsValid(tup = systable_getnext_ordered(scan, ForwardScanDirection)))
	{
		const BfChunkLayer *l;
		ChunkRow	row;

		CHECK_FOR_INTERRUPTS();
		chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.chunk != seen ||
			row.len != chunk_blocks(r, row.chunk) * BLOOM_BLOCK_BYTES)
			bad_chunk(r, seen);
		while (seen >= r->layers[li].first + r->layers[li].nchunks)
			li++;
		l = &r->layers[li];
		memcpy(value + l->offset + BLOOM_HEADER_SIZE + (Size) (seen - l->first) * r->chunk_bytes,
			   row.bits, row.len);
		if (row.inserted > 0)
			inserted[li] = inserted[li] > (uint64) (INT64_MAX - row.inserted) ?
				(uint64) INT64_MAX : inserted[li] + (uint64) row.inserted;
		if (changed)
			changed[row.chunk] = written_here(row.written, next) >= since;
		seen++;
	}
	systable_endscan_ordered(scan);
	readers_close(rel, idx);
	if (seen != n)
		bad_chunk(r, seen);
	if (r->growing)
	{
		BloomGrowHeader gh = r->gh;

		gh.nlayers = (uint16) r->nlayers;
		bloom_grow_header_write(value, &gh);
	}
	for (int i = 0; i < r->nlayers; i++)
	{
		BloomHeader hdr = r->layers[i].hdr;

		bloom_adopt_family(&hdr, &r->hdr);
		hdr.inserted = inserted[i];
		bloom_header_write(value + r->layers[i].offset, &hdr);
	}
	pfree(inserted);
	return vl;
}

/*
 * An empty plain value with the header of r's filter (its count 0): what
 * a reading of rows into a filter of the same size starts from.
 */
struct varlena *
bf_chunks_empty(const RegRow *r)
{
	Size		total = bloom_total_size(r->hdr.nblocks);
	struct varlena *vl = palloc_extended(VARHDRSZ + total, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	BloomHeader hdr = r->hdr;

	Assert(!r->growing);
	SET_VARSIZE(vl, VARHDRSZ + total);
	hdr.inserted = 0;
	bloom_header_write((uint8 *) VARDATA(vl), &hdr);
	return vl;
}

/* ---- writing ---- */

static void
writer_open(const BfExt *ext, ChunkWriter *w)
{
	w->rel = table_open(ext->chunk_relid, RowExclusiveLock);
	w->idx = index_open(ext->chunk_pkey, RowExclusiveLock);
	w->ii = NULL;				/* made when first needed: most updates are HOT */
}

static void
writer_close(ChunkWriter *w)
{
	index_close(w->idx, RowExclusiveLock);
	table_close(w->rel, RowExclusiveLock);
}

static HeapTuple
form_chunk(ChunkWriter *w, int64 id, int32 c, int64 inserted, const uint8 *bits,
		   Size len)
{
	Datum		values[Natts_chunk];
	bool		nulls[Natts_chunk] = {false};
	bytea	   *b = palloc(VARHDRSZ + len);

	SET_VARSIZE(b, VARHDRSZ + len);
	memcpy(VARDATA(b), bits, len);
	values[Anum_chunk_id - 1] = Int64GetDatum(id);
	values[Anum_chunk_chunk - 1] = Int32GetDatum(c);
	values[Anum_chunk_inserted - 1] = Int64GetDatum(inserted);
	values[Anum_chunk_written - 1] = FullTransactionIdGetDatum(GetTopFullTransactionId());
	values[Anum_chunk_bits - 1] = PointerGetDatum(b);
	return heap_form_tuple(RelationGetDescr(w->rel), values, nulls);
}

static void
index_chunk(ChunkWriter *w, HeapTuple tup, int64 id, int32 c, bool unchanged)
{
	Datum		ivalues[2] = {Int64GetDatum(id), Int32GetDatum(c)};
	bool		inulls[2] = {false, false};

	if (w->ii == NULL)
		w->ii = BuildIndexInfo(w->idx);
	index_insert(w->idx, ivalues, inulls, &tup->t_self, w->rel, UNIQUE_CHECK_YES,
				 unchanged, w->ii);
}

/* delete every chunk row of id (the filter is replaced or untracked) */
void
bf_chunks_delete(const BfExt *ext, int64 id)
{
	ChunkWriter w;
	SysScanDesc scan;
	HeapTuple	tup;
	ScanKeyData key;
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());

	writer_open(ext, &w);
	ScanKeyInit(&key, Anum_chunk_id, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
	scan = systable_beginscan(w.rel, ext->chunk_pkey, true, snap, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		CHECK_FOR_INTERRUPTS();
		simple_heap_delete(w.rel, &tup->t_self);
	}
	systable_endscan(scan);
	writer_close(&w);
	UnregisterSnapshot(snap);
}

/*
 * Insert the chunk rows of a layer's bits (len bytes), numbered from
 * first, with counts 0 (the layer's count is in its header); returns the
 * number after the last.
 */
static int32
insert_chunks(ChunkWriter *w, int64 id, int32 first, const uint8 *bits, Size len,
			  int32 chunk_bytes)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "bloomfilter chunks",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	int32		c = first;

	for (Size off = 0; off < len; off += chunk_bytes, c++)
	{
		HeapTuple	tup = form_chunk(w, id, c, 0, bits + off, Min((Size) chunk_bytes, len - off));

		CHECK_FOR_INTERRUPTS();
		simple_heap_insert(w->rel, tup);
		index_chunk(w, tup, id, c, false);
		heap_freetuple(tup);
		if ((c - first) % 1024 == 1023)
			MemoryContextReset(tmp);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return c;
}

/*
 * Store the value vl (plain or growing) as the chunks of row id, replacing
 * any: the caller writes the header into the registry row and holds the
 * locks that keep writers out.
 */
void
bf_chunks_replace(const BfExt *ext, int64 id, const struct varlena *vl, int32 chunk_bytes)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(vl);
	Size		len = VARSIZE_ANY_EXHDR(vl);
	ChunkWriter w;

	bf_chunks_delete(ext, id);
	CommandCounterIncrement();
	writer_open(ext, &w);
	if (bloom_is_layered(buf, len))
	{
		BloomGrowHeader gh;
		BloomHeader hdr;
		size_t		offset = 0;
		size_t		layer;
		int32		c = 0;

		bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
		while ((layer = bloom_grow_next_layer(buf, &gh, &offset, &hdr)) != 0)
			c = insert_chunks(&w, id, c, buf + layer + BLOOM_HEADER_SIZE,
							  hdr.nblocks * BLOOM_BLOCK_BYTES, chunk_bytes);
	}
	else
		(void) insert_chunks(&w, id, 0, buf + BLOOM_HEADER_SIZE, len - BLOOM_HEADER_SIZE,
							 chunk_bytes);
	writer_close(&w);
	CommandCounterIncrement();
}

/*
 * Insert the chunk rows of r's layer (one a growth appends), from the
 * bits of that layer: the caller holds the registry row's lock.
 */
void
bf_chunks_insert_layer(const BfExt *ext, const RegRow *r, int layer, const uint8 *bits)
{
	const BfChunkLayer *l = &r->layers[layer];
	ChunkWriter w;

	writer_open(ext, &w);
	(void) insert_chunks(&w, r->id, l->first, bits, l->hdr.nblocks * BLOOM_BLOCK_BYTES,
						 r->chunk_bytes);
	writer_close(&w);
	CommandCounterIncrement();
}

/*
 * A change to OR into a chunk: the bits of some hashes (hashes[i..end-1],
 * all in the chunk), or of a whole value's bytes (src, for every chunk).
 * Applied to a copy of the chunk's bits, it returns the adds that set a
 * bit, the chunk's share of "inserted".
 */
typedef struct ChunkChange
{
	const RegRow *r;
	const BfChunkLayer *l;		/* the layer of the chunks */
	const uint64 *hashes;
	int			i;
	int			end;
	const uint8 *src;			/* the bits of src at this chunk, or NULL */
	uint64		src_ones;		/* set in src at this chunk */
	uint64		src_total;		/* set in all of src */
	uint64		src_inserted;	/* src's count */
} ChunkChange;

static int64
apply_change(const ChunkChange *ch, int32 c, uint8 *bits, Size len)
{
	const BloomHeader *hdr = &ch->l->hdr;
	uint64		first = (uint64) (c - ch->l->first) * (ch->r->chunk_bytes / BLOOM_BLOCK_BYTES);
	int64		added = 0;

	if (ch->src)
	{
		bloom_or(bits, ch->src, len);
		return (int64) ((double) ch->src_inserted * ch->src_ones / ch->src_total + 0.5);
	}
	for (int j = ch->i; j < ch->end; j++)
	{
		uint64		b = bloom_block_of(ch->hashes[j], hdr->nblocks) - first;

		if (bloom_block_set(bits + b * BLOOM_BLOCK_BYTES, hdr->nhashes, ch->hashes[j]))
			added++;
	}
	return added;
}

/*
 * Apply a change to tup, a version of chunk c, and update that version if
 * a bit changed (or force): TM_Ok when done or nothing to do, else what
 * heap_update found (TM_Updated: another writer updated it first and
 * committed; heap_update waited for it to end).
 */
static TM_Result
update_chunk(ChunkWriter *w, int32 c, const ChunkChange *ch, HeapTuple tup,
			 bool force, CommandId cid)
{
	const RegRow *r = ch->r;
	ChunkRow	row;
	ItemPointerData tid = tup->t_self;
	uint8		bits[BF_TRACK_MAX_CHUNK_BYTES];
	int64		added;
	HeapTuple	newtup;
	bool		needs_index;
	TM_Result	res;

	chunk_row(tup, RelationGetDescr(w->rel), &row);
	if (row.chunk != c || row.len != chunk_blocks(r, c) * BLOOM_BLOCK_BYTES)
		bad_chunk(r, c);
	memcpy(bits, row.bits, row.len);
	added = apply_change(ch, c, bits, row.len);
	if (!force && memcmp(bits, row.bits, row.len) == 0)
		return TM_Ok;
	newtup = form_chunk(w, r->id, c,
						row.inserted > INT64_MAX - added ? INT64_MAX : row.inserted + added,
						bits, row.len);
	res = bf_heap_try_update(w->rel, &tid, newtup, cid, &needs_index);
	if (res == TM_Ok && needs_index)
		index_chunk(w, newtup, r->id, c, true);
	heap_freetuple(newtup);
	return res;
}

static void
replaced_during_write(const RegRow *r)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("the filter of column \"%s\" was replaced during the write",
					NameStr(r->col)),
			 errhint("Retry the transaction.")));
}

/*
 * OR a change into chunk c: read its newest committed version and update
 * it (update_chunk); if another writer updated it first, apply the change
 * again to the version that one committed.  A statement that sets no new
 * bit thus writes (and locks) nothing.
 */
static void
merge_chunk(ChunkWriter *w, int32 c, const ChunkChange *ch, bool force,
			CommandId cid)
{
	for (;;)
	{
		Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
		SysScanDesc scan = chunk_scan(w->rel, w->idx, ch->r->id, c, true, snap);
		HeapTuple	tup = systable_getnext_ordered(scan, ForwardScanDirection);
		TM_Result	res;

		if (!HeapTupleIsValid(tup))
			bad_chunk(ch->r, c);
		res = update_chunk(w, c, ch, tup, force, cid);
		systable_endscan_ordered(scan);
		UnregisterSnapshot(snap);
		if (res == TM_Ok)
			return;
		if (res != TM_Updated)
			replaced_during_write(ch->r);
		CHECK_FOR_INTERRUPTS();
	}
}

/* a hash of the statement's values, and its place among them */
typedef struct SeqHash
{
	uint64		block;
	uint64		hash;
	uint32		seq;
} SeqHash;

static int
seqhash_cmp(const void *a, const void *b)
{
	const SeqHash *x = a;
	const SeqHash *y = b;

	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The hashes[0..n-1] of the statement's values, in the order they came,
 * put in the order bf_chunks_add writes them: by chunk of layer l, and
 * within a chunk in the order they came.  A few by a sort; many (a bulk
 * load) by counting how many fall in each chunk, in linear time.
 */
static uint64 *
sort_by_chunk(const RegRow *r, const BfChunkLayer *l, uint64 *hashes, int n)
{
	uint64		nblocks = l->hdr.nblocks;
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	uint64	   *sorted;
	uint32	   *start;

	if (n < 256 || (uint64) n * 4 < (uint64) l->nchunks)
	{
		SeqHash    *sh = palloc(sizeof(SeqHash) * n);

		for (int i = 0; i < n; i++)
		{
			sh[i].block = bloom_block_of(hashes[i], nblocks);
			sh[i].hash = hashes[i];
			sh[i].seq = (uint32) i;
		}
		qsort(sh, n, sizeof(SeqHash), seqhash_cmp);
		for (int i = 0; i < n; i++)
			hashes[i] = sh[i].hash;
		pfree(sh);
		return hashes;
	}
	sorted = palloc_extended(sizeof(uint64) * n, MCXT_ALLOC_HUGE);
	start = palloc0(sizeof(uint32) * (l->nchunks + 1));
	for (int i = 0; i < n; i++)
		start[bloom_block_of(hashes[i], nblocks) / per + 1]++;
	for (int32 c = 0; c < l->nchunks; c++)
		start[c + 1] += start[c];
	for (int i = 0; i < n; i++)
		sorted[start[bloom_block_of(hashes[i], nblocks) / per]++] = hashes[i];
	pfree(start);
	return sorted;
}

/*
 * Add hashes[0..n-1] (in the order the values came) to the newest layer
 * of the chunked filter of r, chunk after chunk in ascending order.
 * force: write every chunk touched, even where no bit changes (so that a
 * user who may not read the column cannot tell from the writes whether a
 * key was present).
 */
void
bf_chunks_add(const BfExt *ext, const RegRow *r, uint64 *hashes, int n, bool force)
{
	const BfChunkLayer *l = &r->layers[r->nlayers - 1];
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	ChunkWriter w;
	ChunkChange ch = {0};
	CommandId	cid;
	Snapshot	snap = NULL;
	SysScanDesc scan = NULL;

	if (n == 0)
		return;
	hashes = sort_by_chunk(r, l, hashes, n);
	/* see our own earlier writes of this command, as SPI would */
	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	writer_open(ext, &w);
	ch.r = r;
	ch.l = l;
	ch.hashes = hashes;
	ch.i = 0;

	/*
	 * Many keys (a bulk load): one ordered scan of the layer's chunks
	 * instead of an index search for each.
	 */
	if (n >= BF_TRACK_BULK_KEYS)
	{
		snap = RegisterSnapshot(GetLatestSnapshot());
		scan = chunk_scan(w.rel, w.idx, r->id, l->first, false, snap);
	}
	while (ch.i < n)
	{
		int32		c = l->first + (int32) (bloom_block_of(hashes[ch.i], l->hdr.nblocks) / per);
		TM_Result	res = TM_Updated;

		CHECK_FOR_INTERRUPTS();
		ch.end = ch.i;
		while (ch.end < n &&
			   l->first + (int32) (bloom_block_of(hashes[ch.end], l->hdr.nblocks) / per) == c)
			ch.end++;
		if (scan)
		{
			HeapTuple	tup;

			do
				tup = systable_getnext_ordered(scan, ForwardScanDirection);
			while (HeapTupleIsValid(tup) && chunk_number(tup, &w) < c);
			if (!HeapTupleIsValid(tup))
				bad_chunk(r, c);
			res = update_chunk(&w, c, &ch, tup, force, cid);
			if (res != TM_Ok && res != TM_Updated)
				replaced_during_write(r);
		}
		/* one chunk; or one another writer updated since the scan began */
		if (res != TM_Ok)
			merge_chunk(&w, c, &ch, force, cid);
		ch.i = ch.end;
	}
	if (scan)
	{
		systable_endscan_ordered(scan);
		UnregisterSnapshot(snap);
	}
	writer_close(&w);
}

/*
 * OR bits, the bit array of layer l of r, into its chunks as writers do
 * (locking only the chunks it changes): where before (the layer's bits
 * the caller started from, or NULL) differs.  Each chunk's count grows by
 * inserted in proportion to the bits it sets there.
 */
static void
or_layer(const BfExt *ext, const RegRow *r, const BfChunkLayer *l, const uint8 *bits,
		 const uint8 *before, uint64 inserted)
{
	Size		len = l->hdr.nblocks * BLOOM_BLOCK_BYTES;
	ChunkWriter w;
	ChunkChange ch = {0};
	CommandId	cid;

	ch.r = r;
	ch.l = l;
	ch.src_total = bloom_popcount(bits, len);
	ch.src_inserted = inserted;
	if (ch.src_total == 0)
		return;
	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	writer_open(ext, &w);
	for (Size off = 0; off < len; off += r->chunk_bytes)
	{
		Size		clen = Min((Size) r->chunk_bytes, len - off);

		CHECK_FOR_INTERRUPTS();
		if (before && memcmp(bits + off, before + off, clen) == 0)
			continue;
		ch.src = bits + off;
		ch.src_ones = bloom_popcount(ch.src, clen);
		if (ch.src_ones > 0)
			merge_chunk(&w, l->first + (int32) (off / r->chunk_bytes), &ch, false, cid);
	}
	writer_close(&w);
}

/*
 * OR the bits of src, a plain value of r's size, into r's chunks.  Each
 * chunk's count grows by src's "inserted" in proportion to the bits src
 * sets there.
 */
void
bf_chunks_or(const BfExt *ext, const RegRow *r, const struct varlena *src)
{
	Assert(!r->growing);
	or_layer(ext, r, &r->layers[0], (const uint8 *) VARDATA_ANY(src) + BLOOM_HEADER_SIZE,
			 NULL, bloom_load_u64((const uint8 *) VARDATA_ANY(src) + BLOOM_INSERTED_OFFSET));
}

/*
 * OR bits, a new version of the bit array of r's layer, into its chunks
 * where it differs from before; the counts stay (the caller writes the
 * layer's new count into its header).
 */
void
bf_chunks_or_layer(const BfExt *ext, const RegRow *r, int layer, const uint8 *bits,
				   const uint8 *before)
{
	or_layer(ext, r, &r->layers[layer], bits, before, 0);
}

/* the full id of the last writer of r's header, as this cluster reads it */
uint64
bf_chunks_header_written(const RegRow *r)
{
	return written_here(r->written, U64FromFullTransactionId(ReadNextFullTransactionId()));
}

/* ---- positions of change sets ---- */

/*
 * A position of bf_tracked_changes for a chunked filter: bit 63 set (the
 * versions of a 1.1 registry and the LSNs of an index stay below it), 15
 * bits naming this cluster and database, and the low 48 bits of a full
 * transaction id.  A client's position from elsewhere (another database,
 * a restore into another cluster) thus never matches, and it gets the
 * whole value.
 */
#define POS_TAG		(UINT64CONST(1) << 63)
#define POS_XID_MASK ((UINT64CONST(1) << 48) - 1)

static uint64
pos_origin(void)
{
	uint64		sysid = GetSystemIdentifier();
	uint32		hv = hash_bytes_extended((const unsigned char *) &sysid, sizeof(sysid),
										 MyDatabaseId);

	return ((uint64) (hv & 0x7FFF)) << 48;
}

/*
 * The full transaction id of snap's xmin: every write snap does not see
 * was made by a transaction at or above it.
 */
uint64
bf_chunks_snapshot_xid(Snapshot snap)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (snap->xmin > XidFromFullTransactionId(next))
		epoch--;
	return U64FromFullTransactionId(FullTransactionIdFromEpochAndXid(epoch, snap->xmin));
}

/* the position of a snapshot */
uint64
bf_chunks_position(Snapshot snap)
{
	return POS_TAG | pos_origin() | (bf_chunks_snapshot_xid(snap) & POS_XID_MASK);
}

/*
 * The full transaction id a client's position stands for, or false if it
 * is not a position of this database's chunked filters.
 */
bool
bf_chunks_position_xid(uint64 pos, uint64 *xid)
{
	uint64		next = U64FromFullTransactionId(ReadNextFullTransactionId());

	if ((pos & POS_TAG) == 0 || (pos & ~POS_XID_MASK & ~POS_TAG) != pos_origin())
		return false;
	*xid = (next & ~POS_XID_MASK) | (pos & POS_XID_MASK);
	if (*xid > next)
	{
		/* from before the last wrap of the low 48 bits, or from the future */
		if ((next & ~POS_XID_MASK) == 0)
			return false;
		*xid -= POS_XID_MASK + 1;
	}
	return true;
}
