/*-------------------------------------------------------------------------
 *
 * bf_track_manage.c
 *	  bf_track, bf_untrack and bf_rebuild: creating, dropping and rebuilding
 *	  the filter of a table column.
 *
 * They require ownership of the table.  What they create on the caller's
 * table with a choice of place -- the bloomfilter index, which lands in
 * the caller's default_tablespace -- is created with the caller's own
 * rights; the registry rows and the sync triggers (whose definition is
 * fixed) are written as the registry's owner, who also reads the table so
 * that row-level security cannot hide rows from the filter.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "access/relation.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"

#include "bf_index.h"
#include "bf_dist.h"
#include "bf_relcheck.h"

/* bf_value_funcs.c */

/* ---- checks ---- */

static void
check_owner(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!bf_rel_ownercheck(relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(relkind),
					   get_rel_name(relid));
}

static void
check_args_not_null(FunctionCallInfo fcinfo, const char *fname)
{
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s: the table and the column must not be NULL", fname)));
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
check_capacity_arg(FunctionCallInfo fcinfo, int argno, bool use_index)
{
	int64		capacity;

	if (PG_ARGISNULL(argno))
		return;
	capacity = PG_GETARG_INT64(argno);
	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must be positive"),
				 errhint("Pass NULL to have it chosen from the size of the table.")));
	if (use_index && capacity > PG_INT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity " INT64_FORMAT " is too large for method 'index'", capacity),
				 errdetail("The index's capacity option is at most %d.", PG_INT32_MAX)));
}

/* ---- sizes ---- */

/* NULL capacity: max(1000, 2 x rows now), rows counted exactly */
static int64
auto_capacity(Oid relid, bool only)
{
	char	   *sql = psprintf("SELECT pg_catalog.count(*) FROM %s%s",
							   only ? "ONLY " : "", bf_qualified_rel(relid));
	bool		isnull;
	int64		rows;

	bf_spi_exec(sql, 0, NULL, NULL, SPI_OK_SELECT);
	rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
									   SPI_tuptable->tupdesc, 1, &isnull));
	return Max((int64) BF_MIN_CAPACITY, BF_GROWTH * rows);
}

/*
 * Capacity and rate of the index's filter, read from its metapage (of its
 * first leaf when partitioned); the defaults when it has no leaf yet.
 */
static void
index_size(Oid idx, int64 *capacity, double *fpr)
{
	List	   *leaves = bf_index_leaves(idx);
	Relation	leaf;
	BfIndexState st;

	if (leaves == NIL)
	{
		*capacity = BF_MIN_CAPACITY;
		return;
	}
	leaf = index_open(linitial_oid(leaves), AccessShareLock);
	bf_index_state(leaf, &st);
	index_close(leaf, AccessShareLock);
	/* of a growing index, its first layer's capacity and its whole rate */
	*capacity = st.layers.capacity;
	*fpr = st.layers.fpr;
}

/*
 * The capacity and rate a registry row records for the index idx of relid:
 * the index's own, or for a table Citus distributes, those asked for the
 * whole column (its shards' indexes hold a part each, bf_dist_shard_sizing).
 */
static void
recorded_size(FunctionCallInfo fcinfo, Oid relid, Oid idx, int64 *capacity,
			  double *fpr)
{
	if (bf_citus_table(relid))
		*capacity = PG_ARGISNULL(2) ? BF_MIN_CAPACITY : PG_GETARG_INT64(2);
	else
		index_size(idx, capacity, fpr);
}

/* ---- the index ---- */

/*
 * The options of the column's index for (capacity, fpr); of a table Citus
 * distributes, of each shard's index, so that a lookup over all the shards
 * keeps fpr.
 */
static char *
index_options(Oid relid, bool capacity_given, int64 capacity, double fpr)
{
	char		fprbuf[64];

	if (bf_citus_table(relid))
		bf_dist_shard_sizing(relid, &capacity, &fpr);
	snprintf(fprbuf, sizeof(fprbuf), "%.17g", fpr);
	if (capacity_given)
		return psprintf("fpr = %s, capacity = " INT64_FORMAT ", growth = 0", fprbuf, capacity);
	/* no capacity given: sized from the table, and growing past it */
	return psprintf("fpr = %s, capacity = 0, growth = 2", fprbuf);
}

/*
 * CREATE INDEX ... USING bloomfilter on the column, as the caller (it is
 * the caller's object, in the caller's default_tablespace); returns its
 * name.
 */
static char *
create_bloom_index(BfSpiContext *cx, Oid relid, const char *colname,
				   bool capacity_given, int64 capacity, double fpr)
{
	Oid			nsp = get_rel_namespace(relid);
	char	   *name = ChooseRelationName(get_rel_name(relid), colname, "bf", nsp, false);

	bf_as_caller(cx);
	bf_spi_ddl(psprintf("CREATE INDEX %s ON %s USING bloomfilter (%s) WITH (%s)",
						quote_identifier(name), bf_qualified_rel(relid),
						quote_identifier(colname),
						index_options(relid, capacity_given, capacity, fpr)));
	bf_as_owner(cx);
	return name;
}

static void
invalid_index_error(Oid invalid, const char *colname)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("bloomfilter index \"%s\" on column \"%s\" is not valid",
					get_rel_name(invalid), colname),
			 errdetail("A cancelled CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY leaves an index that misses rows."),
			 errhint("Run REINDEX INDEX %s, or drop it.", bf_qualified_rel(invalid))));
}

/* ---- registry rows ---- */

/* the attribute number, type and collation a registry row follows */
static void
record_attnum(BfSpiContext *cx, int64 id, Oid relid, AttrNumber attnum)
{
	Oid			types[4] = {INT8OID, INT2OID, OIDOID, OIDOID};
	Datum		values[4];
	Oid			typid;
	int32		typmod;
	Oid			collid;

	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	values[0] = Int64GetDatum(id);
	values[1] = Int16GetDatum(attnum);
	values[2] = ObjectIdGetDatum(typid);
	values[3] = ObjectIdGetDatum(collid);
	bf_spi_exec(psprintf("DELETE FROM %s WHERE id = $1", cx->ext->registry_attnum),
				1, types, values, SPI_OK_DELETE);
	bf_spi_exec(psprintf("INSERT INTO %s (id, attnum, atttypid, attcollation) VALUES ($1, $2, $3, $4)",
						 cx->ext->registry_attnum),
				4, types, values, SPI_OK_INSERT);
}

/* ---- bf_track ---- */

/* method 'index': adopt a usable bloomfilter index on the column, or make one */
static void
track_with_index(FunctionCallInfo fcinfo, BfSpiContext *cx, int64 id, Oid relid,
				 const char *colname, AttrNumber attnum, double fpr)
{
	const BfExt *ext = cx->ext;
	Oid			invalid;
	Oid			idx = bf_find_bloom_index(relid, attnum, &invalid);
	char	   *created = NULL;
	int64		capacity;
	Oid			types[6] = {INT8OID, OIDOID, NAMEOID, INT8OID, FLOAT8OID, NAMEOID};
	Datum		values[6];

	if (!OidIsValid(idx))
	{
		if (OidIsValid(invalid))
			invalid_index_error(invalid, colname);
		created = create_bloom_index(cx, relid, colname, !PG_ARGISNULL(2),
									 PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2), fpr);
		idx = bf_find_bloom_index(relid, attnum, NULL);
		if (!OidIsValid(idx))
			elog(ERROR, "index \"%s\" just created was not found", created);
	}
	else
		ereport(NOTICE,
				(errmsg("bf_track: column \"%s\" already has the bloomfilter index \"%s\", which now holds its filter",
						colname, get_rel_name(idx)),
				 errdetail("The index keeps its own capacity and false-positive rate; bf_untrack will not drop it."),
				 errhint("Call bf_rebuild to resize it.")));
	recorded_size(fcinfo, relid, idx, &capacity, &fpr);

	/*
	 * The server keeps the index current on every INSERT, COPY and UPDATE;
	 * the registry row records that the column is tracked and whether
	 * bf_untrack should drop the index.
	 */
	values[0] = Int64GetDatum(id);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = PG_GETARG_DATUM(1);
	values[3] = Int64GetDatum(capacity);
	values[4] = Float8GetDatum(fpr);
	if (ext->att_created_index)
	{
		NameData	nd;
		char		nulls[6] = {' ', ' ', ' ', ' ', ' ', created ? ' ' : 'n'};
		int			rc;

		namestrcpy(&nd, created ? created : "");
		values[5] = NameGetDatum(&nd);
		rc = SPI_execute_with_args(psprintf("INSERT INTO %s (id, tbl, col, method, capacity, fpr, created_index) "
											"VALUES ($1, $2, $3, 'index', $4, $5, $6)", ext->registry),
								   6, types, values, nulls, false, 0);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "could not insert into the bloomfilter registry: %s",
				 SPI_result_code_string(rc));
	}
	else
		bf_spi_exec(psprintf("INSERT INTO %s (id, tbl, col, method, capacity, fpr) "
							 "VALUES ($1, $2, $3, 'index', $4, $5)", ext->registry),
					5, types, values, SPI_OK_INSERT);
}

/* method 'trigger': install the sync triggers, then read the table */
static void
track_with_triggers(FunctionCallInfo fcinfo, BfSpiContext *cx, int64 id, Oid relid,
					const char *colname, double fpr)
{
	bool		only = get_rel_relkind(relid) == RELKIND_RELATION;
	int64		capacity = PG_ARGISNULL(2) ? auto_capacity(relid, only) : PG_GETARG_INT64(2);
	BfFilter	f = bf_new_tracked_filter(capacity, fpr, PG_ARGISNULL(2), 0);
	List	   *members = bf_tree_members(relid);
	ListCell   *lc;
	Oid			types[6] = {INT8OID, OIDOID, NAMEOID, INT8OID, FLOAT8OID, InvalidOid};
	Datum		values[6];

	/* every table of the tree, so that direct writes to a partition count */
	foreach(lc, members)
	{
		char		kind = get_rel_relkind(lfirst_oid(lc));

		if (kind == RELKIND_RELATION || kind == RELKIND_PARTITIONED_TABLE)
			bf_install_triggers(cx, id, lfirst_oid(lc));
	}
	bf_fill_from_rel(&f, relid, colname, only, "bf_track");

	values[0] = Int64GetDatum(id);
	values[1] = ObjectIdGetDatum(relid);
	values[2] = PG_GETARG_DATUM(1);
	values[3] = Int64GetDatum(capacity);
	values[4] = Float8GetDatum(fpr);
	bf_spi_exec(psprintf("INSERT INTO %s (id, tbl, col, method, capacity, fpr) "
						 "VALUES ($1, $2, $3, 'trigger', $4, $5)", cx->ext->registry),
				5, types, values, SPI_OK_INSERT);
	bf_registry_set_value(cx, id, f.vl, NULL, 0, NULL, NULL);
}

PG_FUNCTION_INFO_V1(bf_track);
Datum
bf_track(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname;
	double		fpr = PG_ARGISNULL(3) ? 0.01 : PG_GETARG_FLOAT8(3);
	char	   *method = PG_ARGISNULL(4) ? "index" : text_to_cstring(PG_GETARG_TEXT_PP(4));
	bool		use_index;
	AttrNumber	attnum;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;
	BfSpiContext cx;
	int64		id;
	bool		isnull;
	Oid			types[2] = {OIDOID, NAMEOID};
	Datum		values[2];

	check_args_not_null(fcinfo, "bf_track");
	relid = PG_GETARG_OID(0);
	colname = NameStr(*PG_GETARG_NAME(1));

	use_index = (strcmp(method, "index") == 0);
	if (!use_index && strcmp(method, "trigger") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown bf_track method \"%s\"", method),
				 errhint("The methods are 'index' (a bloomfilter index, for busy tables) and 'trigger' (a filter value kept by statement triggers).")));
	check_capacity_arg(fcinfo, 2, use_index);
	bf_check_fpr(fpr);
	check_read_committed("bf_track");
	check_owner(relid);
	if (get_rel_relkind(relid) != RELKIND_RELATION &&
		get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
		bf_check_local_rows(relid, "bf_track");
	if (get_rel_relispartition(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot track \"%s\": it is a partition", get_rel_name(relid)),
				 errdetail("Rows inserted through the partitioned table do not fire the statement triggers of its partitions."),
				 errhint("Track the partitioned table at the root instead.")));
	attnum = bf_user_column(relid, colname);
	/* fails early for types that cannot be hashed */
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);

	/*
	 * Block writers of the table (and its partitions) from now to commit and
	 * wait for those in flight: the triggers exist before the table is
	 * read, so every row is either read below or synced by a trigger.
	 */
	bf_lock_tree(relid, ShareRowExclusiveLock);
	/* only now: the partitions cannot change any more */
	if (bf_citus_table(relid))
	{
		/* its shards hold the rows: each keeps the index of its own */
		if (!use_index)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("bf_track: table \"%s\" is distributed by Citus, whose shards the sync triggers cannot see",
							get_rel_name(relid)),
					 errhint("Use method 'index' (the default): each shard keeps a bloomfilter index of its rows.")));
	}
	else
	{
		bf_check_local_rows(relid, "bf_track");
		bf_check_no_children(relid, "bf_track");
	}

	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	/* one bf_track at a time picks the next id */
	LockRelationOid(cx.ext->registry_relid, ShareRowExclusiveLock);
	values[0] = ObjectIdGetDatum(relid);
	values[1] = PG_GETARG_DATUM(1);
	bf_spi_exec(psprintf("SELECT 1 FROM %s WHERE tbl = $1 AND col = $2", cx.ext->registry),
				2, types, values, SPI_OK_SELECT);
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("column \"%s\" of table \"%s\" is already tracked",
						colname, get_rel_name(relid)),
				 errhint("Use bf_rebuild to rebuild its filter, or bf_untrack first.")));
	bf_spi_exec(psprintf("SELECT COALESCE(pg_catalog.max(id), 0) + 1 FROM %s", cx.ext->registry),
				0, NULL, NULL, SPI_OK_SELECT);
	id = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	if (use_index)
		track_with_index(fcinfo, &cx, id, relid, colname, attnum, fpr);
	else
		track_with_triggers(fcinfo, &cx, id, relid, colname, fpr);
	record_attnum(&cx, id, relid, attnum);
	bf_registry_changed(cx.ext);
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* ---- bf_untrack ---- */

/* the bloomfilter index named name on relid, or InvalidOid */
static Oid
index_named(Oid relid, const char *name)
{
	Oid			idx = get_relname_relid(name, get_rel_namespace(relid));
	Relation	rel;
	bool		ok;

	if (!OidIsValid(idx) || IndexGetRelation(idx, true) != relid)
		return InvalidOid;
	rel = relation_open(idx, AccessShareLock);
	ok = rel->rd_rel->relam == get_index_am_oid("bloomfilter", false);
	relation_close(rel, AccessShareLock);
	return ok ? idx : InvalidOid;
}

PG_FUNCTION_INFO_V1(bf_untrack);
Datum
bf_untrack(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	BfSpiContext cx;
	RegRow		r;

	check_owner(relid);
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	bf_registry_lock_col(&cx, relid, PG_GETARG_DATUM(1), &r);
	if (r.use_index)
	{
		Oid			idx = InvalidOid;

		if (r.has_created_index)
		{
			idx = index_named(relid, NameStr(r.created_index));
			if (!OidIsValid(idx))
				ereport(NOTICE,
						(errmsg("bf_untrack: the index \"%s\" that bf_track created is gone; no index dropped",
								NameStr(r.created_index))));
		}
		else if (cx.ext->att_created_index == 0)
		{
			/* a 1.0 registry: bf_track always created the index then */
			AttrNumber	attnum = get_attnum(relid, colname);

			if (attnum > 0)
				idx = bf_find_bloom_index(relid, attnum, NULL);
		}
		if (OidIsValid(idx))
		{
			/* the caller's object: dropped with the caller's rights */
			bf_as_caller(&cx);
			bf_spi_ddl(psprintf("DROP INDEX %s", bf_qualified_rel(idx)));
			bf_as_owner(&cx);
		}
	}
	else
		bf_drop_triggers(&cx, r.id, false);
	bf_registry_delete(&cx, r.id);
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}

/* ---- bf_rebuild ---- */

/*
 * Method 'index': REINDEX with the new size (each leaf on its own: REINDEX
 * of a partitioned index cannot run inside the function's transaction).
 * An invalid index is repaired the same way; a missing one is created.
 */
static void
rebuild_index(FunctionCallInfo fcinfo, BfSpiContext *cx, RegRow *r, Oid relid,
			  const char *colname, double fpr)
{
	AttrNumber	attnum = bf_user_column(relid, colname);
	Oid			invalid;
	Oid			idx = bf_find_bloom_index(relid, attnum, &invalid);
	char	   *created = NULL;
	int64		capacity;
	Oid			types[4] = {INT8OID, INT8OID, FLOAT8OID, NAMEOID};
	Datum		values[4];
	NameData	nd;

	if (!OidIsValid(idx) && !OidIsValid(invalid))
	{
		created = create_bloom_index(cx, relid, colname, !PG_ARGISNULL(2),
									 PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2), fpr);
		idx = bf_find_bloom_index(relid, attnum, &invalid);
	}
	else
	{
		Oid			target = OidIsValid(idx) ? idx : invalid;
		List	   *leaves = bf_index_leaves(target);
		ListCell   *lc;
		char	   *opts = index_options(relid, !PG_ARGISNULL(2),
										 PG_ARGISNULL(2) ? 0 : PG_GETARG_INT64(2), fpr);

		foreach(lc, leaves)
		{
			bf_spi_ddl(psprintf("ALTER INDEX %s SET (%s)", bf_qualified_rel(lfirst_oid(lc)), opts));
			bf_spi_ddl(psprintf("REINDEX INDEX %s", bf_qualified_rel(lfirst_oid(lc))));
		}
		CommandCounterIncrement();
		idx = bf_find_bloom_index(relid, attnum, &invalid);
	}
	if (!OidIsValid(idx))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" on column \"%s\" is still not valid after its rebuild",
						get_rel_name(invalid), colname),
				 errdetail("A partitioned index is valid only when every partition has its index attached."),
				 errhint("Drop the index and call bf_rebuild again to create a new one.")));
	recorded_size(fcinfo, relid, idx, &capacity, &fpr);

	values[0] = Int64GetDatum(r->id);
	values[1] = Int64GetDatum(capacity);
	values[2] = Float8GetDatum(fpr);
	namestrcpy(&nd, created ? created : "");
	values[3] = NameGetDatum(&nd);
	bf_spi_exec(psprintf("UPDATE %s SET capacity = $2, fpr = $3, deleted_since_rebuild = 0%s%s "
						 "WHERE id = $1", cx->ext->registry,
						 cx->ext->att_stale ? ", stale = NULL" : "",
						 created && cx->ext->att_created_index ? ", created_index = $4" : ""),
				4, types, values, SPI_OK_UPDATE);
}

/* method 'trigger': repair the triggers, read the table into a new filter */
static void
rebuild_filter(FunctionCallInfo fcinfo, BfSpiContext *cx, RegRow *r, Oid relid,
			   const char *colname, double fpr)
{
	bool		only = get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE;
	int64		capacity;
	BfFilter	f;

	bf_install_missing_triggers(cx, r->id, relid);
	capacity = PG_ARGISNULL(2) ? auto_capacity(relid, only) : PG_GETARG_INT64(2);
	f = bf_new_tracked_filter(capacity, fpr, PG_ARGISNULL(2), 0);
	bf_fill_from_rel(&f, relid, colname, only, "bf_rebuild");

	bf_registry_set_rebuilt(cx, r->id, f.vl, capacity, fpr);
}

/*
 * bf_rebuild(tbl, col, capacity, fpr, concurrently): concurrently, for the
 * trigger method, writers are kept out only for the swap
 * (bf_track_rebuild.c): into a filter of the new shape, or of the same
 * size when the capacity and rate stay (a growing filter is compacted into
 * one layer, sized as bf_rebuild sizes it).  An index cannot be rebuilt concurrently from a function
 * (REINDEX CONCURRENTLY is a top-level command), so the caller is told the
 * command to run.
 */
static void
rebuild_concurrently(FunctionCallInfo fcinfo, Oid relid, Datum colname)
{
	BfSpiContext cx;
	RegRow		r;
	AttrNumber	attnum;
	double		fpr;
	bool		growing;

	/* against DDL, TRUNCATE and another rebuild; not against writers */
	bf_lock_tree(relid, ShareUpdateExclusiveLock);
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	if (!bf_registry_fetch(cx.ext, 0, relid, NameStr(*DatumGetName(colname)), true, &r))
		bf_not_tracked(relid, NameStr(*DatumGetName(colname)));
	if (r.use_index)
	{
		Oid			idx = bf_find_bloom_index(relid, bf_user_column(relid, NameStr(r.col)), NULL);

		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bf_rebuild cannot rebuild an index concurrently"),
				 errdetail("REINDEX CONCURRENTLY runs only as a command of its own, not from a function."),
				 OidIsValid(idx) ?
				 errhint("Run REINDEX INDEX CONCURRENTLY %s.", bf_qualified_rel(idx)) :
				 errhint("Call bf_rebuild without concurrently to make the index anew.")));
	}
	check_capacity_arg(fcinfo, 2, false);
	fpr = PG_ARGISNULL(3) ? r.fpr : PG_GETARG_FLOAT8(3);
	bf_check_fpr(fpr);
	bf_check_local_rows(relid, "bf_rebuild");
	bf_check_no_children(relid, "bf_rebuild");
	attnum = bf_user_column(relid, NameStr(r.col));
	bf_install_missing_triggers(&cx, r.id, relid);
	growing = r.growing || (r.chunk_bytes == 0 && r.filter_raw != NULL &&
							bf_datum_is_growing(r.filter_raw));
	if (growing)
		/* compacted: sized as a plain bf_rebuild would size it */
		bf_rebuild_online(&cx, &r, relid, colname,
						  PG_ARGISNULL(2) ? auto_capacity(relid, get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE) :
						  PG_GETARG_INT64(2),
						  fpr, PG_ARGISNULL(2));
	else
		bf_rebuild_online(&cx, &r, relid, colname,
						  PG_ARGISNULL(2) ? r.capacity : PG_GETARG_INT64(2), fpr, false);
	record_attnum(&cx, r.id, relid, attnum);
	bf_registry_changed(cx.ext);
	bf_spi_end(&cx);
}

PG_FUNCTION_INFO_V1(bf_rebuild);
Datum
bf_rebuild(PG_FUNCTION_ARGS)
{
	Oid			relid;
	char	   *colname;
	BfSpiContext cx;
	RegRow		r;
	double		fpr;
	AttrNumber	attnum;
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;

	check_args_not_null(fcinfo, "bf_rebuild");
	relid = PG_GETARG_OID(0);
	colname = NameStr(*PG_GETARG_NAME(1));
	check_read_committed("bf_rebuild");
	check_owner(relid);
	if (PG_NARGS() > 4 && !PG_ARGISNULL(4) && PG_GETARG_BOOL(4))
	{
		rebuild_concurrently(fcinfo, relid, PG_GETARG_DATUM(1));
		PG_RETURN_VOID();
	}

	/*
	 * SHARE: writers wait (before their sync trigger could race with the
	 * swap), readers and bf_might_contain go on with the old filter.
	 */
	bf_lock_tree(relid, ShareLock);
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
	bf_registry_lock_col(&cx, relid, PG_GETARG_DATUM(1), &r);
	check_capacity_arg(fcinfo, 2, r.use_index);
	fpr = PG_ARGISNULL(3) ? r.fpr : PG_GETARG_FLOAT8(3);
	bf_check_fpr(fpr);
	if (!(r.use_index && bf_citus_table(relid)))
	{
		bf_check_local_rows(relid, "bf_rebuild");
		bf_check_no_children(relid, "bf_rebuild");
	}
	attnum = bf_user_column(relid, colname);
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);

	if (r.use_index)
		rebuild_index(fcinfo, &cx, &r, relid, colname, fpr);
	else
		rebuild_filter(fcinfo, &cx, &r, relid, colname, fpr);
	/* the filter now follows the column's current type */
	record_attnum(&cx, r.id, relid, attnum);
	bf_registry_changed(cx.ext);
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}
