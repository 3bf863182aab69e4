/*-------------------------------------------------------------------------
 *
 * bf_track_changes.c
 *	  Change sets of filters kept by the trigger method: which parts of a
 *	  tracked filter each write changed, and the patch bf_tracked_changes
 *	  sends a client holding a copy.
 *
 * A chunked filter's rows say which transaction last wrote them
 * (bf_chunks_patch, at the end).  A filter of a registry not yet updated
 * to 1.2 is one value, which the trigger rewrites whole at every write,
 * and PostgreSQL keeps no history of which bytes changed, so each write
 * says so itself.  The registry row's version (bigint, from a sequence)
 * changes with every write of the filter; "changes" holds little-endian int64s:
 * first the base, the oldest version from which the stamps are complete,
 * then one stamp per BF_CHANGE_CHUNK bytes of the value: the version of the
 * write that last set a bit in that chunk, or 0 for "the write that made
 * this row version" (a sync trigger cannot know the version its UPDATE
 * will take).  A write that replaces the whole value (bf_track,
 * bf_rebuild, TRUNCATE, the DDL repairs) sets changes to NULL, which reads
 * as base = version, every chunk stamped with the version.
 *
 * Why no change is missed.  Writes of one registry row are serialized by
 * its row lock (the sync trigger's SELECT ... FOR UPDATE, or the UPDATE
 * itself), and each takes its version from the sequence after the
 * previous writer committed, so the row's versions grow along its history
 * (the sequence has no per-backend cache).  A client that copied the value
 * at version v and asks with since = v gets every chunk stamped above v:
 * a later write stamped each chunk it changed with its own version, above
 * v, and a stamp is only ever replaced by a later write's.  When the
 * stamps cannot answer, the whole value is sent: since NULL; since below
 * the base (the value was replaced since); since above the version (not a
 * version of this row: another database, a row tracked anew, a writer that
 * took a lower version); or stamps that do not fit the value.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"
#include "bf_patch.h"

#include "access/detoast.h"

static uint64
chunks_of(Size value_len)
{
	return (value_len + BF_CHANGE_CHUNK - 1) / BF_CHANGE_CHUNK;
}

/*
 * The stamps of a value of value_len bytes, decoded into stamps[nchunks]
 * (0 replaced by version; no stamps at all: every chunk at version); false
 * if they do not fit the value.
 */
static bool
read_stamps(struct varlena *changes, int64 version, Size value_len,
			int64 *base, int64 *stamps)
{
	uint64		n = chunks_of(value_len);
	struct varlena *c;
	const uint8 *p;

	if (changes == NULL)
	{
		*base = version;
		for (uint64 i = 0; i < n; i++)
			stamps[i] = version;
		return true;
	}
	c = detoast_attr(changes);
	if (VARSIZE_ANY_EXHDR(c) != sizeof(int64) * (n + 1))
		return false;
	p = (const uint8 *) VARDATA_ANY(c);
	*base = (int64) bloom_load_u64(p);
	for (uint64 i = 0; i < n; i++)
	{
		int64		s = (int64) bloom_load_u64(p + sizeof(int64) * (i + 1));

		stamps[i] = s == 0 ? version : s;
	}
	return true;
}

/* the flags an adder sets for a value of value_len bytes (BfAdder.touched) */
bool *
bf_track_touched(Size value_len)
{
	return palloc0(sizeof(bool) * chunks_of(value_len));
}

/*
 * The changes column after a sync trigger's write of a value of value_len
 * bytes: old (the row's changes, or NULL) and version as the trigger read
 * them under the row lock; touched[i] set for each chunk whose bits it
 * changed.
 */
bytea *
bf_track_stamps(struct varlena *old, int64 version, Size value_len,
				const bool *touched)
{
	uint64		n = chunks_of(value_len);
	int64	   *stamps = palloc(sizeof(int64) * n);
	int64		base;
	bytea	   *out = palloc(VARHDRSZ + sizeof(int64) * (n + 1));
	uint8	   *p = (uint8 *) VARDATA(out);

	/* stamps that do not fit: start afresh, complete from this version */
	if (!read_stamps(old, version, value_len, &base, stamps))
		(void) read_stamps(NULL, version, value_len, &base, stamps);
	SET_VARSIZE(out, VARHDRSZ + sizeof(int64) * (n + 1));
	bloom_store_u64(p, (uint64) base);
	for (uint64 i = 0; i < n; i++)
		bloom_store_u64(p + sizeof(int64) * (i + 1), touched[i] ? 0 : (uint64) stamps[i]);
	pfree(stamps);
	return out;
}

/*
 * The patch taking a copy of the filter value f (at version, with the
 * row's changes) from its state at since to now; *full set when the whole
 * value is sent.
 */
bytea *
bf_track_patch(const struct varlena *f, struct varlena *changes, int64 version,
			   bool since_null, uint64 since, bool *full)
{
	const uint8 *value = (const uint8 *) VARDATA_ANY(f);
	Size		len = VARSIZE_ANY_EXHDR(f);
	uint64		n = chunks_of(len);
	int64	   *stamps = palloc(sizeof(int64) * n);
	int64		base = 0;
	BfPatch		pb;

	*full = since_null || version <= 0 || since > (uint64) version ||
		!read_stamps(changes, version, len, &base, stamps) || since < (uint64) base;

	bf_patch_begin(&pb, BLOOM_HEADER_SIZE);
	memcpy(bf_patch_head(&pb), value, BLOOM_HEADER_SIZE);
	for (uint64 i = 0; i < n; i++)
	{
		Size		from = Max(i * BF_CHANGE_CHUNK, BLOOM_HEADER_SIZE);
		Size		to = Min((i + 1) * BF_CHANGE_CHUNK, len);

		if (*full || (uint64) stamps[i] > since)
			bf_patch_range(&pb, from, value + from, (uint32) (to - from));
	}
	pfree(stamps);
	/* its "inserted" count may have changed with any write */
	return bf_patch_finish(&pb, *full, since < (uint64) version, len);
}

/*
 * The patch of a chunked filter (bf_track_chunks.c) from position since
 * to what snap sees, and the position to ask from next (*next).  Each
 * chunk row names the last transaction that wrote it, and a position is
 * the xmin of the snapshot a patch was made from: every write that
 * snapshot did not see was made by a transaction at or above it, so the
 * next patch holds every chunk such a write changed.  The whole value is
 * sent when since is NULL, not a position of this database's chunked
 * filters, or older than the last replacement of the value or its header.
 */
bytea *
bf_chunks_patch(const BfExt *ext, const RegRow *r, Snapshot snap, bool since_null,
				uint64 since, uint64 *next, bool *full)
{
	uint64		xid = 0;
	bool	   *changed = palloc0(sizeof(bool) * bf_chunks_count(r));
	Size		head = r->growing ? BLOOM_GROW_HEADER_SIZE : BLOOM_HEADER_SIZE;
	struct varlena *vl;
	const uint8 *value;
	BfPatch		pb;
	bool		any = false;

	*full = since_null || !bf_chunks_position_xid(since, &xid) ||
		bf_chunks_header_written(r) >= xid;
	*next = bf_chunks_position(snap);
	vl = bf_chunks_assemble(ext, r, snap, xid, changed);
	value = (const uint8 *) VARDATA(vl);
	bf_patch_begin(&pb, head);
	memcpy(bf_patch_head(&pb), value, head);
	for (int i = 0; i < r->nlayers; i++)
	{
		const BfChunkLayer *l = &r->layers[i];
		Size		end = l->offset + bloom_total_size(l->hdr.nblocks);
		bool		header_sent = !r->growing;

		for (int32 c = l->first; c < l->first + l->nchunks; c++)
		{
			Size		from = l->offset + BLOOM_HEADER_SIZE + (Size) (c - l->first) * r->chunk_bytes;

			if (!*full && !changed[c])
				continue;
			/* a layer's count, in its header, changes with its chunks */
			if (!header_sent)
				bf_patch_range(&pb, l->offset, value + l->offset, BLOOM_HEADER_SIZE);
			header_sent = true;
			bf_patch_range(&pb, from, value + from,
						   (uint32) (Min(from + r->chunk_bytes, end) - from));
			any = true;
		}
	}
	pfree(changed);
	/* the (first) header's count changes with every chunk written */
	return bf_patch_finish(&pb, *full, any, VARSIZE(vl) - VARHDRSZ);
}
