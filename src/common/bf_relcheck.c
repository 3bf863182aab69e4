/*-------------------------------------------------------------------------
 *
 * bf_relcheck.c
 *	  Refuse tables whose rows a filter cannot see.  A filter built from a
 *	  table scan or kept by an index answers "absent" for every row that
 *	  scan or index never met: rows of a foreign table, of a foreign
 *	  partition, or of a table distributed by Citus (whose coordinator
 *	  table is an empty shell and whose rows live in shards on other
 *	  nodes).  Such a filter would give false negatives, so these tables
 *	  are refused until distributed lookups exist.
 *
 *	  And refuse readers whom row-level security restricts: a filter holds
 *	  the keys of every row, so it would tell them about hidden rows.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_relcheck.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "commands/extension.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rls.h"

/*
 * Is relid a Citus distributed (or reference) table?  Citus records them
 * in pg_catalog.pg_dist_partition, whose first column is the table's OID;
 * the catalog is looked up by name so that the extension does not depend
 * on Citus.
 */
bool
bf_rel_is_distributed(Oid relid)
{
	Oid			distrel = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData key;
	bool		found;

	if (!OidIsValid(distrel))
		return false;
	rel = table_open(distrel, AccessShareLock);
	if (RelationGetDescr(rel)->natts < 1 ||
		TupleDescAttr(RelationGetDescr(rel), 0)->atttypid != REGCLASSOID)
	{
		/* not the catalog we know: refuse rather than guess */
		table_close(rel, AccessShareLock);
		return true;
	}
	ScanKeyInit(&key, 1, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Is relid a table Citus distributes (also a reference or Citus local
 * table), with Citus itself installed, so that its shards can be asked?
 */
bool
bf_citus_table(Oid relid)
{
	/* the catalog first: a cache lookup, where the extension is a scan */
	if (!bf_citus_catalog())
		return false;
	return OidIsValid(get_extension_oid("citus", true)) && bf_rel_is_distributed(relid);
}

/* does this database have Citus's catalog of distributed tables at all? */
bool
bf_citus_catalog(void)
{
	return OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE));
}

/*
 * Does this node run the shards' side of Citus's queries (a worker: its
 * pg_dist_local_group row has a group other than the coordinator's 0)?
 */
bool
bf_citus_worker(void)
{
	Oid			grouprel = get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE);
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		worker = false;

	if (!OidIsValid(grouprel) || !OidIsValid(get_extension_oid("citus", true)))
		return false;
	rel = table_open(grouprel, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup) && RelationGetDescr(rel)->natts >= 1 &&
		TupleDescAttr(RelationGetDescr(rel), 0)->atttypid == INT4OID)
	{
		bool		isnull;
		Datum		d = heap_getattr(tup, 1, RelationGetDescr(rel), &isnull);

		worker = !isnull && DatumGetInt32(d) != 0;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return worker;
}

static void
refuse(Oid relid, const char *what, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s: table \"%s\" does not hold its rows in its own storage",
					what, get_rel_name(relid)),
			 errdetail("%s", detail),
			 errhint("Build a filter from the rows instead, e.g. SELECT bf_agg(col) FROM table.")));
}

/*
 * Error out unless every row of relid (a table, or a partitioned table
 * and all its partitions) lives in a local heap that a scan and an index
 * see.  what names the caller for the message.
 */
void
bf_check_local_rows(Oid relid, const char *what)
{
	char		relkind = get_rel_relkind(relid);
	List	   *rels;
	ListCell   *lc;

	if (relkind == RELKIND_FOREIGN_TABLE)
		refuse(relid, what, "It is a foreign table: its rows live in another server.");
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s: \"%s\" is not a table", what, get_rel_name(relid)),
				 errdetail("Only tables and partitioned tables can have a filter of their rows.")));

	rels = relkind == RELKIND_PARTITIONED_TABLE ?
		find_all_inheritors(relid, AccessShareLock, NULL) : list_make1_oid(relid);
	foreach(lc, rels)
	{
		Oid			r = lfirst_oid(lc);

		if (get_rel_relkind(r) == RELKIND_FOREIGN_TABLE)
			refuse(relid, what,
				   psprintf("Its partition \"%s\" is a foreign table, whose rows live in another server.",
							get_rel_name(r)));
		if (bf_rel_is_distributed(r))
			refuse(relid, what,
				   "It is distributed by Citus: its rows live in shards on other nodes, and the table here is empty.");
	}
	list_free(rels);
}

/*
 * Error out when row-level security of relid applies to the current user
 * (policies on, and the user neither the owner nor exempt): the filter of
 * relid would reveal the keys of the rows the policies hide.
 */
void
bf_check_no_rls(Oid relid)
{
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("row-level security of table \"%s\" applies to you, so its filter cannot be read",
						get_rel_name(relid)),
				 errdetail("The filter holds the keys of every row, also of those the policies hide from you.")));
}
