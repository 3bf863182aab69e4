/*-------------------------------------------------------------------------
 *
 * bf_track_chunks.c
 *	  The chunked storage of a plain filter kept by the trigger method: the
 *	  registry row holds the 64-byte header, and @extschema@.bf_registry_chunk
 *	  one row per chunk_bytes bytes of the bit array (whole 64-byte blocks,
 *	  so that every key lives in exactly one chunk).  A write changes only
 *	  the chunks whose bits it sets, and locks only those rows: writers of
 *	  different chunks never wait for each other.
 *
 * Each chunk row counts the adds that set a bit in it ("inserted"): the
 * value's count is the header's plus the chunks', which is what adding the
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

/* statements with this many keys write their chunks in one ordered scan */
#define BULK_KEYS 1024

/* ---- reading ---- */

/* the chunk rows of id (from chunk on; only that one if one), in order */
static SysScanDesc
chunk_scan(Relation rel, Relation idx, int64 id, int32 chunk, bool one,
		   Snapshot snap)
{
	ScanKeyData key[2];

	ScanKeyInit(&key[0], Anum_chunk_id, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(id));
	ScanKeyInit(&key[1], Anum_chunk_chunk, BTEqualStrategyNumber, F_INT4EQ,
				Int32GetDatum(chunk));
	return systable_beginscan_ordered(rel, idx, snap, one ? 2 : 1, key);
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

/* the blocks of chunk c of a filter of nblocks blocks */
static uint64
chunk_blocks(const RegRow *r, int32 c)
{
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	uint64		first = (uint64) c * per;

	return Min(per, r->hdr.nblocks - first);
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

static uint32
chunk_count(const RegRow *r)
{
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;

	return (uint32) ((r->hdr.nblocks + per - 1) / per);
}

/*
 * Test value against the chunked filter of r, as snap sees it: one chunk
 * row read.  The family is checked as bf_filter_test does.
 */
bool
bf_chunks_test(const BfExt *ext, const RegRow *r, BfTypeInfo *ti, Datum value,
			   Snapshot snap)
{
	BloomHeader hdr = r->hdr;
	uint64		h;
	uint64		block;
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	int32		c;
	Relation	rel;
	Relation	idx;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found;

	bf_prepare_value(ti, value);
	if (hdr.family != ti->family || hdr.detail != ti->detail)
	{
		if (hdr.family == BF_FAMILY_NONE)
			return false;		/* nothing was ever added */
		bf_check_family(&hdr, NULL, ti, false);
	}
	h = bf_hash_datum(ti, value, hdr.seed);
	block = bloom_block_of(h, hdr.nblocks);
	c = (int32) (block / per);
	readers_open(ext, &rel, &idx);
	scan = chunk_scan(rel, idx, r->id, c, true, snap);
	tup = systable_getnext_ordered(scan, ForwardScanDirection);
	if (!HeapTupleIsValid(tup))
		bad_chunk(r, c);
	{
		ChunkRow	row;

		chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.len != chunk_blocks(r, c) * BLOOM_BLOCK_BYTES)
			bad_chunk(r, c);
		found = bloom_block_test(row.bits + (block - (uint64) c * per) * BLOOM_BLOCK_BYTES,
								 hdr.nhashes, h);
	}
	systable_endscan_ordered(scan);
	readers_close(rel, idx);
	return found;
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
	Size		total = bloom_total_size(r->hdr.nblocks);
	struct varlena *vl = palloc_extended(VARHDRSZ + total, MCXT_ALLOC_HUGE);
	uint8	   *bits = (uint8 *) VARDATA(vl) + BLOOM_HEADER_SIZE;
	uint32		n = chunk_count(r);
	uint32		seen = 0;
	uint64		next = U64FromFullTransactionId(ReadNextFullTransactionId());
	BloomHeader hdr = r->hdr;
	Relation	rel;
	Relation	idx;
	SysScanDesc scan;
	HeapTuple	tup;

	SET_VARSIZE(vl, VARHDRSZ + total);
	readers_open(ext, &rel, &idx);
	scan = chunk_scan(rel, idx, r->id, 0, false, snap);
	while (HeapTupleIsValid(tup = systable_getnext_ordered(scan, ForwardScanDirection)))
	{
		ChunkRow	row;

		CHECK_FOR_INTERRUPTS();
		chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.chunk != (int32) seen || seen >= n ||
			row.len != chunk_blocks(r, row.chunk) * BLOOM_BLOCK_BYTES)
			bad_chunk(r, (int32) seen);
		memcpy(bits + (Size) row.chunk * r->chunk_bytes, row.bits, row.len);
		if (row.inserted > 0)
			hdr.inserted = hdr.inserted > (uint64) (INT64_MAX - row.inserted) ?
				(uint64) INT64_MAX : hdr.inserted + (uint64) row.inserted;
		if (changed)
			changed[row.chunk] = written_here(row.written, next) >= since;
		seen++;
	}
	systable_endscan_ordered(scan);
	readers_close(rel, idx);
	if (seen != n)
		bad_chunk(r, (int32) seen);
	bloom_header_write((uint8 *) VARDATA(vl), &hdr);
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
 * Store the plain value vl as the chunks of row id, replacing any: the
 * caller writes the header into the registry row and holds the locks that
 * keep writers out.
 */
void
bf_chunks_replace(const BfExt *ext, int64 id, const struct varlena *vl, int32 chunk_bytes)
{
	ChunkWriter w;
	const uint8 *bits = (const uint8 *) VARDATA_ANY(vl) + BLOOM_HEADER_SIZE;
	Size		len = VARSIZE_ANY_EXHDR(vl) - BLOOM_HEADER_SIZE;
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "bloomfilter chunks",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);

	bf_chunks_delete(ext, id);
	CommandCounterIncrement();
	writer_open(ext, &w);
	for (Size off = 0; off < len; off += chunk_bytes)
	{
		int32		c = (int32) (off / chunk_bytes);
		HeapTuple	tup = form_chunk(&w, id, c, 0, bits + off, Min((Size) chunk_bytes, len - off));

		CHECK_FOR_INTERRUPTS();
		simple_heap_insert(w.rel, tup);
		index_chunk(&w, tup, id, c, false);
		heap_freetuple(tup);
		if (c % 1024 == 1023)
			MemoryContextReset(tmp);
	}
	writer_close(&w);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
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
	uint64		first = (uint64) c * (ch->r->chunk_bytes / BLOOM_BLOCK_BYTES);
	int64		added = 0;

	if (ch->src)
	{
		bloom_or(bits, ch->src, len);
		return (int64) ((double) ch->src_inserted * ch->src_ones / ch->src_total + 0.5);
	}
	for (int j = ch->i; j < ch->end; j++)
	{
		uint64		b = bloom_block_of(ch->hashes[j], ch->r->hdr.nblocks) - first;

		if (bloom_block_set(bits + b * BLOOM_BLOCK_BYTES, ch->r->hdr.nhashes, ch->hashes[j]))
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

/*
 * Add hashes[0..n-1] (sorted by block, in the order the values came within
 * a block) to the chunked filter of r, chunk after chunk in ascending
 * order.  force: write every chunk touched, even where no bit changes (so
 * that a user who may not read the column cannot tell from the writes
 * whether a key was present).
 */
void
bf_chunks_add(const BfExt *ext, const RegRow *r, const uint64 *hashes, int n,
			  bool force)
{
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	ChunkWriter w;
	ChunkChange ch = {0};
	CommandId	cid;
	Snapshot	snap = NULL;
	SysScanDesc scan = NULL;

	if (n == 0)
		return;
	/* see our own earlier writes of this command, as SPI would */
	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	writer_open(ext, &w);
	ch.r = r;
	ch.hashes = hashes;
	ch.i = 0;

	/*
	 * Many keys (a bulk load): one ordered scan of all the chunks instead
	 * of an index search for each.
	 */
	if (n >= BULK_KEYS)
	{
		snap = RegisterSnapshot(GetLatestSnapshot());
		scan = chunk_scan(w.rel, w.idx, r->id, 0, false, snap);
	}
	while (ch.i < n)
	{
		int32		c = (int32) (bloom_block_of(hashes[ch.i], r->hdr.nblocks) / per);
		TM_Result	res = TM_Updated;

		CHECK_FOR_INTERRUPTS();
		ch.end = ch.i;
		while (ch.end < n && (int32) (bloom_block_of(hashes[ch.end], r->hdr.nblocks) / per) == c)
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
 * OR the bits of src, a plain value of r's size, into r's chunks, as
 * writers do (locking only the chunks it changes).  Each chunk's count
 * grows by src's "inserted" in proportion to the bits src sets there.
 */
void
bf_chunks_or(const BfExt *ext, const RegRow *r, const struct varlena *src)
{
	const uint8 *sbits = (const uint8 *) VARDATA_ANY(src) + BLOOM_HEADER_SIZE;
	Size		len = VARSIZE_ANY_EXHDR(src) - BLOOM_HEADER_SIZE;
	ChunkWriter w;
	ChunkChange ch = {0};
	CommandId	cid;

	ch.r = r;
	ch.src_total = bloom_popcount(sbits, len);
	ch.src_inserted = bloom_load_u64((const uint8 *) VARDATA_ANY(src) + 32);
	if (ch.src_total == 0)
		return;
	CommandCounterIncrement();
	cid = GetCurrentCommandId(true);
	writer_open(ext, &w);
	for (Size off = 0; off < len; off += r->chunk_bytes)
	{
		int32		c = (int32) (off / r->chunk_bytes);

		CHECK_FOR_INTERRUPTS();
		ch.src = sbits + off;
		ch.src_ones = bloom_popcount(ch.src, Min((Size) r->chunk_bytes, len - off));
		if (ch.src_ones > 0)
			merge_chunk(&w, c, &ch, false, cid);
	}
	writer_close(&w);
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
