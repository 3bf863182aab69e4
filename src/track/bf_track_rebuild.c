/*-------------------------------------------------------------------------
 *
 * bf_track_rebuild.c
 *	  Online rebuilds of filters kept by the trigger method
 *	  (bf_rebuild(..., concurrently => true)): the table is read while
 *	  writers go on, and they wait only for the swap of the new filter.
 *	  Writers log the hashes of the keys they write while the rebuild runs
 *	  (bf_rebuild_note_writes), and the swap adds them to the filter read
 *	  from the table: exact for every shape (the same size, a new capacity
 *	  or rate, a growing filter compacted into one layer), and the bits of
 *	  keys deleted before the rebuild are gone from the new filter.  A
 *	  writer's own bits are not evidence of its key: a key whose bits other
 *	  keys (deleted ones, or a false positive) had set already changes no
 *	  chunk, so no chunk says that it was written.
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
 * The empty filter an online rebuild of r reads the table into: of the
 * live filter's own geometry when the shape stays (it may predate today's
 * sizing rule), else a new one of the seed of r, whose hashes writers log.
 */
static BfFilter
rebuild_target(const RegRow *r, int64 capacity, double fpr, bool growing)
{
	BfFilter	f;

	if (!growing && !r->growing && capacity == r->capacity && fpr == r->fpr)
	{
		f.vl = bf_chunks_empty(r);
		bf_read_header(f.vl, &f.hdr);
		return f;
	}
	return bf_new_tracked_filter(capacity, fpr, growing, r->hdr.seed);
}

/*
 * method 'trigger', concurrently, into a filter of the given shape:
 * capacity and fpr, growing or not (a growing filter rebuilt this way is
 * compacted: one layer for the keys the table holds).  The caller holds a
 * SHARE UPDATE EXCLUSIVE lock on the table (no DDL, TRUNCATE or other
 * rebuild meanwhile).
 */
void
bf_rebuild_online(BfSpiContext *cx, const RegRow *before, Oid relid, Datum colname,
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

	if (before->chunk_bytes == 0 || before->malformed || !before->has_version)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the filter of column \"%s\" cannot be rebuilt concurrently", col),
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

	/*
	 * Other transactions see the lock only on the row version they see: not
	 * where this transaction changed the row itself (a write that grew the
	 * filter, say), whose new version they cannot see yet.
	 */
	if (!bf_registry_fetch(cx->ext, before->id, InvalidOid, NULL, true, &r) || r.mine)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("the filter of column \"%s\" cannot be rebuilt concurrently in a transaction that changed it",
						col),
				 errdetail("Writers would not see that the rebuild runs, and their keys would be missed."),
				 errhint("Commit first, or call bf_rebuild without concurrently.")));
	foreach(lc, bf_tree_members(relid))
	{
		LOCKTAG    *tag = palloc(sizeof(LOCKTAG));

		SET_LOCKTAG_RELATION(*tag, MyDatabaseId, lfirst_oid(lc));
		lockers = lappend(lockers, tag);
	}
	WaitForLockersMultiple(lockers, ShareLock, false);
	bf_registry_clear_log(cx, before->id);

	/* READ COMMITTED: the read's snapshot is taken now, after the lock */
	f = rebuild_target(before, capacity, fpr, growing);
	bf_fill_from_rel(&f, relid, col, only, "bf_rebuild");

	/* the swap: writers kept out from here; every one that logged is done */
	bf_lock_tree(relid, ShareRowExclusiveLock);
	bf_registry_lock_col(cx, relid, colname, &r);
	if (r.chunk_bytes == 0 || r.malformed || !r.has_version || r.version != before->version)
		replaced_during_rebuild(&r);
	adopt_family(&f, &r.hdr);
	add_logged(cx, r.id, &f, &ti);
	bf_registry_clear_log(cx, r.id);
	bf_registry_set_rebuilt(cx, r.id, f.vl, capacity, fpr);
}
