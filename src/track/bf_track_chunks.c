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
 * The rows are read here and written in bf_track_chunks_write.c directly
 * (heap and index access, not SQL): a sync trigger's write is on the path
 * of every INSERT.  Within a statement chunks are written in ascending
 * order, so sync triggers of single-statement transactions cannot
 * deadlock.  This file: the layout of a registry row's header, reading
 * chunks (a key's, a layer's count, the whole value), and the positions
 * of change sets.
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
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

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
SysScanDesc
bf_chunk_scan(Relation rel, Relation idx, int64 id, int32 chunk, bool one,
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

void
bf_chunk_row(HeapTuple tup, TupleDesc desc, BfChunkRow *c)
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

/* the blocks of chunk c, in its layer */
uint64
bf_chunk_blocks(const RegRow *r, int32 c)
{
	const BfChunkLayer *l = bf_chunks_layer_of(r, c);
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	uint64		first = (uint64) (c - l->first) * per;

	return Min(per, l->hdr.nblocks - first);
}

void
bf_bad_chunk(const RegRow *r, int32 c)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("chunk %d of the filter of column \"%s\" is missing or malformed",
					c, NameStr(r->col)),
			 errhint("Call bf_rebuild for the column.")));
}

/*
 * Test hash h against the first nlayers layers of r, as snap sees them:
 * one chunk row read per layer, found through the places kept in places
 * (bf_track_places.c) when not NULL, else through the index.
 */
bool
bf_chunks_test_hash(const BfExt *ext, const RegRow *r, uint64 h, int nlayers,
					Snapshot snap, BfChunkPlaces *places)
{
	uint64		per = r->chunk_bytes / BLOOM_BLOCK_BYTES;
	Relation	rel;
	Relation	idx;
	bool		found = false;

	if (places)
	{
		rel = table_open(ext->chunk_relid, AccessShareLock);
		idx = NULL;
	}
	else
		readers_open(ext, &rel, &idx);
	for (int i = 0; i < nlayers && !found; i++)
	{
		const BfChunkLayer *l = &r->layers[i];
		uint64		block = bloom_block_of(h, l->hdr.nblocks);
		int32		c = l->first + (int32) (block / per);
		SysScanDesc scan = NULL;
		Buffer		buf = InvalidBuffer;
		HeapTupleData fetched;
		HeapTuple	tup = &fetched;
		BfChunkRow	row;

		if (places == NULL ||
			!bf_chunk_place_fetch(rel, ext->chunk_pkey, &idx, places, r->id,
								  bf_chunks_count(r), c, snap, &buf, &fetched))
		{
			if (idx == NULL)
				idx = index_open(ext->chunk_pkey, AccessShareLock);
			scan = bf_chunk_scan(rel, idx, r->id, c, true, snap);
			tup = systable_getnext_ordered(scan, ForwardScanDirection);
			if (places && HeapTupleIsValid(tup))
				bf_chunk_place_set(rel, places, c, &tup->t_self);
		}
		if (!HeapTupleIsValid(tup))
			bf_bad_chunk(r, c);
		bf_chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.len != bf_chunk_blocks(r, c) * BLOOM_BLOCK_BYTES)
			bf_bad_chunk(r, c);
		found = bloom_block_test(row.bits + (block % per) * BLOOM_BLOCK_BYTES,
								 l->hdr.nhashes, h);
		if (BufferIsValid(buf))
			UnlockReleaseBuffer(buf);
		if (scan)
			systable_endscan_ordered(scan);
	}
	if (places)
	{
		/* kept to the transaction's end, as a query's are */
		if (idx)
			index_close(idx, NoLock);
		table_close(rel, NoLock);
	}
	else
		readers_close(rel, idx);
	return found;
}

/*
 * Test value against the chunked filter of r, as snap sees it: one chunk
 * row read per layer.  The family is checked as bf_filter_test does.
 */
bool
bf_chunks_test(const BfExt *ext, const RegRow *r, BfTypeInfo *ti, Datum value,
			   Snapshot snap, BfChunkPlaces *places)
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
							   snap, places);
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
	scan = bf_chunk_scan(rel, idx, r->id, l->first, false, snap);
	while (seen < want &&
		   HeapTupleIsValid(tup = systable_getnext_ordered(scan, ForwardScanDirection)))
	{
		BfChunkRow	row;

		bf_chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.chunk != l->first + seen)
			bf_bad_chunk(r, l->first + seen);
		sum += (double) row.inserted;
		seen++;
	}
	systable_endscan_ordered(scan);
	readers_close(rel, idx);
	UnregisterSnapshot(snap);
	if (seen != want)
		bf_bad_chunk(r, l->first + seen);
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
	scan = bf_chunk_scan(rel, idx, r->id, 0, false, snap);

	/*
	 * Rows after r's last chunk are of layers a growth appended since r was
	 * read (with an older snapshot than snap): not r's.
	 */
	while (seen < n &&
		   HeapTupleIsValid(tup = systable_getnext_ordered(scan, ForwardScanDirection)))
	{
		const BfChunkLayer *l;
		BfChunkRow	row;

		CHECK_FOR_INTERRUPTS();
		bf_chunk_row(tup, RelationGetDescr(rel), &row);
		if (row.chunk != seen ||
			row.len != bf_chunk_blocks(r, row.chunk) * BLOOM_BLOCK_BYTES)
			bf_bad_chunk(r, seen);
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
		bf_bad_chunk(r, seen);
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

/* the whole value of r's filter as the latest snapshot sees it */
struct varlena *
bf_chunks_assemble_latest(const BfExt *ext, const RegRow *r)
{
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	struct varlena *vl = bf_chunks_assemble(ext, r, snap, 0, NULL);

	UnregisterSnapshot(snap);
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
static uint64
snapshot_xid(Snapshot snap)
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
	return POS_TAG | pos_origin() | (snapshot_xid(snap) & POS_XID_MASK);
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
