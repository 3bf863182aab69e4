/*-------------------------------------------------------------------------
 *
 * bf_track_grow.c
 *	  Growing filters of the trigger method, stored in chunks as plain ones
 *	  are (bf_track_chunks.c): the registry row holds the frame (the
 *	  growing header and every layer's header), the chunk table the bits of
 *	  every layer.  A statement adds its keys to the newest layer's chunks,
 *	  as writers of a plain filter do, unless that layer may fill up on the
 *	  way; then it takes the registry row's lock, adds its keys to the
 *	  whole value in memory, layer after layer as a growing value takes
 *	  them, and stores what changed: the old layers' changed chunks, the
 *	  new layers' chunks and the frame.
 *
 * Whether the newest layer may fill is told by its count, the sum of its
 * chunks' counts: exact for a layer of up to 64 chunks (read by every
 * statement that writes it) and for statements of BF_TRACK_BULK_KEYS keys
 * or more (they read the whole value), else estimated from the layer's
 * first 64 chunks, read only by the statements that write one of them.
 * A large layer may so take some keys past its capacity before a
 * statement notices: about as many as come between two statements that
 * write one of those chunks.
 *
 * A writer that read the layers before a growth committed adds its keys
 * to the layer that was the newest: lookups test every layer, so no key
 * is lost, and that layer holds a few more keys than its capacity.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_cache.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* the newest layer's first chunks, from which its count is estimated */
#define SAMPLE_CHUNKS 64

static const BfChunkLayer *
newest_layer(const RegRow *r)
{
	return &r->layers[r->nlayers - 1];
}

/* does a hash fall in one of the first chunks of the newest layer? */
static bool
writes_sample(const RegRow *r, const uint64 *hashes, int n)
{
	const BfChunkLayer *l = newest_layer(r);
	uint64		sample_blocks = (uint64) SAMPLE_CHUNKS * (r->chunk_bytes / BLOOM_BLOCK_BYTES);

	for (int i = 0; i < n; i++)
		if (bloom_block_of(hashes[i], l->hdr.nblocks) < sample_blocks)
			return true;
	return false;
}

/* the count of the newest layer of whole, r's assembled value */
static int64
whole_count(const RegRow *r, const struct varlena *whole)
{
	return (int64) Min(bloom_load_u64((const uint8 *) VARDATA_ANY(whole) +
									  newest_layer(r)->offset + BLOOM_INSERTED_OFFSET),
					   (uint64) PG_INT64_MAX);
}

/*
 * Store after, the whole value of r (locked by the caller) once keys were
 * added to before, the whole value they were added to: the bits that
 * changed in r's layers, OR-ed into their chunks (other writers may have
 * changed them meanwhile), each layer's count grown by what was added to
 * it, the chunks of the layers after appended and the new frame.
 */
void
bf_grow_chunks_store(BfSpiContext *cx, const RegRow *r, const struct varlena *before,
					 const struct varlena *after)
{
	const uint8 *b = (const uint8 *) VARDATA_ANY(before);
	const uint8 *a = (const uint8 *) VARDATA_ANY(after);
	bytea	   *frame = bf_chunks_value_frame(after);
	uint8	   *layer_hdr = (uint8 *) VARDATA(frame) + BLOOM_GROW_HEADER_SIZE;
	RegRow		next = *r;

	for (int i = 0; i < r->nlayers; i++, layer_hdr += BLOOM_HEADER_SIZE)
	{
		Size		off = r->layers[i].offset;
		uint64		added = bloom_load_u64(a + off + BLOOM_INSERTED_OFFSET) -
			bloom_load_u64(b + off + BLOOM_INSERTED_OFFSET);
		uint64		own = r->layers[i].hdr.inserted;

		bloom_store_u64(layer_hdr + BLOOM_INSERTED_OFFSET,
						own > (uint64) PG_INT64_MAX - added ? (uint64) PG_INT64_MAX : own + added);
		bf_chunks_or_layer(cx->ext, r, i, a + off + BLOOM_HEADER_SIZE,
						   b + off + BLOOM_HEADER_SIZE);
	}
	if (!bf_chunks_layout(&next, (const uint8 *) VARDATA(frame), VARSIZE(frame) - VARHDRSZ))
		elog(ERROR, "growing bloomfilter has a malformed frame");
	for (int i = r->nlayers; i < next.nlayers; i++)
		bf_chunks_insert_layer(cx->ext, &next, i,
							   a + next.layers[i].offset + BLOOM_HEADER_SIZE);
	bf_registry_write_header(cx, &next);
}

/*
 * The statement may fill the newest layer: lock the registry row and add
 * the keys to the latest whole value in memory.  If that appended a layer,
 * store it and return true; else return false with *r the locked row and
 * *whole its value (the caller then adds the keys to the chunks).
 */
static bool
add_locked(BfSpiContext *cx, RegRow *r, BfTypeInfo *ti, const uint64 *hashes, int n,
		   struct varlena **whole)
{
	RegRow		now;
	struct varlena *before;
	struct varlena *after;
	BfGrowAdder a;

	bf_registry_relock(cx, r, &now);
	if (!now.growing)
		bf_chunks_replaced(r);
	*r = now;
	before = bf_chunks_assemble_latest(cx->ext, r);
	after = bf_detoast_copy(PointerGetDatum(before)).vl;
	bf_grow_adder_init(&a, after, ti);
	for (int i = 0; i < n; i++)
		bf_grow_adder_add_hash(&a, hashes[i]);
	after = bf_grow_adder_finish(&a);
	*whole = before;
	if (a.gh.nlayers == a.start_layers)
		return false;
	bf_grow_chunks_store(cx, r, before, after);
	return true;
}

/*
 * The older layers (all but the newest) of the growing filter this backend
 * wrote last, as a growing value of those layers, kept between statements
 * so that a writer does not read a chunk of each of them for every key.
 * They change only by a growth or a replacement, which rewrite the frame
 * (and its "written"), and by writers that read the layers before a
 * growth: a few bits, whose keys a writer may then add again to the newest
 * layer (its count a little high; no key is lost).  At most
 * bloomfilter.filter_cache_size bytes.
 */
static struct
{
	int64		id;
	uint64		written;
	int			nlayers;
	struct varlena *layers;		/* in TopMemoryContext, or NULL */
}			older;

/* the older layers of r, from older or read into it; NULL if too large */
static const uint8 *
older_layers(const BfExt *ext, const RegRow *r, const struct varlena *whole)
{
	const BfChunkLayer *l = newest_layer(r);
	Size		len = l->offset;
	struct varlena *copy;

	if (older.layers && older.id == r->id && older.written == r->written &&
		older.nlayers == r->nlayers)
		return (const uint8 *) VARDATA(older.layers);
	if (older.layers)
		pfree(older.layers);
	older.layers = NULL;
	if (len > bf_filter_cache_limit())
		return NULL;
	if (whole == NULL)
		whole = bf_chunks_assemble_latest(ext, r);
	copy = MemoryContextAlloc(TopMemoryContext, VARHDRSZ + len);
	SET_VARSIZE(copy, VARHDRSZ + len);
	memcpy(VARDATA(copy), VARDATA_ANY(whole), len);
	/* a growing value of the first L - 1 layers */
	bloom_store_u16((uint8 *) VARDATA(copy) + BLOOM_GROW_NLAYERS_OFFSET,
					(uint16) (r->nlayers - 1));
	older.id = r->id;
	older.written = r->written;
	older.nlayers = r->nlayers;
	older.layers = copy;
	return (const uint8 *) VARDATA(copy);
}

/*
 * Keep the hashes no older layer of r holds (the newest layer's chunks
 * tell by themselves): tested in memory, or, where the older layers are
 * too large to keep, in their chunks.  Returns how many are kept.
 */
static int
drop_held(const BfExt *ext, const RegRow *r, const struct varlena *whole,
		  uint64 *hashes, int n)
{
	const uint8 *mem = older_layers(ext, r, whole);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	int			kept = 0;

	for (int i = 0; i < n; i++)
	{
		bool		held;

		CHECK_FOR_INTERRUPTS();
		if (mem)
			held = bloom_grow_test_hash(mem, hashes[i]);
		else
			held = bf_chunks_test_hash(ext, r, hashes[i], r->nlayers - 1, snap, NULL);
		if (!held)
			hashes[kept++] = hashes[i];
	}
	UnregisterSnapshot(snap);
	return kept;
}

/*
 * Add hashes[0..n-1] (in the order the values came) to r, a growing
 * chunked filter whose family is set; under SPI as the registry's owner.
 * reader: the writer may read the column.  A writer who may not adds its
 * keys to the newest layer even where an older one holds them, so that
 * what it writes does not tell it whether they were there.
 */
void
bf_grow_chunks_add(BfSpiContext *cx, RegRow *r, BfTypeInfo *ti, uint64 *hashes, int n,
				   bool reader)
{
	const BfExt *ext = cx->ext;
	struct varlena *whole = NULL;
	int64		count = -1;

	if (n >= BF_TRACK_BULK_KEYS)
	{
		whole = bf_chunks_assemble_latest(ext, r);
		count = whole_count(r, whole);
	}
	else if (writes_sample(r, hashes, n))
		count = bf_chunks_sample(ext, r, SAMPLE_CHUNKS);
	if (count >= 0 && count + n >= newest_layer(r)->hdr.capacity &&
		add_locked(cx, r, ti, hashes, n, &whole))
		return;
	if (reader && r->nlayers > 1)
		n = drop_held(ext, r, whole, hashes, n);
	bf_chunks_add(ext, r, hashes, n, !reader);
}

/*
 * Add the rows of relid (a new partition of the tracked table) to now, a
 * growing chunked filter whose registry row the caller locked.
 */
void
bf_grow_chunks_fill(BfSpiContext *cx, RegRow *now, Oid relid)
{
	struct varlena *before = bf_chunks_assemble_latest(cx->ext, now);
	BfFilter	f = bf_detoast_copy(PointerGetDatum(before));

	bf_fill_from_rel(&f, relid, NameStr(now->col), true, "bf_track");
	bf_grow_chunks_store(cx, now, before, f.vl);
}
