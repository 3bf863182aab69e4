/*-------------------------------------------------------------------------
 *
 * bf_track_rebuild.c
 *	  Online rebuilds of filters kept by the trigger method
 *	  (bf_rebuild(..., concurrently => true)): the table is read while
 *	  writers go on, and they wait only for the swap of the new filter.
 *	  What was written during the read is caught up in one of two ways:
 *
 *	  - a filter of the live one's size (bf_rebuild_same_size) takes the
 *	    bits of the live filter's chunks written since the read began;
 *	  - a filter of another shape (bf_rebuild_reshaped: a new capacity or
 *	    rate, or a growing filter compacted into one layer) cannot take bits
 *	    of another geometry, so writers log the hashes of their keys while
 *	    the rebuild runs (bf_rebuild_note_writes), and the swap adds them.
 *
 * Which writers log: the rebuild locks the filter's registry row FOR KEY
 * SHARE (no one else does), which every reader of the row sees at once in
 * its xmax, no commit needed; writers read the row anyway, and log when a
 * transaction in progress holds that lock (RegRow.rebuilding).  Then the
 * rebuild waits for every transaction that holds a writer's lock on the
 * table or a partition (WaitForLockers, as CREATE INDEX CONCURRENTLY
 * does), and only then reads the table.  A writer read the row either
 * after the lock, and logs, or before it: then it held its table lock
 * already, the rebuild waited for its commit, and the read sees its rows.
 * Either way no key is missed, and writers pay nothing while no rebuild
 * runs.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "access/xact.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

static void
replaced_during_rebuild(const RegRow *r)
{
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("the filter of column \"%s\" was replaced during its concurrent rebuild",
					NameStr(r->col)),
			 errdetail("A TRUNCATE, another rebuild or a schema change replaced it, so the writes made meanwhile cannot be told apart."),
			 errhint("Call bf_rebuild again.")));
}

/*
 * A writing statement of the chunked filter r, with the hashes of its
 * keys: if a rebuild of r into another shape runs, log them for it.
 */
void
bf_rebuild_note_writes(Oid fn_oid, const RegRow *r, const uint64 *hashes, int n)
{
	BfSpiContext cx;
	bytea	   *b;
	Oid			types[2] = {INT8OID, BYTEAOID};
	Datum		values[2];

	if (!r->rebuilding)
		return;
	b = palloc(VARHDRSZ + sizeof(uint64) * n);
	SET_VARSIZE(b, VARHDRSZ + sizeof(uint64) * n);
	for (int i = 0; i < n; i++)
		bloom_store_u64((uint8 *) VARDATA(b) + i * sizeof(uint64), hashes[i]);
	bf_spi_begin(&cx, fn_oid, true);
	values[0] = Int64GetDatum(r->id);
	values[1] = PointerGetDatum(b);
	bf_spi_exec(psprintf("INSERT INTO %s (id, hashes) VALUES ($1, $2)",
						 bf_registry_pending_table(cx.ext)),
				2, types, values, SPI_OK_INSERT);
	bf_spi_end(&cx);
}

/*
 * method 'trigger', concurrently: the table is read into a filter of the
 * live one's size while writers go on; then, with writers kept out (a
 * SHARE ROW EXCLUSIVE lock on the table, and the registry row's lock), the
 * chunks written since the read began are ORed in from the live filter,
 * and the new filter replaces it.  Writers wait only for that swap,
 * lookups never.  A key written during the read is either in the rows the
 * read saw or in a chunk written after it began; bits of keys deleted
 * since the last rebuild stay only in those chunks.  Which chunks those
 * are: for a chunked filter, those whose last writer's transaction id is
 * at or above the xmin of a snapshot taken before the read; for a whole
 * one (a registry not yet updated to 1.2), the stamps of
 * bf_track_changes.c.
 */
void
bf_rebuild_same_size(BfSpiContext *cx, const RegRow *before, Oid relid, Datum colname)
{
	bool		only = get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE;
	BfFilter	f;
	BfFilter	live;
	RegRow		r;
	Size		len;
	bool	   *changed;
	uint8	   *dst;
	const uint8 *src;
	uint64		ones;
	uint64		start;
	Size		chunk;
	Snapshot	snap;
	bool		ok;

	if ((before->filter_raw == NULL && before->chunk_bytes == 0) || !before->has_version ||
		before->malformed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the filter of column \"%s\" cannot be rebuilt concurrently",
						NameStr(before->col)),
				 errdetail("It has no filter to catch up from, or no version to tell what changed."),
				 errhint("Call bf_rebuild without concurrently.")));
	snap = RegisterSnapshot(GetLatestSnapshot());
	start = bf_chunks_snapshot_xid(snap);
	UnregisterSnapshot(snap);
	/* an empty filter of the live one's size and family */
	f.vl = before->chunk_bytes > 0 ? bf_chunks_empty(before) :
		bf_filter_clear(PointerGetDatum(before->filter_raw));
	bf_read_header(f.vl, &f.hdr);
	bf_fill_from_rel(&f, relid, NameStr(*DatumGetName(colname)), only, "bf_rebuild");

	/* the swap: writers kept out from here, the live filter as it is now */
	bf_lock_tree(relid, ShareRowExclusiveLock);
	bf_registry_lock_col(cx, relid, colname, &r);
	len = VARSIZE_ANY_EXHDR(f.vl);
	chunk = r.chunk_bytes > 0 ? (Size) r.chunk_bytes : BF_CHANGE_CHUNK;
	changed = palloc0(sizeof(bool) * (len / chunk + 1));
	live.vl = NULL;
	ok = r.has_version && r.version == before->version &&
		r.chunk_bytes == before->chunk_bytes && !r.malformed;
	if (ok && r.chunk_bytes > 0)
	{
		snap = RegisterSnapshot(GetLatestSnapshot());
		live.vl = bf_chunks_assemble(cx->ext, &r, snap, start, changed);
		UnregisterSnapshot(snap);
	}
	else if (ok && r.filter_raw != NULL)
	{
		live.vl = bf_detoast_copy(PointerGetDatum(r.filter_raw)).vl;
		ok = bf_track_changed_since(r.changes_raw, r.version, len, before->version, changed);
	}
	if (!ok || live.vl == NULL || VARSIZE_ANY_EXHDR(live.vl) != len)
		replaced_during_rebuild(&r);
	bf_read_header(live.vl, &live.hdr);
	/* a table empty when read: the family the writers since gave the filter */
	bloom_adopt_family(&f.hdr, &live.hdr);
	dst = (uint8 *) VARDATA_ANY(f.vl);
	src = (const uint8 *) VARDATA_ANY(live.vl);
	for (Size c = 0; c < len / chunk + 1; c++)
	{
		/* the bits only: the header is the new filter's */
		Size		base = r.chunk_bytes > 0 ? BLOOM_HEADER_SIZE : 0;
		Size		from = Max(base + c * chunk, (Size) BLOOM_HEADER_SIZE);
		Size		to = Min(base + (c + 1) * chunk, len);

		CHECK_FOR_INTERRUPTS();
		if (changed[c])
			for (Size i = from; i < to; i++)
				dst[i] |= src[i];
	}
	ones = bloom_popcount(BF_BITS(f.vl), f.hdr.nblocks * BLOOM_BLOCK_BYTES);
	f.hdr.inserted = bloom_estimate_inserted(ones, f.hdr.nblocks, f.hdr.nhashes);
	bloom_header_write(BF_PAYLOAD(f.vl), &f.hdr);

	/* the same capacity and rate */
	bf_registry_set_rebuilt(cx, r.id, f.vl, r.capacity, r.fpr);
}


/* an empty filter f takes the family of the live filter (a table empty when read) */
static void
adopt_family(BfFilter *f, const BloomHeader *live)
{
	if (live->family == BF_FAMILY_NONE)
		return;
	if (f->hdr.family == BF_FAMILY_GROWING)
	{
		BloomGrowHeader gh;

		bf_grow_read(f->vl, &gh, ERRCODE_DATA_CORRUPTED);
		if (gh.first.family != BF_FAMILY_NONE)
			return;
		bloom_adopt_family(&gh.first, live);
		bloom_grow_share_family(BF_PAYLOAD(f->vl), &gh);
	}
	else if (f->hdr.family == BF_FAMILY_NONE)
	{
		bloom_adopt_family(&f->hdr, live);
		bloom_header_write(BF_PAYLOAD(f->vl), &f->hdr);
	}
}

/* add the hashes writers logged for row id during the read to f */
static void
add_logged(BfSpiContext *cx, int64 id, BfFilter *f, BfTypeInfo *ti)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	BfAdder		adder;

	values[0] = Int64GetDatum(id);
	bf_spi_exec(psprintf("SELECT hashes FROM %s WHERE id = $1",
						 bf_registry_pending_table(cx->ext)),
				1, types, values, SPI_OK_SELECT);
	bf_adder_init(&adder, f, ti);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		bytea	   *b = DatumGetByteaPP(SPI_getbinval(SPI_tuptable->vals[i],
													  SPI_tuptable->tupdesc, 1, &isnull));
		const uint8 *p = (const uint8 *) VARDATA_ANY(b);
		Size		len = VARSIZE_ANY_EXHDR(b);

		CHECK_FOR_INTERRUPTS();
		if (len % sizeof(uint64) != 0)
			elog(ERROR, "malformed bloomfilter rebuild log of registry row " INT64_FORMAT, id);
		for (Size off = 0; off < len; off += sizeof(uint64))
			bf_adder_add_hash(&adder, bloom_load_u64(p + off));
	}
	bf_adder_finish(&adder);
}

/*
 * method 'trigger', concurrently, into a filter of another shape:
 * capacity and fpr, growing or not (a growing filter rebuilt this way is
 * compacted: one layer for the keys the table holds).  The caller holds a
 * SHARE UPDATE EXCLUSIVE lock on the table (no DDL, TRUNCATE or other
 * rebuild meanwhile).
 */
void
bf_rebuild_reshaped(BfSpiContext *cx, const RegRow *before, Oid relid, Datum colname,
					int64 capacity, double fpr, bool growing)
{
	bool		only = get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE;
	const char *col = NameStr(*DatumGetName(colname));
	List	   *lockers = NIL;
	ListCell   *lc;
	BfFilter	f;
	RegRow		r;
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	AttrNumber	attnum = get_attnum(relid, col);
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;

	if (before->chunk_bytes == 0 || before->malformed)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the filter of column \"%s\" cannot be rebuilt concurrently into another size",
						col),
				 errdetail("Only a filter kept in chunks (the extension updated to 1.2) logs the writes made during the rebuild."),
				 errhint("Call bf_rebuild without concurrently, or run ALTER EXTENSION bloomfilter UPDATE first.")));
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);

	/*
	 * Writers that read the registry row from now on log their keys; those
	 * that read it before hold a table lock, and commit before the read.
	 * Logs of a rebuild that failed go.
	 */
	values[0] = Int64GetDatum(before->id);
	bf_spi_exec(psprintf("SELECT 1 FROM %s WHERE id = $1 FOR KEY SHARE", cx->ext->registry),
				1, types, values, SPI_OK_SELECT);
	foreach(lc, bf_tree_members(relid))
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		SET_LOCKTAG_RELATION(*tag, MyDatabaseId, lfirst_oid(lc));
		lockers = lappend(lockers, tag);
	}
	WaitForLockersMultiple(lockers, ShareLock, false);
	bf_registry_clear_log(cx, before->id);

	/* READ COMMITTED: the read's snapshot is taken now, after the lock */
	f = bf_new_tracked_filter(capacity, fpr, growing, before->hdr.seed);
	bf_fill_from_rel(&f, relid, col, only, "bf_rebuild");

	/* the swap: writers kept out from here; every one that logged is done */
	bf_lock_tree(relid, ShareRowExclusiveLock);
	bf_registry_lock_col(cx, relid, colname, &r);
	if (r.chunk_bytes == 0 || r.malformed || !r.has_version || !before->has_version ||
		r.version != before->version)
		replaced_during_rebuild(&r);
	adopt_family(&f, &r.hdr);
	add_logged(cx, r.id, &f, &ti);
	bf_registry_clear_log(cx, r.id);
	bf_registry_set_rebuilt(cx, r.id, f.vl, capacity, fpr);
}
