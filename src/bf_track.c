/*-------------------------------------------------------------------------
 *
 * bf_track.c
 *	  Tracked filters: bf_track, bf_untrack, bf_rebuild, bf_might_contain,
 *	  bf_tracked_filter, the statistics behind the bf_tracked view, the DDL
 *	  event trigger that keeps the registry consistent, and the access to
 *	  the registry table (@extschema@.bf_registry) they share with the sync
 *	  trigger of bf_trigger.c.
 *
 * Management functions run their SQL through SPI as the owner of the
 * registry (like the RI triggers run as the table owner), under the
 * search_path "pg_catalog, pg_temp", with every name of the extension
 * schema-qualified and every identifier quoted.  Lookups read the registry
 * directly through its indexes and keep the detoasted filters per backend,
 * keyed by their TOAST pointer, so a lookup costs an index probe and k bit
 * tests however large the filter is.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include <math.h>

#include "access/detoast.h"
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/index.h"
#include "commands/defrem.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "bf_am.h"

/* bf_funcs.c */
extern Datum bf_create(PG_FUNCTION_ARGS);
extern Datum bf_index_filter(PG_FUNCTION_ARGS);

/* seconds between progress NOTICEs while reading a table */
#define BF_PROGRESS_SECS 5

/* the NULL-capacity rule: max(BF_MIN_CAPACITY, BF_GROWTH * rows) */
#define BF_MIN_CAPACITY 1000
#define BF_GROWTH		2

/* ---- schema, SPI context ---- */

/* the schema of the extension: that of the calling SQL function */
Oid
bf_ext_namespace(Oid fn_oid)
{
	Oid			nsp = get_func_namespace(fn_oid);

	if (!OidIsValid(nsp))
		elog(ERROR, "cache lookup failed for function %u", fn_oid);
	return nsp;
}

static Oid
registry_relid(Oid nsp, const char *relname)
{
	Oid			relid = get_relname_relid(relname, nsp);

	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter registry table \"%s\" is missing", relname),
				 errhint("Reinstall the extension.")));
	return relid;
}

/* the OID of the bloomfilter type in the extension's schema */
Oid
bf_type_oid(Oid nsp)
{
	Oid			typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
										CStringGetDatum("bloomfilter"),
										ObjectIdGetDatum(nsp));

	if (!OidIsValid(typid))
		elog(ERROR, "type bloomfilter not found in schema %u", nsp);
	return typid;
}

static Oid
rel_owner(Oid relid)
{
	HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	return owner;
}

/*
 * Connect to SPI under the safe search_path; with as_owner, also act as the
 * owner of the registry (the caller's rights were checked before).
 */
void
bf_spi_begin(BfSpiContext *cx, Oid fn_oid, bool as_owner)
{
	char	   *nspname;

	cx->nsp = bf_ext_namespace(fn_oid);
	nspname = get_namespace_name(cx->nsp);
	cx->nspname = pstrdup(quote_identifier(nspname));
	cx->registry = psprintf("%s.bf_registry", cx->nspname);
	cx->registry_attnum = psprintf("%s.bf_registry_attnum", cx->nspname);

	GetUserIdAndSecContext(&cx->save_userid, &cx->save_sec_context);
	if (as_owner)
		SetUserIdAndSecContext(rel_owner(registry_relid(cx->nsp, "bf_registry")),
							   cx->save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
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

static char *
qualified_rel(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		elog(ERROR, "cache lookup failed for relation %u", relid);
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  relname);
}

/* run a query with parameters, erroring out unless it returned `expect` */
static void
spi_exec(const char *sql, int nargs, Oid *types, Datum *values,
		 const char *nulls, int expect)
{
	int			rc = SPI_execute_with_args(sql, nargs, types, values, nulls,
										   false, 0);

	if (rc != expect)
		elog(ERROR, "SPI query failed (%d): %s", rc, sql);
}

BfFilter
bf_detoast_copy(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM_COPY(d);
	bf_read_header(f.vl, &f.hdr);
	return f;
}

/*
 * Add every non-NULL value of relid.colname to *f, reading through an SPI
 * cursor with NOTICEs every few seconds.  only: do not descend to
 * inheritance children (partitioned tables are read whole).  Returns the
 * number of rows read.  Must run inside bf_spi_begin.
 */
int64
bf_fill_from_rel(BfSpiContext *cx, BfFilter *f, Oid relid, const char *colname,
				 bool only, const char *what)
{
	AttrNumber	attnum = get_attnum(relid, colname);
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;
	BfAdder		adder;
	char	   *sql;
	SPIPlanPtr	plan;
	Portal		portal;
	int64		nrows = 0;
	TimestampTz last = GetCurrentTimestamp();
	char	   *relname = qualified_rel(relid);

	if (attnum == InvalidAttrNumber)
		elog(ERROR, "column \"%s\" of relation %u does not exist", colname, relid);
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);
	bf_adder_init(&adder, f, &ti);

	sql = psprintf("SELECT %s FROM %s%s", quote_identifier(colname),
				   only ? "ONLY " : "", relname);
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", sql);
	/* not read-only: a fresh snapshot, taken after the caller locked the table */
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 10000);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			Datum		v = SPI_getbinval(SPI_tuptable->vals[i],
										  SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				bf_adder_add(&adder, v);
		}
		nrows += SPI_processed;
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
		if (TimestampDifferenceExceeds(last, GetCurrentTimestamp(),
									   BF_PROGRESS_SECS * 1000))
		{
			last = GetCurrentTimestamp();
			ereport(NOTICE,
					(errmsg("%s: read " INT64_FORMAT " rows of %s so far",
							what, nrows, relname)));
		}
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	bf_adder_finish(&adder);
	return nrows;
}

/* ---- triggers ---- */

static const char *const trigger_suffixes[] = BF_TRIGGER_SUFFIXES;

/* the OID of nsp.bf_track_sync() */
static Oid
sync_function_oid(BfSpiContext *cx)
{
	List	   *name = list_make2(makeString(get_namespace_name(cx->nsp)),
								  makeString("bf_track_sync"));

	return LookupFuncName(name, 0, NULL, false);
}

/* create the four sync triggers of registry row id on relid */
void
bf_install_triggers(BfSpiContext *cx, int64 id, Oid relid)
{
	char	   *rel = qualified_rel(relid);
	static const char *const events[] = {
		"INSERT", "UPDATE", "DELETE", "TRUNCATE"
	};
	static const char *const referencing[] = {
		"REFERENCING NEW TABLE AS bf_new", "REFERENCING NEW TABLE AS bf_new",
		"REFERENCING OLD TABLE AS bf_old", ""
	};

	for (int i = 0; i < 4; i++)
	{
		char	   *sql = psprintf("CREATE TRIGGER bf_sync_" INT64_FORMAT "_%s AFTER %s ON %s %s "
								   "FOR EACH STATEMENT EXECUTE FUNCTION %s.bf_track_sync('" INT64_FORMAT "')",
								   id, trigger_suffixes[i], events[i], rel,
								   referencing[i], cx->nspname, id);

		spi_exec(sql, 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	}
}

/*
 * Drop the sync triggers of registry row id: all of them, or (stale_only)
 * those on relations that are no longer the tracked table or one of its
 * partitions.
 */
static void
drop_triggers(BfSpiContext *cx, int64 id, bool stale_only)
{
	Oid			types[3] = {OIDOID, TEXTOID, INT8OID};
	Datum		values[3];
	char	   *pattern = psprintf("^bf_sync_" INT64_FORMAT "_(ins|upd|del|trunc)$", id);
	char	   *sql;
	uint64		n;
	Oid		   *rels;
	char	  **names;

	values[0] = ObjectIdGetDatum(sync_function_oid(cx));
	values[1] = CStringGetTextDatum(pattern);
	values[2] = Int64GetDatum(id);
	sql = psprintf("SELECT t.tgrelid, t.tgname::text FROM pg_catalog.pg_trigger t "
				   "WHERE t.tgfoid = $1 AND t.tgname ~ $2 %s",
				   stale_only ?
				   psprintf("AND NOT EXISTS (SELECT 1 FROM %s r WHERE r.id = $3 AND "
							"(r.tbl = t.tgrelid OR t.tgrelid IN "
							"(SELECT p.relid FROM pg_catalog.pg_partition_tree(r.tbl) p)))",
							cx->registry) :
				   "AND $3 IS NOT NULL");
	spi_exec(sql, 3, types, values, NULL, SPI_OK_SELECT);
	n = SPI_processed;
	rels = palloc(sizeof(Oid) * (n + 1));
	names = palloc(sizeof(char *) * (n + 1));
	for (uint64 i = 0; i < n; i++)
	{
		bool		isnull;

		rels[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
												 SPI_tuptable->tupdesc, 1, &isnull));
		names[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
	}
	for (uint64 i = 0; i < n; i++)
		spi_exec(psprintf("DROP TRIGGER IF EXISTS %s ON %s",
						  quote_identifier(names[i]), qualified_rel(rels[i])),
				 0, NULL, NULL, NULL, SPI_OK_UTILITY);
}

/* ---- checks ---- */

static void
check_owner(Oid relid)
{
	bool		ok = bf_rel_ownercheck(relid, GetUserId());

	if (!ok)
		aclcheck_error(ACLCHECK_NOT_OWNER,
					   get_relkind_objtype(get_rel_relkind(relid)),
					   get_rel_name(relid));
}

/* the filter reveals which values exist: as sensitive as the column */
static void
check_select(Oid relid, const char *colname, AttrNumber attnum)
{
	Oid			userid = GetUserId();

	if (pg_class_aclcheck(relid, userid, ACL_SELECT) != ACLCHECK_OK &&
		pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for column %s of table %s",
						quote_identifier(colname), get_rel_name(relid)),
				 errdetail("The filter of a tracked column reveals which values the column holds, so reading it requires SELECT on the column.")));
}

static void
check_args_not_null(FunctionCallInfo fcinfo, const char *fname)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: the table and the column must not be NULL", fname)));
}

/* the attribute number of a user column, or a clear error */
static AttrNumber
user_column(Oid relid, const char *colname)
{
	AttrNumber	attnum = get_attnum(relid, colname);

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						colname, get_rel_name(relid))));
	if (attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot track system column \"%s\"", colname)));
	return attnum;
}

/*
 * bf_track and bf_rebuild read the table with a fresh snapshot after
 * locking it; a transaction snapshot taken before the lock could miss rows
 * committed meanwhile, i.e. give false negatives.
 */
static void
check_read_committed(const char *fname)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("%s must run at isolation level READ COMMITTED", fname),
				 errdetail("Under REPEATABLE READ or SERIALIZABLE the table would be read with a snapshot taken before it was locked, missing rows committed meanwhile."),
				 errhint("Run it in its own transaction or at READ COMMITTED.")));
}

static void
not_tracked(Oid relid, const char *colname)
{
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("column \"%s\" of table \"%s\" is not tracked",
					colname, get_rel_name(relid)),
			 errhint("Call bf_track('%s', '%s') to create its filter.",
					 qualified_rel(relid), colname)));
}

/* NULL capacity: max(1000, 2 x rows now), rows counted exactly */
static int64
auto_capacity(Oid relid, bool only)
{
	char	   *sql = psprintf("SELECT pg_catalog.count(*) FROM %s%s",
							   only ? "ONLY " : "", qualified_rel(relid));
	bool		isnull;
	int64		rows;

	spi_exec(sql, 0, NULL, NULL, NULL, SPI_OK_SELECT);
	rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									   SPI_tuptable->tupdesc, 1, &isnull));
	return Max((int64) BF_MIN_CAPACITY, BF_GROWTH * rows);
}

static struct varlena *
new_filter(int64 capacity, double fpr)
{
	return (struct varlena *)
		DatumGetPointer(DirectFunctionCall3(bf_create, Int64GetDatum(capacity),
											Float8GetDatum(fpr), Int64GetDatum(0)));
}

static void
check_capacity_arg(FunctionCallInfo fcinfo, int argno)
{
	if (!PG_ARGISNULL(argno) && PG_GETARG_INT64(argno) <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be positive"),
				 errhint("Pass NULL to have it chosen from the size of the table.")));
}

/* ---- method 'index': the filter is a bloomfilter index on the column ---- */

/*
 * The valid single-column bloomfilter index on relid's column attnum
 * (without expressions or a predicate), or InvalidOid.  Looked up rather
 * than stored: REINDEX, ALTER COLUMN TYPE and pg_restore give the index a
 * new OID, and the lookup follows them all.
 */
static Oid
find_bloom_index(Oid relid, AttrNumber attnum)
{
	Oid			amoid = get_index_am_oid("bloomfilter", false);
	Relation	rel = table_open(relid, AccessShareLock);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			result = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);

		if (idx->rd_rel->relam == amoid &&
			idx->rd_index->indnatts == 1 &&
			idx->rd_index->indkey.values[0] == attnum &&
			(idx->rd_rel->relkind == RELKIND_PARTITIONED_INDEX ||
			 idx->rd_index->indisvalid) &&
			RelationGetIndexExpressions(idx) == NIL &&
			RelationGetIndexPredicate(idx) == NIL)
			result = RelationGetRelid(idx);
		index_close(idx, AccessShareLock);
		if (OidIsValid(result))
			break;
	}
	list_free(indexes);
	table_close(rel, AccessShareLock);
	return result;
}

static Oid
tracked_index_or_error(Oid relid, const char *colname)
{
	Oid			idx = find_bloom_index(relid, user_column(relid, colname));

	if (!OidIsValid(idx))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the bloomfilter index of column \"%s\" of table \"%s\" is missing",
						colname, get_rel_name(relid)),
				 errhint("Call bf_untrack and bf_track again to recreate it.")));
	return idx;
}

/*
 * bf_track_index(tbl, col): the index that holds the filter of a column
 * tracked with method 'index' (NULL if there is none); for the view.
 */
PG_FUNCTION_INFO_V1(bf_track_index);
Datum
bf_track_index(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	AttrNumber	attnum;
	Oid			idx;

	if (get_rel_relkind(relid) == '\0')
		PG_RETURN_NULL();
	attnum = get_attnum(relid, colname);
	if (attnum <= 0)
		PG_RETURN_NULL();
	idx = find_bloom_index(relid, attnum);
	if (!OidIsValid(idx))
		PG_RETURN_NULL();
	PG_RETURN_OID(idx);
}

/* CREATE INDEX ... USING bloomfilter for bf_track(method => 'index') */
static Oid
create_bloom_index(Oid relid, const char *colname, bool capacity_given,
				   int64 capacity, double fpr)
{
	Oid			nsp = get_rel_namespace(relid);
	char	   *name = ChooseRelationName(get_rel_name(relid), colname, "bf", nsp, false);
	StringInfoData opts;
	char		fprbuf[64];

	if (capacity_given && capacity > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity " INT64_FORMAT " is too large for method 'index'", capacity),
				 errdetail("The index's capacity option is at most %d.", PG_INT32_MAX)));
	snprintf(fprbuf, sizeof(fprbuf), "%.17g", fpr);
	initStringInfo(&opts);
	appendStringInfo(&opts, "fpr = %s", fprbuf);
	if (capacity_given)
		appendStringInfo(&opts, ", capacity = " INT64_FORMAT, capacity);
	spi_exec(psprintf("CREATE INDEX %s ON %s USING bloomfilter (%s) WITH (%s)",
					  quote_identifier(name), qualified_rel(relid),
					  quote_identifier(colname), opts.data),
			 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	return get_relname_relid(name, nsp);
}

/*
 * The indexes that hold bits: the index itself, or the leaf indexes of a
 * partitioned one (pg_partition_tree lists nothing for a plain index).
 */
#define BF_LEAF_INDEXES \
	"SELECT p.relid FROM pg_catalog.pg_partition_tree($1) p WHERE p.isleaf " \
	"UNION ALL SELECT $1::pg_catalog.regclass WHERE pg_catalog.pg_partition_root($1) IS NULL"

/* capacity of the index's filter (of its first partition when partitioned) */
static int64
index_capacity(BfSpiContext *cx, Oid idx)
{
	Oid			types[1] = {OIDOID};
	Datum		values[1] = {ObjectIdGetDatum(idx)};
	bool		isnull;
	Datum		d;

	spi_exec(psprintf("SELECT i.capacity FROM (" BF_LEAF_INDEXES ") p, "
					  "%s.bf_index_info(p.relid) i ORDER BY p.relid LIMIT 1",
					  cx->nspname),
			 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return BF_MIN_CAPACITY;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? BF_MIN_CAPACITY : DatumGetInt64(d);
}

/* the attribute number, type and collation a new registry row follows */
static void
insert_registry_attnum(BfSpiContext *cx, int64 id, AttrNumber attnum, Oid typid,
					   Oid collid)
{
	Oid			types[4] = {INT8OID, INT2OID, OIDOID, OIDOID};
	Datum		values[4];

	values[0] = Int64GetDatum(id);
	values[1] = Int16GetDatum(attnum);
	values[2] = ObjectIdGetDatum(typid);
	values[3] = ObjectIdGetDatum(collid);
	spi_exec(psprintf("INSERT INTO %s (id, attnum, atttypid, attcollation) VALUES ($1, $2, $3, $4)",
					  cx->registry_attnum),
			 4, types, values, NULL, SPI_OK_INSERT);
}

/* ---- bf_track ---- */

PG_FUNCTION_INFO_V1(bf_track);
Datum
bf_track(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname;
	double		fpr = PG_ARGISNULL(3) ? 0.01 : PG_GETARG_FLOAT8(3);
	char	   *method = PG_ARGISNULL(4) ? "index" : text_to_cstring(PG_GETARG_TEXT_PP(4));
	bool		use_index;
	char		relkind;
	AttrNumber	attnum;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;
	BfSpiContext cx;
	int64		capacity;
	int64		id;
	BfFilter	f;
	bool		isnull;
	bool		only;

	check_args_not_null(fcinfo, "bf_track");
	relid = PG_GETARG_OID(0);
	colname = NameStr(*PG_GETARG_NAME(1));

	use_index = (strcmp(method, "index") == 0);
	if (!use_index && strcmp(method, "trigger") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown bf_track method \"%s\"", method),
				 errhint("The methods are 'index' (a bloomfilter index, for busy tables) and 'trigger' (a filter value kept by statement triggers).")));
	check_capacity_arg(fcinfo, 2);
	check_read_committed("bf_track");
	check_owner(relid);
	relkind = get_rel_relkind(relid);
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errdetail("Only tables and partitioned tables can be tracked.")));
	if (get_rel_relispartition(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot track \"%s\": it is a partition", get_rel_name(relid)),
				 errdetail("Rows inserted through the partitioned table do not fire the statement triggers of its partitions."),
				 errhint("Track the partitioned table at the root instead.")));
	only = (relkind == RELKIND_RELATION);
	attnum = user_column(relid, colname);
	/* fails early for types that cannot be hashed */
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);

	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);

	/*
	 * Block writers of the table (and its partitions) from now to commit and
	 * wait for those in flight: the triggers exist before the table is
	 * read, so every row is either read below or synced by a trigger.
	 */
	spi_exec(psprintf("LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE", qualified_rel(relid)),
			 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	/* one bf_track at a time picks the next id */
	spi_exec(psprintf("LOCK TABLE %s IN SHARE ROW EXCLUSIVE MODE", cx.registry),
			 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	{
		Oid			types[2] = {OIDOID, NAMEOID};
		Datum		values[2] = {ObjectIdGetDatum(relid), PG_GETARG_DATUM(1)};

		spi_exec(psprintf("SELECT 1 FROM %s WHERE tbl = $1 AND col = $2", cx.registry),
				 2, types, values, NULL, SPI_OK_SELECT);
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("column \"%s\" of table \"%s\" is already tracked",
							colname, get_rel_name(relid)),
					 errhint("Use bf_rebuild to rebuild its filter, or bf_untrack first.")));
	}
	spi_exec(psprintf("SELECT COALESCE(pg_catalog.max(id), 0) + 1 FROM %s", cx.registry),
			 0, NULL, NULL, NULL, SPI_OK_SELECT);
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	if (use_index)
	{
		/*
		 * The server keeps the index current on every INSERT, COPY and
		 * UPDATE; the registry row only records that the column is tracked
		 * (the index is found again by bf_might_contain).
		 */
		Oid			idx = create_bloom_index(relid, colname, !PG_ARGISNULL(2),
											 PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2), fpr);
		Oid			types[5] = {INT8OID, OIDOID, NAMEOID, INT8OID, FLOAT8OID};
		Datum		values[5];

		values[0] = Int64GetDatum(id);
		values[1] = ObjectIdGetDatum(relid);
		values[2] = PG_GETARG_DATUM(1);
		values[3] = Int64GetDatum(index_capacity(&cx, idx));
		values[4] = Float8GetDatum(fpr);
		spi_exec(psprintf("INSERT INTO %s (id, tbl, col, method, capacity, fpr) "
						  "VALUES ($1, $2, $3, 'index', $4, $5)", cx.registry),
				 5, types, values, NULL, SPI_OK_INSERT);
		insert_registry_attnum(&cx, id, attnum, typid, collid);
		bf_spi_end(&cx);
		PG_RETURN_VOID();
	}

	capacity = PG_ARGISNULL(2) ? auto_capacity(relid, only) : PG_GETARG_INT64(2);
	f.vl = new_filter(capacity, fpr);
	bf_read_header(f.vl, &f.hdr);

	bf_install_triggers(&cx, id, relid);
	if (relkind == RELKIND_PARTITIONED_TABLE)
	{
		Oid			types[1] = {OIDOID};
		Datum		values[1] = {ObjectIdGetDatum(relid)};
		uint64		n;
		Oid		   *parts;

		spi_exec("SELECT p.relid FROM pg_catalog.pg_partition_tree($1) p "
				 "JOIN pg_catalog.pg_class c ON c.oid = p.relid "
				 "WHERE p.relid <> $1 AND c.relkind IN ('r', 'p')",
				 1, types, values, NULL, SPI_OK_SELECT);
		n = SPI_processed;
		parts = palloc(sizeof(Oid) * (n + 1));
		for (uint64 i = 0; i < n; i++)
			parts[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
													  SPI_tuptable->tupdesc, 1, &isnull));
		for (uint64 i = 0; i < n; i++)
			bf_install_triggers(&cx, id, parts[i]);
	}

	bf_fill_from_rel(&cx, &f, relid, colname, only, "bf_track");

	{
		Oid			types[6] = {INT8OID, OIDOID, NAMEOID, INT8OID, FLOAT8OID, InvalidOid};
		Datum		values[6];
		char	   *sql;

		types[5] = bf_type_oid(cx.nsp);
		values[0] = Int64GetDatum(id);
		values[1] = ObjectIdGetDatum(relid);
		values[2] = PG_GETARG_DATUM(1);
		values[3] = Int64GetDatum(capacity);
		values[4] = Float8GetDatum(fpr);
		values[5] = PointerGetDatum(f.vl);
		sql = psprintf("INSERT INTO %s (id, tbl, col, method, capacity, fpr, filter) "
					   "VALUES ($1, $2, $3, 'trigger', $4, $5, $6)", cx.registry);
		spi_exec(sql, 6, types, values, NULL, SPI_OK_INSERT);
		insert_registry_attnum(&cx, id, attnum, typid, collid);
	}
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* registry id of (relid, col), locked FOR UPDATE, or not_tracked() */
static int64
lock_registry_row(BfSpiContext *cx, Oid relid, Datum colname, int64 *capacity,
				  double *fpr, bool *use_index)
{
	Oid			types[2] = {OIDOID, NAMEOID};
	Datum		values[2] = {ObjectIdGetDatum(relid), colname};
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;

	spi_exec(psprintf("SELECT id, capacity, fpr, method = 'index' FROM %s WHERE tbl = $1 AND col = $2 FOR UPDATE",
					  cx->registry),
			 2, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		not_tracked(relid, NameStr(*DatumGetName(colname)));
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	if (capacity)
		*capacity = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	if (fpr)
		*fpr = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
	if (use_index)
		*use_index = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
	return DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
}

/* ---- bf_untrack ---- */

PG_FUNCTION_INFO_V1(bf_untrack);
Datum
bf_untrack(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	BfSpiContext cx;
	int64		id;
	Oid			types[1] = {INT8OID};
	Datum		values[1];
	bool		use_index;

	check_owner(relid);
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	id = lock_registry_row(&cx, relid, PG_GETARG_DATUM(1), NULL, NULL, &use_index);
	if (use_index)
	{
		Oid			idx = find_bloom_index(relid,
										   user_column(relid, NameStr(*PG_GETARG_NAME(1))));

		if (OidIsValid(idx))
			spi_exec(psprintf("DROP INDEX %s", qualified_rel(idx)),
					 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	}
	else
		drop_triggers(&cx, id, false);
	values[0] = Int64GetDatum(id);
	spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx.registry),
			 1, types, values, NULL, SPI_OK_DELETE);
	spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx.registry_attnum),
			 1, types, values, NULL, SPI_OK_DELETE);
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* ---- bf_rebuild ---- */

PG_FUNCTION_INFO_V1(bf_rebuild);
Datum
bf_rebuild(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname;
	BfSpiContext cx;
	int64		id;
	int64		capacity;
	double		fpr;
	BfFilter	f;
	bool		only;
	bool		use_index;

	check_args_not_null(fcinfo, "bf_rebuild");
	relid = PG_GETARG_OID(0);
	colname = NameStr(*PG_GETARG_NAME(1));
	check_capacity_arg(fcinfo, 2);
	check_read_committed("bf_rebuild");
	check_owner(relid);
	only = (get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE);

	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);

	/*
	 * SHARE: writers wait (before their sync trigger could race with the
	 * swap), readers and bf_might_contain go on with the old filter.
	 */
	spi_exec(psprintf("LOCK TABLE %s IN SHARE MODE", qualified_rel(relid)),
			 0, NULL, NULL, NULL, SPI_OK_UTILITY);
	id = lock_registry_row(&cx, relid, PG_GETARG_DATUM(1), &capacity, &fpr, &use_index);
	if (!PG_ARGISNULL(3))
		fpr = PG_GETARG_FLOAT8(3);
	if (use_index)
	{
		/*
		 * REINDEX builds the new filter and swaps it in at commit; it holds
		 * an exclusive lock on the index meanwhile, so lookups wait for it.
		 */
		Oid			idx = tracked_index_or_error(relid, colname);
		Oid			types[3] = {INT8OID, INT8OID, FLOAT8OID};
		Datum		values[3];
		char		fprbuf[64];

		snprintf(fprbuf, sizeof(fprbuf), "%.17g", fpr);
		if (!PG_ARGISNULL(2) && PG_GETARG_INT64(2) > PG_INT32_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("capacity " INT64_FORMAT " is too large for method 'index'",
							PG_GETARG_INT64(2)),
					 errdetail("The index's capacity option is at most %d.", PG_INT32_MAX)));
		/* each partition's index on its own: REINDEX of a partitioned index
		 * cannot run inside the function's transaction */
		{
			Oid			ptypes[1] = {OIDOID};
			Datum		pvalues[1] = {ObjectIdGetDatum(idx)};
			uint64		nleaves;
			Oid		   *leaves;
			bool		isnull;

			spi_exec(BF_LEAF_INDEXES, 1, ptypes, pvalues, NULL, SPI_OK_SELECT);
			nleaves = SPI_processed;
			leaves = palloc(sizeof(Oid) * (nleaves + 1));
			for (uint64 i = 0; i < nleaves; i++)
				leaves[i] = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 1, &isnull));
			for (uint64 i = 0; i < nleaves; i++)
			{
				spi_exec(PG_ARGISNULL(2) ?
						 psprintf("ALTER INDEX %s SET (fpr = %s, capacity = 0)",
								  qualified_rel(leaves[i]), fprbuf) :
						 psprintf("ALTER INDEX %s SET (fpr = %s, capacity = " INT64_FORMAT ")",
								  qualified_rel(leaves[i]), fprbuf, PG_GETARG_INT64(2)),
						 0, NULL, NULL, NULL, SPI_OK_UTILITY);
				spi_exec(psprintf("REINDEX INDEX %s", qualified_rel(leaves[i])),
						 0, NULL, NULL, NULL, SPI_OK_UTILITY);
			}
		}
		values[0] = Int64GetDatum(id);
		values[1] = Int64GetDatum(index_capacity(&cx, idx));
		values[2] = Float8GetDatum(fpr);
		spi_exec(psprintf("UPDATE %s SET capacity = $2, fpr = $3, deleted_since_rebuild = 0 "
						  "WHERE id = $1", cx.registry),
				 3, types, values, NULL, SPI_OK_UPDATE);
		bf_spi_end(&cx);
		PG_RETURN_VOID();
	}
	capacity = PG_ARGISNULL(2) ? auto_capacity(relid, only) : PG_GETARG_INT64(2);
	f.vl = new_filter(capacity, fpr);
	bf_read_header(f.vl, &f.hdr);
	bf_fill_from_rel(&cx, &f, relid, colname, only, "bf_rebuild");
	{
		Oid			types[4] = {INT8OID, 0, INT8OID, FLOAT8OID};
		Datum		values[4];

		types[1] = bf_type_oid(cx.nsp);
		values[0] = Int64GetDatum(id);
		values[1] = PointerGetDatum(f.vl);
		values[2] = Int64GetDatum(capacity);
		values[3] = Float8GetDatum(fpr);
		spi_exec(psprintf("UPDATE %s SET filter = $2, capacity = $3, fpr = $4, "
						  "deleted_since_rebuild = 0 WHERE id = $1", cx.registry),
				 4, types, values, NULL, SPI_OK_UPDATE);
	}
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* ---- reading the registry directly, and the per-backend filter cache ---- */

/*
 * Fetch the registry row of id (when relid is invalid) or of (relid, col)
 * through an index, false if there is none.  With the active snapshot, or
 * with the latest one (latest): the sync trigger must compare against the
 * current filter, not an older one a REPEATABLE READ snapshot still sees.
 */
bool
bf_registry_fetch(Oid nsp, int64 id, Oid relid, const char *colname, bool latest,
				  RegRow *out)
{
	Oid			regrel = registry_relid(nsp, "bf_registry");
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key[2];
	NameData	nd;
	HeapTuple	tup;
	bool		found = false;
	Snapshot	snap;

	if (latest)
		snap = RegisterSnapshot(GetLatestSnapshot());
	else
		snap = RegisterSnapshot(ActiveSnapshotSet() ? GetActiveSnapshot() :
								GetTransactionSnapshot());

	rel = table_open(regrel, AccessShareLock);
	if (OidIsValid(relid))
	{
		namestrcpy(&nd, colname);
		ScanKeyInit(&key[0], Anum_bf_registry_tbl, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(relid));
		ScanKeyInit(&key[1], Anum_bf_registry_col, BTEqualStrategyNumber,
					F_NAMEEQ, NameGetDatum(&nd));
		scan = systable_beginscan(rel, registry_relid(nsp, "bf_registry_tbl_col_key"),
								  true, snap, 2, key);
	}
	else
	{
		ScanKeyInit(&key[0], Anum_bf_registry_id, BTEqualStrategyNumber,
					F_INT8EQ, Int64GetDatum(id));
		scan = systable_beginscan(rel, registry_relid(nsp, "bf_registry_pkey"),
								  true, snap, 1, key);
	}
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		isnull;
		Datum		d;

		found = true;
		out->id = DatumGetInt64(heap_getattr(tup, Anum_bf_registry_id, desc, &isnull));
		out->tbl = DatumGetObjectId(heap_getattr(tup, Anum_bf_registry_tbl, desc, &isnull));
		namestrcpy(&out->col,
				   NameStr(*DatumGetName(heap_getattr(tup, Anum_bf_registry_col, desc, &isnull))));
		out->use_index = strcmp(TextDatumGetCString(heap_getattr(tup, Anum_bf_registry_method,
																desc, &isnull)), "index") == 0;
		d = heap_getattr(tup, Anum_bf_registry_filter, desc, &isnull);
		/* a TOAST pointer or a small in-line value: cheap to copy */
		out->filter_raw = isnull ? NULL :
			(struct varlena *) DatumGetPointer(datumCopy(d, false, -1));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	UnregisterSnapshot(snap);
	return found;
}

#define TRACK_CACHE_SIZE 8

typedef struct TrackCacheEntry
{
	bool		used;
	int64		id;
	varatt_external ext;
	uint64		lastuse;
	MemoryContext mcxt;
	BfFilter	filter;
} TrackCacheEntry;

static TrackCacheEntry track_cache[TRACK_CACHE_SIZE];
static uint64 track_clock;

/*
 * The filter of a registry row, detoasted.  An out-of-line value is kept
 * per backend keyed by its TOAST pointer: every UPDATE of the registry row
 * stores a new TOAST value, so an unchanged pointer means unchanged bytes.
 * A small in-line value is simply read each time.
 */
/*
 * The filter of r if it is in-line or already cached (no detoast of a large
 * value); false otherwise.
 */
bool
bf_registry_filter_cached(RegRow *r, BfFilter *f)
{
	varatt_external ext;

	if (!VARATT_IS_EXTERNAL_ONDISK(r->filter_raw))
	{
		*f = bf_fetch(PointerGetDatum(r->filter_raw));
		return true;
	}
	VARATT_EXTERNAL_GET_POINTER(ext, r->filter_raw);
	for (int i = 0; i < TRACK_CACHE_SIZE; i++)
	{
		TrackCacheEntry *e = &track_cache[i];

		if (e->used && e->id == r->id && memcmp(&e->ext, &ext, sizeof(ext)) == 0)
		{
			e->lastuse = ++track_clock;
			*f = e->filter;
			return true;
		}
	}
	return false;
}

BfFilter
bf_registry_filter(RegRow *r)
{
	varatt_external ext;
	TrackCacheEntry *volatile victim = NULL;
	MemoryContext old;

	if (!VARATT_IS_EXTERNAL_ONDISK(r->filter_raw))
		return bf_fetch(PointerGetDatum(r->filter_raw));

	VARATT_EXTERNAL_GET_POINTER(ext, r->filter_raw);
	track_clock++;
	for (int i = 0; i < TRACK_CACHE_SIZE; i++)
	{
		TrackCacheEntry *e = &track_cache[i];

		if (e->used && e->id == r->id && memcmp(&e->ext, &ext, sizeof(ext)) == 0)
		{
			e->lastuse = track_clock;
			return e->filter;
		}
	}
	/* replace this row's old version, else a free slot, else the LRU one */
	for (int i = 0; i < TRACK_CACHE_SIZE && victim == NULL; i++)
		if (track_cache[i].used && track_cache[i].id == r->id)
			victim = &track_cache[i];
	for (int i = 0; i < TRACK_CACHE_SIZE && victim == NULL; i++)
		if (!track_cache[i].used)
			victim = &track_cache[i];
	if (victim == NULL)
	{
		victim = &track_cache[0];
		for (int i = 1; i < TRACK_CACHE_SIZE; i++)
			if (track_cache[i].lastuse < victim->lastuse)
				victim = &track_cache[i];
	}
	if (victim->used)
	{
		MemoryContextDelete(victim->mcxt);
		victim->used = false;
	}
	victim->mcxt = AllocSetContextCreate(TopMemoryContext, "bloomfilter tracked filter",
										 ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(victim->mcxt);
	PG_TRY();
	{
		victim->filter.vl = detoast_attr(r->filter_raw);
		bf_read_header(victim->filter.vl, &victim->filter.hdr);
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(victim->mcxt);
		PG_RE_THROW();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(old);
	victim->id = r->id;
	victim->ext = ext;
	victim->lastuse = track_clock;
	victim->used = true;
	return victim->filter;
}

/* ---- bf_might_contain, bf_tracked_filter ---- */

/*
 * Per-call-site state of bf_might_contain / bf_tracked_filter: how to hash
 * the value, and the last registry probe (after its privilege check) with
 * the snapshot it was made under.  Within one statement the snapshot does
 * not change, so neither can the registry row it sees: the probe is reused
 * until the active snapshot sees other rows (a new statement after a write
 * or a commit, also in a PL/pgSQL loop where the call site survives across
 * statements).
 */
typedef struct LookupCache
{
	Oid			nsp;
	bool		ti_valid;
	BfTypeInfo	ti;

	bool		probe_valid;
	Oid			relid;
	NameData	col;
	Oid			userid;
	/* the snapshot of the probe: what decides which rows it sees */
	CommandId	curcid;
	TransactionId xmin;
	TransactionId xmax;
	uint32		xcnt;
	int32		subxcnt;
	bool		suboverflowed;
	TransactionId *xip;			/* xip, then subxip */
	RegRow		row;			/* filter_raw in fn_mcxt */
} LookupCache;

static LookupCache *
lookup_cache(FunctionCallInfo fcinfo)
{
	LookupCache *c = fcinfo->flinfo->fn_extra;

	if (c == NULL)
	{
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LookupCache));
		c->nsp = bf_ext_namespace(fcinfo->flinfo->fn_oid);
		fcinfo->flinfo->fn_extra = c;
	}
	return c;
}

/*
 * Can the last probe be reused?  Only under a snapshot that sees exactly
 * the same rows: same xmin, xmax, command id and in-progress (sub)xids.
 * The contents are compared, not the pointer: a later statement's snapshot
 * may be allocated at the same address.  store: remember the active one.
 */
static bool
same_snapshot(LookupCache *c, bool store, MemoryContext mcxt)
{
	Snapshot	s;

	if (!ActiveSnapshotSet())
		return false;
	s = GetActiveSnapshot();
	if (s->snapshot_type != SNAPSHOT_MVCC)
		return false;
	if (store)
	{
		c->curcid = s->curcid;
		c->xmin = s->xmin;
		c->xmax = s->xmax;
		c->xcnt = s->xcnt;
		c->subxcnt = s->subxcnt;
		c->suboverflowed = s->suboverflowed;
		if (c->xip)
			pfree(c->xip);
		c->xip = MemoryContextAlloc(mcxt, sizeof(TransactionId) * (s->xcnt + s->subxcnt + 1));
		memcpy(c->xip, s->xip, sizeof(TransactionId) * s->xcnt);
		memcpy(c->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt);
		return true;
	}
	return c->curcid == s->curcid && c->xmin == s->xmin && c->xmax == s->xmax &&
		c->xcnt == s->xcnt && c->subxcnt == s->subxcnt &&
		c->suboverflowed == s->suboverflowed &&
		memcmp(c->xip, s->xip, sizeof(TransactionId) * s->xcnt) == 0 &&
		memcmp(c->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt) == 0;
}

/* the registry row of (tbl, col) after the privilege check, or an error */
static void
lookup_tracked(FunctionCallInfo fcinfo, LookupCache *c, RegRow *r)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	RegRow		fresh;

	if (c->probe_valid && c->relid == relid && c->userid == GetUserId() &&
		strcmp(NameStr(c->col), colname) == 0 &&
		same_snapshot(c, false, NULL))
	{
		*r = c->row;
		return;
	}

	c->probe_valid = false;
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_select(relid, colname, user_column(relid, colname));
	if (!bf_registry_fetch(c->nsp, 0, relid, colname, false, &fresh))
		not_tracked(relid, colname);
	if (fresh.use_index)
		fresh.index = tracked_index_or_error(relid, colname);
	else if (fresh.filter_raw == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the filter of column \"%s\" of table \"%s\" is missing",
						colname, get_rel_name(relid)),
				 errhint("Call bf_rebuild('%s', '%s').", qualified_rel(relid), colname)));

	/* keep the probe for the rest of the statement */
	if (c->row.filter_raw)
		pfree(c->row.filter_raw);
	c->row = fresh;
	if (fresh.filter_raw)
	{
		c->row.filter_raw = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt,
											   VARSIZE_ANY(fresh.filter_raw));
		memcpy(c->row.filter_raw, fresh.filter_raw, VARSIZE_ANY(fresh.filter_raw));
	}
	c->relid = relid;
	namestrcpy(&c->col, colname);
	c->userid = GetUserId();
	c->probe_valid = same_snapshot(c, true, fcinfo->flinfo->fn_mcxt);
	*r = c->row;
}

PG_FUNCTION_INFO_V1(bf_might_contain);
Datum
bf_might_contain(PG_FUNCTION_ARGS)
{
	LookupCache *c = lookup_cache(fcinfo);
	RegRow		r;
	BfFilter	f;
	Datum		value = PG_GETARG_DATUM(2);
	uint64		h;

	lookup_tracked(fcinfo, c, &r);
	if (!c->ti_valid)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 2);

		if (!OidIsValid(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the type of the value to look up")));
		bf_typeinfo_init(&c->ti, argtype, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
		c->ti_valid = true;
	}
	if (r.use_index)
		PG_RETURN_BOOL(bf_index_might_contain(r.index, &c->ti, value));
	f = bf_registry_filter(&r);
	if (f.hdr.family == BF_FAMILY_NONE)
		PG_RETURN_BOOL(false);	/* nothing was ever added */
	if (c->ti.family == BF_FAMILY_RECORD)
		bf_record_prepare(&c->ti, value);
	bf_check_family(&f.hdr, NULL, &c->ti, false);
	h = bf_hash_datum(&c->ti, value, f.hdr.seed);
	PG_RETURN_BOOL(bloom_test_hash(BF_BITS(f.vl), f.hdr.nblocks, f.hdr.nhashes, h));
}

PG_FUNCTION_INFO_V1(bf_tracked_filter);
Datum
bf_tracked_filter(PG_FUNCTION_ARGS)
{
	LookupCache *c = lookup_cache(fcinfo);
	RegRow		r;

	lookup_tracked(fcinfo, c, &r);
	if (r.use_index)
		PG_RETURN_DATUM(DirectFunctionCall1(bf_index_filter, ObjectIdGetDatum(r.index)));
	PG_RETURN_POINTER(PG_DETOAST_DATUM_COPY(PointerGetDatum(r.filter_raw)));
}

/* ---- statistics for the bf_tracked view ---- */

PG_FUNCTION_INFO_V1(bf_track_stats);
Datum
bf_track_stats(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch(PG_GETARG_DATUM(0));
	uint8	   *bits = BF_BITS(f.vl);
	double		m = (double) f.hdr.nblocks * BLOOM_BLOCK_BITS;
	uint64		set = 0;
	double		fpr_sum = 0.0;
	double		fill;
	double		card;
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {false, false, false};

	/*
	 * A lookup probes k bits of one block, so the expected false-positive
	 * rate is the mean over blocks of (bits set in the block / 512)^k.
	 */
	for (uint64 b = 0; b < f.hdr.nblocks; b++)
	{
		uint64		c = bloom_popcount(bits + b * BLOOM_BLOCK_BYTES, BLOOM_BLOCK_BYTES);

		set += c;
		if (c > 0)
			fpr_sum += pow((double) c / BLOOM_BLOCK_BITS, f.hdr.nhashes);
	}
	fill = m > 0 ? (double) set / m : 0.0;
	/* the usual estimate n = -(m/k) ln(1 - X/m) */
	card = fill >= 1.0 ? get_float8_infinity() :
		-(m / f.hdr.nhashes) * log1p(-fill);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	values[0] = Float8GetDatum(card);
	values[1] = Float8GetDatum(fill);
	values[2] = Float8GetDatum(f.hdr.nblocks > 0 ? fpr_sum / f.hdr.nblocks : 0.0);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---- DDL upkeep (event trigger on ddl_command_end) ---- */

static uint64
select_ids(const char *sql, int nargs, Oid *types, Datum *values,
		   int64 **ids, Oid **rels)
{
	uint64		n;
	bool		isnull;

	spi_exec(sql, nargs, types, values, NULL, SPI_OK_SELECT);
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

/* add the rows of a newly attached partition to the filter of row id */
static void
add_partition_rows(BfSpiContext *cx, int64 id, Oid part)
{
	Oid			types[2] = {INT8OID, 0};
	Datum		values[2];
	bool		isnull;
	BfFilter	f;
	char	   *colname;
	Datum		d;

	types[1] = bf_type_oid(cx->nsp);
	values[0] = Int64GetDatum(id);
	spi_exec(psprintf("SELECT col::text, filter FROM %s WHERE id = $1 FOR UPDATE", cx->registry),
			 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return;
	colname = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull);
	if (isnull)
		return;
	f = bf_detoast_copy(d);
	bf_fill_from_rel(cx, &f, part, colname, true, "bf_track");
	values[1] = PointerGetDatum(f.vl);
	spi_exec(psprintf("UPDATE %s SET filter = $2 WHERE id = $1", cx->registry),
			 2, types, values, NULL, SPI_OK_UPDATE);
}

/* derive the missing attribute numbers from the column names */
static void
fill_attnums(BfSpiContext *cx)
{
	spi_exec(psprintf("INSERT INTO %s (id, attnum, atttypid, attcollation) "
					  "SELECT r.id, a.attnum, a.atttypid, a.attcollation FROM %s r "
					  "JOIN pg_catalog.pg_attribute a ON a.attrelid = r.tbl AND a.attname = r.col "
					  "AND a.attnum > 0 AND NOT a.attisdropped "
					  "WHERE NOT EXISTS (SELECT 1 FROM %s x WHERE x.id = r.id)",
					  cx->registry_attnum, cx->registry, cx->registry_attnum),
			 0, NULL, NULL, NULL, SPI_OK_INSERT);
}

/*
 * Rebuild the filter of registry row id on relid from its rows, with the
 * same capacity and rate, and record the column's new type.  The ALTER
 * TABLE that changed the type still holds its lock on the table.
 */
static void
rebuild_after_type_change(BfSpiContext *cx, int64 id, Oid relid)
{
	Oid			types[3] = {INT8OID, InvalidOid, InvalidOid};
	Datum		values[3];
	bool		isnull;
	HeapTuple	tup;
	TupleDesc	desc;
	char	   *colname;
	int64		capacity;
	double		fpr;
	BfFilter	f;

	values[0] = Int64GetDatum(id);
	spi_exec(psprintf("SELECT col::text, capacity, fpr, method = 'index' FROM %s WHERE id = $1 FOR UPDATE",
					  cx->registry),
			 1, types, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	colname = SPI_getvalue(tup, desc, 1);
	capacity = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
	fpr = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
	/* method 'index': ALTER COLUMN TYPE rebuilt the index itself */
	if (!DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull)))
	{
		f.vl = new_filter(capacity, fpr);
		bf_read_header(f.vl, &f.hdr);
		bf_fill_from_rel(cx, &f, relid, colname,
						 get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE, "bf_track");
		types[1] = bf_type_oid(cx->nsp);
		values[1] = PointerGetDatum(f.vl);
		spi_exec(psprintf("UPDATE %s SET filter = $2 WHERE id = $1", cx->registry),
				 2, types, values, NULL, SPI_OK_UPDATE);
	}
	spi_exec(psprintf("UPDATE %s l SET atttypid = a.atttypid, attcollation = a.attcollation "
					  "FROM %s r, pg_catalog.pg_attribute a "
					  "WHERE l.id = $1 AND r.id = l.id AND a.attrelid = r.tbl AND a.attnum = l.attnum",
					  cx->registry_attnum, cx->registry),
			 1, types, values, NULL, SPI_OK_UPDATE);
}

PG_FUNCTION_INFO_V1(bf_track_ddl);
Datum
bf_track_ddl(PG_FUNCTION_ARGS)
{
	BfSpiContext cx;
	Oid			nsp;
	int64	   *ids;
	Oid		   *rels;
	uint64		n;
	bool		isnull;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_track_ddl must be called as an event trigger")));
	nsp = bf_ext_namespace(fcinfo->flinfo->fn_oid);
	if (!OidIsValid(get_relname_relid("bf_registry", nsp)) ||
		!OidIsValid(get_relname_relid("bf_registry_attnum", nsp)))
		PG_RETURN_VOID();

	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	spi_exec(psprintf("SELECT (SELECT pg_catalog.count(*) FROM %s) + (SELECT pg_catalog.count(*) FROM %s)",
					  cx.registry, cx.registry_attnum),
			 0, NULL, NULL, NULL, SPI_OK_SELECT);
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) == 0)
	{
		bf_spi_end(&cx);
		PG_RETURN_VOID();
	}

	/*
	 * At ddl_command_start only the attribute numbers are derived: a restored
	 * database has none yet, and a RENAME COLUMN about to run needs them.
	 */
	if (strcmp(((EventTriggerData *) fcinfo->context)->event, "ddl_command_start") == 0)
	{
		fill_attnums(&cx);
		bf_spi_end(&cx);
		PG_RETURN_VOID();
	}

	/* dropped tables: forget them (their triggers went with them) */
	spi_exec(psprintf("DELETE FROM %s r WHERE NOT EXISTS "
					  "(SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = r.tbl)", cx.registry),
			 0, NULL, NULL, NULL, SPI_OK_DELETE);
	/* attribute numbers: drop orphans, derive missing ones (after a restore) */
	spi_exec(psprintf("DELETE FROM %s a WHERE NOT EXISTS (SELECT 1 FROM %s r WHERE r.id = a.id)",
					  cx.registry_attnum, cx.registry),
			 0, NULL, NULL, NULL, SPI_OK_DELETE);
	fill_attnums(&cx);
	/* dropped columns: untrack */
	n = select_ids(psprintf("SELECT r.id FROM %s r JOIN %s l ON l.id = r.id "
							"LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = r.tbl AND a.attnum = l.attnum "
							"WHERE a.attrelid IS NULL OR a.attisdropped",
							cx.registry, cx.registry_attnum),
				   0, NULL, NULL, &ids, NULL);
	for (uint64 i = 0; i < n; i++)
	{
		Oid			types[1] = {INT8OID};
		Datum		values[1] = {Int64GetDatum(ids[i])};

		drop_triggers(&cx, ids[i], false);
		spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx.registry),
				 1, types, values, NULL, SPI_OK_DELETE);
		spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx.registry_attnum),
				 1, types, values, NULL, SPI_OK_DELETE);
	}
	/* renamed columns: follow the attribute number */
	spi_exec(psprintf("UPDATE %s r SET col = a.attname FROM %s l, pg_catalog.pg_attribute a "
					  "WHERE l.id = r.id AND a.attrelid = r.tbl AND a.attnum = l.attnum "
					  "AND NOT a.attisdropped AND a.attname <> r.col",
					  cx.registry, cx.registry_attnum),
			 0, NULL, NULL, NULL, SPI_OK_UPDATE);

	/*
	 * A tracked table attached as a partition would miss the rows routed to
	 * it through its new parent (statement triggers fire on the named table
	 * only): refuse the ATTACH.
	 */
	spi_exec(psprintf("SELECT r.tbl::pg_catalog.text, r.col::pg_catalog.text FROM %s r "
					  "JOIN pg_catalog.pg_class c ON c.oid = r.tbl WHERE c.relispartition LIMIT 1",
					  cx.registry),
			 0, NULL, NULL, NULL, SPI_OK_SELECT);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table %s has a tracked column and cannot become a partition",
						SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
				 errdetail("Rows inserted through the partitioned table would not reach its filter."),
				 errhint("Call bf_untrack('%s', '%s') first, and track the partitioned table instead.",
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1),
						 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2))));

	/* ALTER COLUMN TYPE: the values may hash differently now, rebuild */
	n = select_ids(psprintf("SELECT r.id, r.tbl FROM %s r JOIN %s l ON l.id = r.id "
							"JOIN pg_catalog.pg_attribute a ON a.attrelid = r.tbl AND a.attnum = l.attnum "
							"AND NOT a.attisdropped "
							"WHERE (a.atttypid, a.attcollation) IS DISTINCT FROM (l.atttypid, l.attcollation)",
							cx.registry, cx.registry_attnum),
				   0, NULL, NULL, &ids, &rels);
	for (uint64 i = 0; i < n; i++)
		rebuild_after_type_change(&cx, ids[i], rels[i]);

	/* detached partitions: remove their triggers */
	n = select_ids(psprintf("SELECT r.id FROM %s r WHERE r.method = 'trigger'", cx.registry),
				   0, NULL, NULL, &ids, NULL);
	for (uint64 i = 0; i < n; i++)
		drop_triggers(&cx, ids[i], true);

	/*
	 * New or attached partitions of a tracked partitioned table: install the
	 * triggers and add the rows they hold.  Skipped while the tracked table
	 * itself lacks its trigger, which is the state in the middle of a
	 * pg_restore (the dump recreates every trigger itself).
	 */
	n = select_ids(psprintf("SELECT r.id, p.relid FROM %s r, pg_catalog.pg_partition_tree(r.tbl) p, "
							"pg_catalog.pg_class c "
							"WHERE r.method = 'trigger' AND c.oid = p.relid AND p.relid <> r.tbl "
							"AND c.relkind IN ('r', 'p') "
							"AND EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = r.tbl "
							"AND t.tgname = 'bf_sync_' || r.id || '_ins') "
							"AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = p.relid "
							"AND t.tgname = 'bf_sync_' || r.id || '_ins')",
							cx.registry),
				   0, NULL, NULL, &ids, &rels);
	for (uint64 i = 0; i < n; i++)
	{
		bf_install_triggers(&cx, ids[i], rels[i]);
		if (get_rel_relkind(rels[i]) == RELKIND_RELATION)
			add_partition_rows(&cx, ids[i], rels[i]);
	}
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}
