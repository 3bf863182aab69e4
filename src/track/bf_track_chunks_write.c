/*-------------------------------------------------------------------------
 *
 * bf_track_chunks_write.c
 *	  Writing the chunked storage of the filters kept by the trigger method
 *	  (bf_track_chunks.c says how it is laid out): a statement's keys OR-ed
 *	  into the chunks they fall in, locking only the chunks whose bits
 *	  change, ascending; whole values stored as chunks; a growth's new
 *	  layer; another value's bits merged in.
 *
 * Writers read the latest committed version of a chunk and update it; if
 * another writer updated it first, they wait for that one to end and
 * apply their bits again to the version it committed.  Bits are only ever
 * added, so a write merges into whatever another transaction committed,
 * at any isolation level.
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
#include "access/xact.h"
#include "catalog/index.h"
#include "miscadmin.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

typedef struct ChunkWriter
{
	Relation	rel;
	Relation	idx;
	IndexInfo  *ii;
} ChunkWriter;

/* the chunk number of a chunk row */
static int32
chunk_number(HeapTuple tup, const ChunkWriter *w)
{
	bool		isnull;

	return DatumGetInt32(heap_getattr(tup, Anum_chunk_chunk, RelationGetDescr(w->rel), &isnull));
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
	BfChunkRow	row;
	ItemPointerData tid = tup->t_self;
	uint8		bits[BF_TRACK_MAX_CHUNK_BYTES];
	int64		added;
	HeapTuple	newtup;
	bool		needs_index;
	TM_Result	res;

	bf_chunk_row(tup, RelationGetDescr(w->rel), &row);
	if (row.chunk != c || row.len != bf_chunk_blocks(r, c) * BLOOM_BLOCK_BYTES)
		bf_bad_chunk(r, c);
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

/*
 * The error of a writer whose filter r was untracked or replaced (by a
 * TRUNCATE, a rebuild, DDL) since it read it
 */
void
bf_chunks_replaced(const RegRow *r)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("the filter of column \"%s\" was untracked or replaced during the write",
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
		SysScanDesc scan = bf_chunk_scan(w->rel, w->idx, ch->r->id, c, true, snap);
		HeapTuple	tup = systable_getnext_ordered(scan, ForwardScanDirection);
		TM_Result	res;

		if (!HeapTupleIsValid(tup))
			bf_bad_chunk(ch->r, c);
		res = update_chunk(w, c, ch, tup, force, cid);
		systable_endscan_ordered(scan);
		UnregisterSnapshot(snap);
		if (res == TM_Ok)
			return;
		if (res != TM_Updated)
			bf_chunks_replaced(ch->r);
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
		scan = bf_chunk_scan(w.rel, w.idx, r->id, l->first, false, snap);
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
				bf_bad_chunk(r, c);
			res = update_chunk(&w, c, &ch, tup, force, cid);
			if (res != TM_Ok && res != TM_Updated)
				bf_chunks_replaced(r);
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

