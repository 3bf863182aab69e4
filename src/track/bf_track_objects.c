/*-------------------------------------------------------------------------
 *
 * bf_track_objects.c
 *	  The objects that keep a tracked filter current, and reading a table
 *	  into a filter:
 *
 *	  - the tracked tree: the table, or a partitioned table and all its
 *	    partitions (inheritance children of a plain table are not part of
 *	    its filter);
 *	  - method 'trigger': four statement triggers bf_sync_<id>_<suffix> on
 *	    every member of the tree;
 *	  - method 'index': a valid single-column bloomfilter index on the
 *	    column (for a partitioned table, the partitioned index and its
 *	    leaves), found by looking, so that REINDEX, ALTER COLUMN TYPE and
 *	    pg_restore, which give it a new OID, are followed.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"
#include "bf_index.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/defrem.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

/* seconds between progress NOTICEs while reading a table */
#define BF_PROGRESS_SECS 5

/* ---- the tracked tree ---- */

/* the table and, for a partitioned table, every partition at any level */
List *
bf_tree_members(Oid relid)
{
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		return find_all_inheritors(relid, AccessShareLock, NULL);
	return list_make1_oid(relid);
}

/* is relid the tracked table root or one of its partitions? */
bool
bf_in_tree(Oid relid, Oid root)
{
	if (relid == root)
		return true;
	if (!get_rel_relispartition(relid))
		return false;
	return list_member_oid(get_partition_ancestors(relid), root);
}

/*
 * A query of a plain table also returns the rows of its inheritance
 * children (CREATE TABLE ... INHERITS), which neither the table's triggers
 * nor its index see: a filter of the table alone would answer false for
 * them.  (Partitions are covered; a partition cannot have children.)
 */
void
bf_check_no_children(Oid relid, const char *what)
{
	List	   *children;

	if (get_rel_relkind(relid) != RELKIND_RELATION)
		return;
	children = find_inheritance_children(relid, NoLock);
	if (children != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s: table \"%s\" has inheritance children", what,
						get_rel_name(relid)),
				 errdetail("A query of the table also returns the rows of \"%s\", which its filter would never see.",
						   get_rel_name(linitial_oid(children))),
				 errhint("Track each table on its own, or use declarative partitioning.")));
}

/* ---- the bloomfilter index ---- */

/* may the index answer: valid (every row is in it), ready and live? */
bool
bf_index_usable(Oid indexoid)
{
	HeapTuple	tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(indexoid));
	Form_pg_index idx;
	bool		ok;

	if (!HeapTupleIsValid(tup))
		return false;
	idx = (Form_pg_index) GETSTRUCT(tup);
	ok = bf_index_complete(idx);
	ReleaseSysCache(tup);
	return ok;
}

/*
 * A usable single-column bloomfilter index on relid's column attnum
 * (without expressions or a predicate), the one of lowest OID; or
 * InvalidOid, with *invalid set to such an index that is not usable (a
 * cancelled CREATE INDEX CONCURRENTLY), if any.
 */
Oid
bf_find_bloom_index(Oid relid, AttrNumber attnum, Oid *invalid)
{
	Oid			amoid = get_index_am_oid("bloomfilter", true);
	Relation	rel;
	List	   *indexes;
	ListCell   *lc;
	Oid			result = InvalidOid;

	if (invalid)
		*invalid = InvalidOid;
	if (!OidIsValid(amoid))
		return InvalidOid;
	rel = table_open(relid, AccessShareLock);
	indexes = RelationGetIndexList(rel);	/* in OID order */
	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);
		bool		match;

		match = idx->rd_rel->relam == amoid &&
			idx->rd_index->indnatts == 1 &&
			idx->rd_index->indkey.values[0] == attnum &&
			RelationGetIndexExpressions(idx) == NIL &&
			RelationGetIndexPredicate(idx) == NIL;
		if (match && bf_index_usable(RelationGetRelid(idx)))
			result = RelationGetRelid(idx);
		else if (match && invalid && !OidIsValid(*invalid))
			*invalid = RelationGetRelid(idx);
		index_close(idx, AccessShareLock);
		if (OidIsValid(result))
			break;
	}
	list_free(indexes);
	table_close(rel, AccessShareLock);
	return result;
}

/* ---- the sync triggers ---- */

/* bf_sync_<id>_<suffix>: the registry id and the suffix's index */
bool
bf_parse_trigger_name(const char *name, int64 *id, int *suffix)
{
	const char *p;
	char	   *end;
	int64		v;

	if (strncmp(name, "bf_sync_", 8) != 0)
		return false;
	p = name + 8;
	if (*p < '1' || *p > '9')
		return false;
	errno = 0;
	v = strtoi64(p, &end, 10);
	if (errno != 0 || *end != '_')
		return false;
	for (int i = 0; i < BF_NTRIGGERS; i++)
		if (strcmp(end + 1, bf_trigger_suffixes[i]) == 0)
		{
			*id = v;
			*suffix = i;
			return true;
		}
	return false;
}

static char *
trigger_name(int64 id, int suffix)
{
	return psprintf("bf_sync_" INT64_FORMAT "_%s", id, bf_trigger_suffixes[suffix]);
}

static void
install_trigger(const BfExt *ext, int64 id, Oid relid, int suffix)
{
	static const char *const events[BF_NTRIGGERS] = {
		"INSERT", "UPDATE", "DELETE", "TRUNCATE"
	};
	static const char *const referencing[BF_NTRIGGERS] = {
		"REFERENCING NEW TABLE AS bf_new", "REFERENCING NEW TABLE AS bf_new",
		"REFERENCING OLD TABLE AS bf_old", ""
	};

	bf_spi_ddl(psprintf("CREATE TRIGGER %s AFTER %s ON %s %s "
						"FOR EACH STATEMENT EXECUTE FUNCTION %s.bf_track_sync('" INT64_FORMAT "')",
						trigger_name(id, suffix), events[suffix], bf_qualified_rel(relid),
						referencing[suffix], ext->nspname, id));
}

/* create the four sync triggers of registry row id on relid */
void
bf_install_triggers(BfSpiContext *cx, int64 id, Oid relid)
{
	for (int i = 0; i < BF_NTRIGGERS; i++)
		install_trigger(cx->ext, id, relid, i);
}

/*
 * The sync trigger of row id with suffix s on rel: is it there, and does
 * it fire (origin or always)?
 */
static Trigger *
find_trigger(Relation rel, const char *name)
{
	TriggerDesc *td = rel->trigdesc;

	if (td == NULL)
		return NULL;
	for (int i = 0; i < td->numtriggers; i++)
		if (strcmp(td->triggers[i].tgname, name) == 0)
			return &td->triggers[i];
	return NULL;
}

static bool
trigger_fires(Trigger *tg, const BfExt *ext)
{
	return tg->tgfoid == ext->sync_fn &&
		(tg->tgenabled == TRIGGER_FIRES_ON_ORIGIN ||
		 tg->tgenabled == TRIGGER_FIRES_ALWAYS);
}

/*
 * Why the sync triggers of row id do not cover every write to the tree
 * of root (a trigger missing or disabled somewhere), or NULL if they do.
 */
char *
bf_sync_trigger_problem(const BfExt *ext, int64 id, Oid root)
{
	List	   *members = bf_tree_members(root);
	ListCell   *lc;
	char	   *problem = NULL;

	foreach(lc, members)
	{
		Relation	rel;

		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_RELATION &&
			get_rel_relkind(lfirst_oid(lc)) != RELKIND_PARTITIONED_TABLE)
			continue;
		rel = table_open(lfirst_oid(lc), AccessShareLock);
		for (int i = 0; i < BF_NTRIGGERS && problem == NULL; i++)
		{
			char	   *name = trigger_name(id, i);
			Trigger    *tg = find_trigger(rel, name);

			if (tg == NULL)
				problem = psprintf("The sync trigger %s on table %s is missing.",
								   name, RelationGetRelationName(rel));
			else if (!trigger_fires(tg, ext))
				problem = psprintf("The sync trigger %s on table %s is disabled.",
								   name, RelationGetRelationName(rel));
		}
		table_close(rel, AccessShareLock);
		if (problem)
			break;
	}
	list_free(members);
	return problem;
}

/*
 * Give every member of root's tree its four sync triggers, enabled: the
 * repair bf_rebuild makes before it reads the table again.
 */
void
bf_install_missing_triggers(BfSpiContext *cx, int64 id, Oid root)
{
	List	   *members = bf_tree_members(root);
	ListCell   *lc;

	foreach(lc, members)
	{
		Oid			relid = lfirst_oid(lc);
		Relation	rel;
		bool		missing[BF_NTRIGGERS];
		bool		disabled[BF_NTRIGGERS];

		if (get_rel_relkind(relid) != RELKIND_RELATION &&
			get_rel_relkind(relid) != RELKIND_PARTITIONED_TABLE)
			continue;
		rel = table_open(relid, AccessShareLock);
		for (int i = 0; i < BF_NTRIGGERS; i++)
		{
			Trigger    *tg = find_trigger(rel, trigger_name(id, i));

			missing[i] = (tg == NULL);
			disabled[i] = (tg != NULL && !trigger_fires(tg, cx->ext));
		}
		table_close(rel, AccessShareLock);
		for (int i = 0; i < BF_NTRIGGERS; i++)
		{
			if (disabled[i])
				bf_spi_ddl(psprintf("DROP TRIGGER %s ON %s", trigger_name(id, i),
									bf_qualified_rel(relid)));
			if (missing[i] || disabled[i])
				install_trigger(cx->ext, id, relid, i);
		}
	}
	list_free(members);
}

/*
 * Drop the sync triggers of registry row id: all of them, or (stale_only)
 * those on relations that are no longer its table or one of its
 * partitions.
 */
void
bf_drop_triggers(BfSpiContext *cx, int64 id, bool stale_only)
{
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	RegRow		r;
	List	   *rels = NIL;
	List	   *names = NIL;
	ListCell   *lr,
			   *ln;

	if (stale_only && !bf_registry_fetch(cx->ext, id, InvalidOid, NULL, true, &r))
		return;
	rel = table_open(TriggerRelationId, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_trigger tg = (Form_pg_trigger) GETSTRUCT(tup);
		int64		tid;
		int			suffix;

		if (tg->tgfoid != cx->ext->sync_fn ||
			!bf_parse_trigger_name(NameStr(tg->tgname), &tid, &suffix) || tid != id)
			continue;
		if (stale_only && bf_in_tree(tg->tgrelid, r.tbl))
			continue;
		rels = lappend_oid(rels, tg->tgrelid);
		names = lappend(names, pstrdup(NameStr(tg->tgname)));
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	forboth(lr, rels, ln, names)
		bf_spi_ddl(psprintf("DROP TRIGGER IF EXISTS %s ON %s",
							quote_identifier(lfirst(ln)), bf_qualified_rel(lfirst_oid(lr))));
}

/* ---- reading a table into a filter ---- */

BfFilter
bf_detoast_copy(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM_COPY(d);
	bf_read_any_header(f.vl, &f.hdr);
	return f;
}

/*
 * Add every non-NULL value of relid.colname to *f, reading through an SPI
 * cursor (SPI must be connected) with NOTICEs every few seconds.  only: do
 * not descend to inheritance children (partitioned tables are read whole).
 * Returns the number of rows read.
 */
int64
bf_fill_from_rel(BfFilter *f, Oid relid, const char *colname, bool only,
				 const char *what)
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
	char	   *relname = bf_qualified_rel(relid);

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

			if ((i & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			if (!isnull)
				bf_adder_add(&adder, v);
		}
		nrows += SPI_processed;
		SPI_freetuptable(SPI_tuptable);
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

/*
 * An empty filter for a 'trigger' column: growing (layer 0 for capacity,
 * BF_TRACK_GROWTH) when bf_track was given no capacity, so that it never
 * saturates; else plain.
 */
BfFilter
bf_new_tracked_filter(int64 capacity, double fpr, bool growing, int64 seed)
{
	BfFilter	f;

	f.vl = growing ? bf_grow_new(capacity, fpr, BF_TRACK_GROWTH, seed) :
		bf_new_for(capacity, fpr, seed);
	bf_read_any_header(f.vl, &f.hdr);
	return f;
}

/* the attribute number of a user column, or a clear error */
AttrNumber
bf_user_column(Oid relid, const char *colname)
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
 * Lock the table and, when partitioned, its partitions (as LOCK TABLE
 * does); then make sure it was not dropped while we waited.
 */
void
bf_lock_tree(Oid relid, LOCKMODE mode)
{
	LockRelationOid(relid, mode);
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE)
		list_free(find_all_inheritors(relid, mode, NULL));
}
