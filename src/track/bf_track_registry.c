/*-------------------------------------------------------------------------
 *
 * bf_track_registry.c
 *	  The registry of tracked filters (@extschema@.bf_registry and
 *	  bf_registry_attnum): finding the extension's objects, reading registry
 *	  rows directly through their indexes, writing them through SPI as the
 *	  registry's owner, and a row's filter (through bf_cache.c).
 *
 * The registry is written as its owner (as the RI triggers act as the
 * table owner), under the search_path "pg_catalog, pg_temp", with every
 * name schema-qualified and every identifier quoted.  Every change other
 * than a sync trigger's filter write also invalidates the registry's
 * relcache entry, which tells every backend to drop what its lookup cache
 * derived from the registry (bf_track_lookup.c).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_cache.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/multixact.h"
#include "access/xact.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "commands/extension.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/xid8.h"

const char *const bf_trigger_suffixes[BF_NTRIGGERS] = {"ins", "upd", "del", "trunc"};

/* ---- the extension's objects, found once per backend ---- */

static BfExt ext_state;
static bool ext_valid = false;
static bool callbacks_registered = false;

/* functions known to live in ext_state.nsp (saves a pg_proc lookup) */
#define EXT_FNS 8
static Oid	ext_fns[EXT_FNS];
static int	ext_nfns;

static void
ext_relcache_callback(Datum arg, Oid relid)
{
	/* a change of the registry: the objects are found again */
	if (!OidIsValid(relid) || relid == ext_state.registry_relid)
		ext_valid = false;
}

static void
ext_syscache_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	/* a function or schema of the extension may have moved or been renamed */
	ext_valid = false;
	ext_nfns = 0;
}

static Oid
index_of(const char *name, Oid nsp, bool missing_ok, bool *missing)
{
	Oid			relid = get_relname_relid(name, nsp);

	if (!OidIsValid(relid))
	{
		if (missing_ok)
		{
			*missing = true;
			return InvalidOid;
		}
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter registry relation \"%s\" is missing", name),
				 errhint("Reinstall the extension.")));
	}
	return relid;
}

static bool
ext_build(Oid nsp, bool missing_ok)
{
	BfExt	   *e = &ext_state;
	char	   *nspname = get_namespace_name(nsp);
	bool		missing = false;
	HeapTuple	tup;

	if (nspname == NULL)
		elog(ERROR, "cache lookup failed for namespace %u", nsp);
	if (!callbacks_registered)
	{
		CacheRegisterRelcacheCallback(ext_relcache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(PROCOID, ext_syscache_callback, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, ext_syscache_callback, (Datum) 0);
		callbacks_registered = true;
	}
	ext_valid = false;
	memset(e, 0, sizeof(BfExt));
	e->nsp = nsp;
	strlcpy(e->nspname, quote_identifier(nspname), sizeof(e->nspname));
	snprintf(e->registry, sizeof(e->registry), "%s.bf_registry", e->nspname);
	snprintf(e->registry_attnum, sizeof(e->registry_attnum), "%s.bf_registry_attnum",
			 e->nspname);
	e->registry_relid = index_of("bf_registry", nsp, missing_ok, &missing);
	e->registry_pkey = index_of("bf_registry_pkey", nsp, missing_ok, &missing);
	e->registry_tbl_col_key = index_of("bf_registry_tbl_col_key", nsp, missing_ok, &missing);
	e->registry_attnum_relid = index_of("bf_registry_attnum", nsp, missing_ok, &missing);
	e->registry_attnum_pkey = index_of("bf_registry_attnum_pkey", nsp, missing_ok, &missing);
	if (missing)
		return false;

	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(e->registry_relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", e->registry_relid);
	e->registry_owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);

	e->sync_fn = LookupFuncName(list_make2(makeString(nspname), makeString("bf_track_sync")),
								0, NULL, true);
	e->bftype = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
								CStringGetDatum("bloomfilter"), ObjectIdGetDatum(nsp));
	if (!OidIsValid(e->bftype))
		elog(ERROR, "type bloomfilter not found in schema %u", nsp);
	/* 0 while the catalog is still that of 1.0 */
	e->att_stale = get_attnum(e->registry_relid, "stale");
	e->att_created_index = get_attnum(e->registry_relid, "created_index");
	e->att_version = get_attnum(e->registry_relid, "version");
	e->att_changes = get_attnum(e->registry_relid, "changes");
	e->att_header = get_attnum(e->registry_relid, "header");
	e->att_chunk_bytes = get_attnum(e->registry_relid, "chunk_bytes");
	e->att_written = get_attnum(e->registry_relid, "written");
	if (e->att_chunk_bytes)
	{
		e->chunk_relid = index_of("bf_registry_chunk", nsp, false, &missing);
		e->chunk_pkey = index_of("bf_registry_chunk_pkey", nsp, false, &missing);
	}
	ext_valid = true;
	return true;
}

/*
 * The extension of the calling function fn_oid (its schema is the
 * extension's).  missing_ok: NULL rather than an error when the registry
 * is gone (an event trigger firing during DROP EXTENSION).
 */
const BfExt *
bf_ext(Oid fn_oid, bool missing_ok)
{
	Oid			nsp;

	if (ext_valid)
		for (int i = 0; i < ext_nfns; i++)
			if (ext_fns[i] == fn_oid)
				return &ext_state;
	nsp = get_func_namespace(fn_oid);
	if (!OidIsValid(nsp))
		elog(ERROR, "cache lookup failed for function %u", fn_oid);
	if (!ext_valid || ext_state.nsp != nsp)
	{
		ext_nfns = 0;
		if (!ext_build(nsp, missing_ok))
			return NULL;
	}
	if (ext_nfns < EXT_FNS)
		ext_fns[ext_nfns++] = fn_oid;
	return &ext_state;
}

/*
 * The SET items that go with a write of a whole new filter value: a new
 * version, and no stamps of which chunks changed (bf_track_changes.c).
 * Empty while the registry is still that of 1.0.
 */
const char *
bf_registry_new_value_sql(const BfExt *ext)
{
	if (ext->att_changes)
		return ", version = DEFAULT, changes = NULL";
	return ext->att_version ? ", version = DEFAULT" : "";
}

/*
 * Lock registry row id FOR UPDATE (as a sync trigger does before it
 * writes the row) and read its latest version into now: false if the row
 * is gone.
 */
bool
bf_registry_lock(BfSpiContext *cx, int64 id, RegRow *now)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1];

	MemoryContext old;
	bool		found;

	values[0] = Int64GetDatum(id);
	/* not FOR UPDATE: an online rebuild's FOR KEY SHARE does not hold it up */
	bf_spi_exec(psprintf("SELECT 1 FROM %s WHERE id = $1 FOR NO KEY UPDATE", cx->ext->registry),
				1, types, values, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	/* the row outlives the SPI connection */
	old = MemoryContextSwitchTo(cx->caller_cxt);
	found = bf_registry_fetch(cx->ext, id, InvalidOid, NULL, true, now);
	MemoryContextSwitchTo(old);
	return found;
}

/*
 * Lock the registry row of r, a filter a writer read before, into now:
 * bf_chunks_replaced() if the row is gone or holds another filter (of
 * another chunk size) by now
 */
void
bf_registry_relock(BfSpiContext *cx, const RegRow *r, RegRow *now)
{
	if (!bf_registry_lock(cx, r->id, now) || now->chunk_bytes != r->chunk_bytes)
		bf_chunks_replaced(r);
}

/* the registry row of (relid, col), locked FOR UPDATE, or bf_not_tracked() */
void
bf_registry_lock_col(BfSpiContext *cx, Oid relid, Datum colname, RegRow *r)
{
	Oid			types[2] = {OIDOID, NAMEOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), colname};
	bool		isnull;
	int64		id;

	bf_as_owner(cx);
	bf_spi_exec(psprintf("SELECT id FROM %s WHERE tbl = $1 AND col = $2 FOR UPDATE",
						 cx->ext->registry),
				2, types, values, SPI_OK_SELECT);
	if (SPI_processed == 0)
		bf_not_tracked(relid, NameStr(*DatumGetName(colname)));
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* the row as it is now, after waiting for the lock (repaired if bad) */
	if (!bf_registry_fetch_damaged(cx->ext, id, InvalidOid, NULL, true, r))
		bf_not_tracked(relid, NameStr(*DatumGetName(colname)));
}

/*
 * Write the header of the chunked filter of r (its family, set by the
 * first values added, or its layers after a growth); the caller holds the
 * row's lock, as its owner.
 */
void
bf_registry_write_header(BfSpiContext *cx, const RegRow *r)
{
	Oid			types[2] = {INT8OID, BYTEAOID};
	Datum		values[2];

	values[0] = Int64GetDatum(r->id);
	values[1] = PointerGetDatum(bf_chunks_frame(r));
	bf_spi_exec(psprintf("UPDATE %s SET header = $2, written = pg_catalog.pg_current_xact_id() "
						 "WHERE id = $1", cx->ext->registry),
				2, types, values, SPI_OK_UPDATE);
}

/*
 * Write a whole new filter value vl for registry row id, with extra SET
 * items (", a = $4, ..." over xtypes / xvalues, which are $4 on).  The
 * value is stored in chunks once the registry has them (1.2).  The caller
 * holds the locks that keep writers out.
 */
void
bf_registry_set_value(BfSpiContext *cx, int64 id, struct varlena *vl,
					  const char *extra, int nextra, Oid *xtypes, Datum *xvalues)
{
	const BfExt *ext = cx->ext;
	bool		chunked = ext->att_chunk_bytes != 0;
	Oid			types[8] = {INT8OID, ext->bftype, BYTEAOID};
	Datum		values[8];
	char		nulls[8] = {' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '};
	char	   *sql;
	int			rc;

	Assert(nextra <= 5);
	values[0] = Int64GetDatum(id);
	values[1] = PointerGetDatum(vl);
	if (chunked)
	{
		values[2] = PointerGetDatum(bf_chunks_value_frame(vl));
		nulls[1] = 'n';
	}
	else
		nulls[2] = 'n';
	for (int i = 0; i < nextra; i++)
	{
		types[3 + i] = xtypes[i];
		values[3 + i] = xvalues[i];
	}
	if (ext->att_chunk_bytes)
		sql = psprintf("UPDATE %s SET filter = $2, header = $3, chunk_bytes = %s, "
					   "written = pg_catalog.pg_current_xact_id(), version = DEFAULT, "
					   "changes = NULL%s WHERE id = $1",
					   ext->registry, chunked ? CppAsString2(BF_TRACK_CHUNK_BYTES) : "NULL",
					   extra ? extra : "");
	else
		sql = psprintf("UPDATE %s SET filter = $2%s%s WHERE id = $1", ext->registry,
					   bf_registry_new_value_sql(ext), extra ? extra : "");
	rc = SPI_execute_with_args(sql, 3 + nextra, types, values, nulls, false, 0);
	if (rc != SPI_OK_UPDATE)
		elog(ERROR, "SPI query failed (%s): %s", SPI_result_code_string(rc), sql);
	if (chunked)
		bf_chunks_replace(ext, id, vl, BF_TRACK_CHUNK_BYTES);
}

/*
 * Store vl, rebuilt from the table at capacity and fpr, as the filter of
 * registry row id: the deletes counted since the last rebuild, and any
 * staleness, cleared.  The caller holds the locks that keep writers out.
 */
void
bf_registry_set_rebuilt(BfSpiContext *cx, int64 id, struct varlena *vl, int64 capacity,
						double fpr)
{
	Oid			types[2] = {INT8OID, FLOAT8OID};
	Datum		values[2];

	values[0] = Int64GetDatum(capacity);
	values[1] = Float8GetDatum(fpr);
	bf_registry_set_value(cx, id, vl,
						  psprintf(", capacity = $4, fpr = $5, deleted_since_rebuild = 0%s",
								   cx->ext->att_stale ? ", stale = NULL" : ""),
						  2, types, values);
}

/*
 * The whole value of r's filter as snap sees it (a chunked one assembled),
 * or NULL if it has none; palloc'd or r's own copy.
 */
struct varlena *
bf_registry_value(const BfExt *ext, RegRow *r, Snapshot snap)
{
	if (r->chunk_bytes > 0)
		return bf_chunks_assemble(ext, r, snap, 0, NULL);
	if (r->filter_raw == NULL)
		return NULL;
	return (struct varlena *) PG_DETOAST_DATUM(PointerGetDatum(r->filter_raw));
}

/*
 * bf_registry_to_chunks(): run once by ALTER EXTENSION UPDATE to 1.2,
 * stores every filter of the trigger method in chunks (each row
 * locked as a sync trigger locks it, so that no write is lost).
 */
PG_FUNCTION_INFO_V1(bf_registry_to_chunks);
Datum
bf_registry_to_chunks(PG_FUNCTION_ARGS)
{
	BfSpiContext cx;
	int64	   *ids;
	uint64		n;

	if (!creating_extension)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bf_registry_to_chunks runs only in ALTER EXTENSION bloomfilter UPDATE")));
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	n = bf_spi_ids(psprintf("SELECT id FROM %s WHERE method = 'trigger' AND filter IS NOT NULL "
							"ORDER BY id FOR UPDATE", cx.ext->registry),
				   0, NULL, NULL, &ids, NULL);
	for (uint64 i = 0; i < n; i++)
	{
		RegRow		r;

		CHECK_FOR_INTERRUPTS();
		if (bf_registry_fetch(cx.ext, ids[i], InvalidOid, NULL, true, &r) &&
			r.filter_raw != NULL)
			bf_registry_set_value(&cx, r.id, (struct varlena *) PG_DETOAST_DATUM(PointerGetDatum(r.filter_raw)),
								  NULL, 0, NULL, NULL);
	}
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* ---- SPI ---- */

/* > 0 while the extension runs DDL itself: its event trigger stays out */
static int	own_ddl_depth = 0;

bool
bf_in_own_ddl(void)
{
	return own_ddl_depth > 0;
}

/* connect to SPI under the safe search_path, as the caller or the owner */
void
bf_spi_begin(BfSpiContext *cx, Oid fn_oid, bool as_owner)
{
	cx->ext = bf_ext(fn_oid, false);
	cx->caller_cxt = CurrentMemoryContext;
	GetUserIdAndSecContext(&cx->save_userid, &cx->save_sec_context);
	if (as_owner)
		bf_as_owner(cx);
	cx->save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", BF_SAFE_SEARCH_PATH,
							 PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
bf_spi_end(BfSpiContext *cx)
{
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	AtEOXact_GUC(true, cx->save_nestlevel);
	SetUserIdAndSecContext(cx->save_userid, cx->save_sec_context);
}

/* act as the owner of the registry (the caller's rights were checked) */
void
bf_as_owner(BfSpiContext *cx)
{
	SetUserIdAndSecContext(cx->ext->registry_owner,
						   cx->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
}

void
bf_as_caller(BfSpiContext *cx)
{
	SetUserIdAndSecContext(cx->save_userid, cx->save_sec_context);
}

/* run a statement, erroring out unless its result is `expect` */
void
bf_spi_exec(const char *sql, int nargs, Oid *types, Datum *values, int expect)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, NULL,
										   false, 0);

	if (rc != expect)
		elog(ERROR, "SPI query failed (%s): %s", SPI_result_code_string(rc), sql);
}

/* run DDL of the extension's own, which its event trigger ignores */
void
bf_spi_ddl(const char *sql)
{
	own_ddl_depth++;
	PG_TRY();
	{
		bf_spi_exec(sql, 0, NULL, NULL, SPI_OK_UTILITY);
	}
	PG_FINALLY();
	{
		own_ddl_depth--;
	}
	PG_END_TRY();
}

/* run a query returning (id bigint [, rel oid]) rows into arrays */
uint64
bf_spi_ids(const char *sql, int nargs, Oid *types, Datum *values,
		   int64 **ids, Oid **rels)
{
	uint64		n;
	bool		isnull;

	bf_spi_exec(sql, nargs, types, values, SPI_OK_SELECT);
	n = SPI_processed;
	*ids = palloc(sizeof(int64) * (n + 1));
	if (rels)
		*rels = palloc(sizeof(Oid) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		(*ids)[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i],
												SPI_tuptable->tupdesc, 1, &isnull));
		if (rels)
			(*rels)[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														SPI_tuptable->tupdesc, 2, &isnull));
	}
	return n;
}

char *
bf_qualified_rel(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		elog(ERROR, "cache lookup failed for relation %u", relid);
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  relname);
}

/* ---- writing the registry ---- */

/* tell every backend's lookup cache that the registry changed (at commit) */
void
bf_registry_changed(const BfExt *ext)
{
	CacheInvalidateRelcacheByRelid(ext->registry_relid);
}

/*
 * Record that the filter of row id no longer describes its table; lookups
 * then refuse to answer until bf_rebuild.  A 1.0 registry has no place for
 * it: the caller's WARNING is all there is until ALTER EXTENSION UPDATE.
 */
void
bf_registry_mark_stale(BfSpiContext *cx, int64 id, const char *why)
{
	Oid			types[2] = {INT8OID, TEXTOID};
	Datum		values[2];

	if (cx->ext->att_stale == 0)
		return;
	values[0] = Int64GetDatum(id);
	values[1] = CStringGetTextDatum(why);
	bf_as_owner(cx);
	bf_spi_exec(psprintf("UPDATE %s SET stale = $2 WHERE id = $1", cx->ext->registry),
				2, types, values, SPI_OK_UPDATE);
	bf_registry_changed(cx->ext);
}

/* the table where writers log their keys for an online rebuild */
char *
bf_registry_pending_table(const BfExt *ext)
{
	return psprintf("%s.bf_registry_pending", ext->nspname);
}

/* forget the keys writers logged for a rebuild of registry row id */
void
bf_registry_clear_log(BfSpiContext *cx, int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	bf_spi_exec(psprintf("DELETE FROM %s WHERE id = $1", bf_registry_pending_table(cx->ext)),
				1, types, values, SPI_OK_DELETE);
}

void
bf_registry_delete(BfSpiContext *cx, int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	bf_as_owner(cx);
	bf_spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx->ext->registry),
				1, types, values, SPI_OK_DELETE);
	bf_spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx->ext->registry_attnum),
				1, types, values, SPI_OK_DELETE);
	if (cx->ext->att_chunk_bytes)
	{
		bf_chunks_delete(cx->ext, id);
		/* the keys logged for a rebuild that failed, if any */
		bf_registry_clear_log(cx, id);
	}
	bf_registry_changed(cx->ext);
}

/* ---- reading the registry directly ---- */

static Snapshot
registry_snapshot(bool latest)
{
	if (latest)
		return RegisterSnapshot(GetLatestSnapshot());
	return RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() :
							GetTransactionSnapshot());
}

static void
corrupt_row(RegRow *r, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("the registry row of column \"%s\" has %s", NameStr(r->col), what),
			 errhint("Call bf_rebuild for the column.")));
}

/*
 * The header of a chunked filter, checked as a value's would be: what is
 * wrong with it, or NULL
 */
static const char *
read_chunked_header(RegRow *r, Datum d, bool isnull)
{
	struct varlena *h;

	if (isnull)
		return "no header";
	if (r->chunk_bytes < BLOOM_BLOCK_BYTES || r->chunk_bytes > BF_TRACK_MAX_CHUNK_BYTES ||
		r->chunk_bytes % BLOOM_BLOCK_BYTES != 0)
		return "a bad chunk size";
	h = (struct varlena *) PG_DETOAST_DATUM(d);
	if (!bf_chunks_layout(r, (const uint8 *) VARDATA_ANY(h), VARSIZE_ANY_EXHDR(h)))
		return "a malformed header";
	return NULL;
}

/*
 * Does a transaction in progress hold a FOR KEY SHARE lock on tup?  Only an
 * online rebuild does (bf_track_rebuild.c): writers
 * then log their keys for it.  The tuple's xmax tells, without a lock.
 */
static bool
key_share_locked(HeapTuple tup)
{
	HeapTupleHeader h = tup->t_data;
	uint16		infomask = h->t_infomask;
	TransactionId xmax = HeapTupleHeaderGetRawXmax(h);

	if (infomask & HEAP_XMAX_INVALID)
		return false;
	if (infomask & HEAP_XMAX_IS_MULTI)
	{
		MultiXactMember *members;
		int			n = GetMultiXactIdMembers(xmax, &members, false,
											  HEAP_XMAX_IS_LOCKED_ONLY(infomask));
		bool		locked = false;

		for (int i = 0; i < n; i++)
			locked |= members[i].status == MultiXactStatusForKeyShare &&
				TransactionIdIsInProgress(members[i].xid);
		if (n > 0)
			pfree(members);
		return locked;
	}
	return HEAP_XMAX_IS_LOCKED_ONLY(infomask) && HEAP_XMAX_IS_KEYSHR_LOCKED(infomask) &&
		TransactionIdIsInProgress(xmax);
}

/*
 * Decode registry row tup (read by this backend, a copy or in a locked
 * buffer) into *out; its own id (t_self) and xmin with it.
 */
void
bf_registry_decode(const BfExt *ext, TupleDesc desc, HeapTuple tup, RegRow *out)
{
	bool		isnull;
	Datum		d;

	memset(out, 0, sizeof(RegRow));
	out->id = DatumGetInt64(heap_getattr(tup, Anum_bf_registry_id, desc, &isnull));
	out->rebuilding = key_share_locked(tup);
	out->mine = TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tup->t_data));
	out->tbl = DatumGetObjectId(heap_getattr(tup, Anum_bf_registry_tbl, desc, &isnull));
	namestrcpy(&out->col,
			   NameStr(*DatumGetName(heap_getattr(tup, Anum_bf_registry_col, desc, &isnull))));
	out->use_index = strcmp(TextDatumGetCString(heap_getattr(tup, Anum_bf_registry_method,
															desc, &isnull)), "index") == 0;
	out->capacity = DatumGetInt64(heap_getattr(tup, Anum_bf_registry_capacity, desc, &isnull));
	out->fpr = DatumGetFloat8(heap_getattr(tup, Anum_bf_registry_fpr, desc, &isnull));
	if (ext->att_stale)
	{
		d = heap_getattr(tup, ext->att_stale, desc, &isnull);
		out->stale = isnull ? NULL : TextDatumGetCString(d);
	}
	if (ext->att_created_index)
	{
		d = heap_getattr(tup, ext->att_created_index, desc, &isnull);
		out->has_created_index = !isnull;
		if (!isnull)
			namestrcpy(&out->created_index, NameStr(*DatumGetName(d)));
	}
	if (ext->att_version)
	{
		d = heap_getattr(tup, ext->att_version, desc, &isnull);
		out->has_version = !isnull;
		out->version = isnull ? 0 : DatumGetInt64(d);
	}
	if (ext->att_changes)
	{
		d = heap_getattr(tup, ext->att_changes, desc, &isnull);
		out->changes_raw = isnull ? NULL :
			(struct varlena *) DatumGetPointer(datumCopy(d, false, -1));
	}
	if (ext->att_chunk_bytes)
	{
		d = heap_getattr(tup, ext->att_chunk_bytes, desc, &isnull);
		out->chunk_bytes = isnull ? 0 : DatumGetInt32(d);
		d = heap_getattr(tup, ext->att_written, desc, &isnull);
		out->written = isnull ? 0 : U64FromFullTransactionId(DatumGetFullTransactionId(d));
		if (out->chunk_bytes != 0)
			out->malformed = read_chunked_header(out, heap_getattr(tup, ext->att_header,
																   desc, &isnull),
												 isnull);
	}
	d = heap_getattr(tup, Anum_bf_registry_filter, desc, &isnull);
	/* a TOAST pointer or a small in-line value: cheap to copy */
	out->filter_raw = isnull ? NULL :
		(struct varlena *) DatumGetPointer(datumCopy(d, false, -1));
	out->tid = tup->t_self;
	out->xmin = HeapTupleHeaderGetXmin(tup->t_data);
}

/*
 * Fetch the registry row of id (when relid is invalid) or of (relid, col)
 * through an index, false if there is none.  With the active snapshot, or
 * with the latest one (latest): the sync trigger must compare against the
 * current filter, not an older one a REPEATABLE READ snapshot still sees.
 */
bool
bf_registry_fetch(const BfExt *ext, int64 id, Oid relid, const char *colname,
				  bool latest, RegRow *out)
{
	bool		found = bf_registry_fetch_damaged(ext, id, relid, colname, latest, out);

	if (found && out->malformed)
		corrupt_row(out, out->malformed);
	return found;
}

/*
 * As bf_registry_fetch, but a row whose chunked filter's header is
 * malformed is returned too, with out->malformed saying what is wrong
 * (its layers unread): for bf_untrack and bf_rebuild, which replace it.
 */
bool
bf_registry_fetch_damaged(const BfExt *ext, int64 id, Oid relid, const char *colname,
						  bool latest, RegRow *out)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key[2];
	NameData	nd;
	HeapTuple	tup;
	bool		found = false;
	Snapshot	snap = registry_snapshot(latest);

	rel = table_open(ext->registry_relid, AccessShareLock);
	if (OidIsValid(relid))
	{
		namestrcpy(&nd, colname);
		ScanKeyInit(&key[0], Anum_bf_registry_tbl, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(relid));
		ScanKeyInit(&key[1], Anum_bf_registry_col, BTEqualStrategyNumber,
					F_NAMEEQ, NameGetDatum(&nd));
		scan = systable_beginscan(rel, ext->registry_tbl_col_key, true, snap, 2, key);
	}
	else
	{
		ScanKeyInit(&key[0], Anum_bf_registry_id, BTEqualStrategyNumber,
					F_INT8EQ, Int64GetDatum(id));
		scan = systable_beginscan(rel, ext->registry_pkey, true, snap, 1, key);
	}
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		found = true;
		bf_registry_decode(ext, RelationGetDescr(rel), tup, out);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	UnregisterSnapshot(snap);
	return found;
}

/* ---- reading the registry row through its kept place (bf_track_places.c) ---- */

static bool
registry_key_is(Relation rel, HeapTuple tup, Oid relid, const char *colname)
{
	TupleDesc	desc = RelationGetDescr(rel);
	bool		isnull;

	return DatumGetObjectId(heap_getattr(tup, Anum_bf_registry_tbl, desc, &isnull)) == relid &&
		strcmp(NameStr(*DatumGetName(heap_getattr(tup, Anum_bf_registry_col, desc, &isnull))),
			   colname) == 0;
}

/*
 * The registry row of (relid, colname) that snap sees, through the place
 * kept in *place: BF_KEPT_SAME when it is the version *place last saw
 * (*out untouched: the caller's copy of it is still right), BF_KEPT_NEW
 * when decoded into *out, BF_KEPT_NONE when there is none.
 */
BfFetchKept
bf_registry_fetch_kept(const BfExt *ext, BfRowPlace *place, Oid relid,
					   const char *colname, Snapshot snap, RegRow *out)
{
	Relation	rel = table_open(ext->registry_relid, AccessShareLock);
	Buffer		buf;
	HeapTupleData tup;
	HeapTuple	copy = NULL;
	bool		same = false;

	if (bf_place_fetch(rel, &place->root, snap, &buf, &tup))
	{
		if (registry_key_is(rel, &tup, relid, colname))
		{
			same = ItemPointerEquals(&tup.t_self, &place->seen) &&
				HeapTupleHeaderGetXmin(tup.t_data) == place->seen_xmin;
			if (!same)
				copy = heap_copytuple(&tup);
		}
		UnlockReleaseBuffer(buf);
	}
	if (copy)
	{
		bf_registry_decode(ext, RelationGetDescr(rel), copy, out);
		heap_freetuple(copy);
		/* a malformed header: the index fetch below says so */
		if (out->malformed)
			copy = NULL;
	}
	if (!same && copy == NULL)
	{
		if (!bf_registry_fetch(ext, 0, relid, colname, false, out))
		{
			ItemPointerSetInvalid(&place->root);
			ItemPointerSetInvalid(&place->seen);
			table_close(rel, NoLock);
			return BF_KEPT_NONE;
		}
		bf_place_root(rel, &out->tid, &place->root);
	}
	table_close(rel, NoLock);
	if (same)
		return BF_KEPT_SAME;
	place->seen = out->tid;
	place->seen_xmin = out->xmin;
	return BF_KEPT_NEW;
}

/*
 * The attribute number, type and collation recorded for row id, false if
 * none is recorded (a restored database derives them at its first DDL).
 */
bool
bf_registry_attnum(const BfExt *ext, int64 id, AttrNumber *attnum, Oid *typid,
				   Oid *collid)
{
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	HeapTuple	tup;
	bool		found = false;
	Snapshot	snap = registry_snapshot(false);

	rel = table_open(ext->registry_attnum_relid, AccessShareLock);
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
	scan = systable_beginscan(rel, ext->registry_attnum_pkey, true, snap, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d;

		found = true;
		*attnum = DatumGetInt16(heap_getattr(tup, 2, desc, &isnull));
		d = heap_getattr(tup, 3, desc, &isnull);
		*typid = isnull ? InvalidOid : DatumGetObjectId(d);
		d = heap_getattr(tup, 4, desc, &isnull);
		*collid = isnull ? InvalidOid : DatumGetObjectId(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	UnregisterSnapshot(snap);
	return found;
}

/* ---- the filter of a registry row ---- */

/*
 * A large filter is stored out of line, and detoasting it costs ~1 ms per
 * MB, so it is read through the backend's cache of detoasted filters
 * (bf_cache.c) with the row's version: the version comes from a sequence
 * and changes with every write of the filter by the extension, so a TOAST
 * pointer and a version never name other bytes than those first read.  (A
 * 1.0 registry has no version column: the cache checks the value itself.)
 */
static int64
row_version(const RegRow *r)
{
	return r->has_version ? r->version : -1;
}

/*
 * The filter of r if it is in line or already in the cache (no detoast of
 * a large value); false otherwise.  Valid until the current memory context
 * is reset.
 */
bool
bf_registry_filter_cached(RegRow *r, BfFilter *f)
{
	const BfFilter *cached;

	if (!VARATT_IS_EXTERNAL_ONDISK(r->filter_raw))
	{
		*f = bf_fetch_any(PointerGetDatum(r->filter_raw));
		return true;
	}
	cached = bf_filter_cache_use_if_cached(r->filter_raw, row_version(r));
	if (cached == NULL)
		return false;
	*f = *cached;
	return true;
}

/*
 * The filter of r, detoasted, into *f: valid as long as r->filter_raw for
 * an in-line value, else while the caller holds the cache entry returned
 * (bf_filter_cache_release; NULL for an in-line value).
 */
BfCachedFilter *
bf_registry_filter_hold(RegRow *r, BfFilter *f)
{
	BfCachedFilter *cf;

	if (!VARATT_IS_EXTERNAL_ONDISK(r->filter_raw))
	{
		*f = bf_fetch_any(PointerGetDatum(r->filter_raw));
		return NULL;
	}
	cf = bf_filter_cache_get(r->filter_raw, row_version(r));
	*f = *bf_cached_filter(cf);
	return cf;
}

/* the error of a lookup or a change of a column that has no filter */
void
bf_not_tracked(Oid relid, const char *colname)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("column \"%s\" of table \"%s\" is not tracked",
					colname, get_rel_name(relid)),
			 errhint("Call bf_track('%s', '%s') to create its filter.",
					 bf_qualified_rel(relid), colname)));
}
