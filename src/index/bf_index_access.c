/*-------------------------------------------------------------------------
 *
 * bf_index_access.c
 *	  Opening a bloomfilter index for lookups (only one that holds every
 *	  key of its table may answer), and who may read it.  The filter
 *	  reveals which keys its table holds, all rows included (row-level
 *	  security does not apply to it), so reading it needs SELECT on every
 *	  column the index reads (its key columns and the columns of its
 *	  expressions and predicate; a whole-row reference needs SELECT on the
 *	  table; table-level SELECT covers all of them), and the SQL functions
 *	  refuse a reader whom row-level security restricts.  The SQL functions
 *	  check the current user; the planner checks the user a query runs as
 *	  (bf_index_scan.c).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/genam.h"
#include "access/sysattr.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "bf_relcheck.h"

/* the table columns an index reads, offset by FirstLowInvalidHeapAttributeNumber */
static Bitmapset *
bf_index_columns(Relation index)
{
	Bitmapset  *cols = NULL;
	List	   *exprs;

	for (int i = 0; i < index->rd_index->indnatts; i++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[i];

		if (attnum != 0)
			cols = bms_add_member(cols, attnum - FirstLowInvalidHeapAttributeNumber);
	}
	exprs = RelationGetIndexExpressions(index);
	if (exprs)
		pull_varattnos((Node *) exprs, 1, &cols);
	exprs = RelationGetIndexPredicate(index);
	if (exprs)
		pull_varattnos((Node *) exprs, 1, &cols);
	return cols;
}

/*
 * May userid read every column of relid that the index reads?  relid is
 * the index's table, or an inheritance ancestor of it (a query on a
 * partitioned table checks privileges on that table only): columns are
 * then matched by name, which inheritance keeps.  On false, *badcol is
 * the first column refused (InvalidAttrNumber: a whole-row reference).
 */
bool
bf_index_readable(Relation index, Oid userid, Oid relid, AttrNumber *badcol)
{
	Oid			heapoid = index->rd_index->indrelid;
	Bitmapset  *cols;
	bool		ok = true;
	int			x = -1;

	if (pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK)
		return true;
	cols = bf_index_columns(index);
	while (ok && (x = bms_next_member(cols, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;

		if (attnum != InvalidAttrNumber && relid != heapoid)
			attnum = get_attnum(relid, get_attname(heapoid, attnum, false));
		if (attnum == InvalidAttrNumber ||
			pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) != ACLCHECK_OK)
		{
			ok = false;
			if (badcol)
				*badcol = attnum;
		}
	}
	bms_free(cols);
	return ok;
}

/*
 * May this transaction's snapshots trust the index's "absent"?  One built
 * while rows of the table were HOT-updated (indcheckxmin) lacks the keys
 * of the older versions, which a snapshot taken before the build may still
 * see, until every transaction that could is gone (the planner waits as
 * long before it uses such an index).
 */
bool
bf_index_current(Relation index)
{
	return !index->rd_index->indcheckxmin ||
		TransactionIdPrecedes(HeapTupleHeaderGetXmin(index->rd_indextuple->t_data),
							  TransactionXmin);
}

/*
 * Does the index hold every key of its table: built, ready for inserts
 * and not being dropped (any index: the test of a catalog row)
 */
bool
bf_index_complete(Form_pg_index ix)
{
	return ix->indisvalid && ix->indisready && ix->indislive;
}

/*
 * May a lookup in this transaction trust the index's "absent": a complete
 * bloomfilter index (a partitioned one: of which every partition has its
 * index), not newer than the snapshots (the join filters' test, which
 * must not fail where bf_index_check_complete would)
 */
bool
bf_index_answers(Relation index)
{
	return (index->rd_rel->relkind == RELKIND_INDEX ||
			index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX) &&
		bf_is_bloomfilter_am(index) && bf_index_complete(index->rd_index) &&
		bf_index_current(index);
}

/* error out unless the current user may read the index */
void
bf_index_check_access(Relation index)
{
	Oid			heapoid = index->rd_index->indrelid;
	AttrNumber	badcol;

	if (bf_index_readable(index, GetUserId(), heapoid, &badcol))
	{
		bf_check_no_rls(heapoid);
		return;
	}
	if (badcol == InvalidAttrNumber)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(heapoid));
	aclcheck_error_col(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(heapoid),
					   get_attname(heapoid, badcol, false));
}

/* the same for callers holding only the index's OID (bf_might_contain) */
void
bf_index_check_access_oid(Oid indexoid)
{
	Relation	index = bf_index_open(indexoid, true, "bf_might_contain");

	bf_index_check_access(index);
	index_close(index, NoLock);
}

/*
 * Only an index that holds every key of its table may answer "absent": a
 * valid, ready, live one.  An index left by a failed or cancelled CREATE
 * INDEX CONCURRENTLY (or one still being built) may lack keys.
 */
void
bf_index_check_complete(Relation index)
{
	if (bf_index_complete(index->rd_index))
		return;
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bloomfilter index \"%s\" is not valid",
						RelationGetRelationName(index)),
				 errdetail("Some partition has no valid index attached to it, so the filters may lack keys."),
				 errhint("Create or REINDEX the index of each partition and attach it with ALTER INDEX ... ATTACH PARTITION.")));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("bloomfilter index \"%s\" is not valid",
					RelationGetRelationName(index)),
			 errdetail("It is still being built, or was left by a failed or cancelled CREATE INDEX CONCURRENTLY or REINDEX CONCURRENTLY, so it may lack keys."),
			 errhint("Rebuild it with REINDEX INDEX %s.",
					 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(index)),
												RelationGetRelationName(index)))));
}

/*
 * Open a bloomfilter index that may answer lookups, locking its table
 * first (the usual order) and then the index, both AccessShareLock until
 * the end of the transaction.  Partitioned indexes are accepted when
 * allow_partitioned.  Refused: indexes that may lack keys, and tables
 * whose rows are not in their own heap (what names the caller).
 */
Relation
bf_index_open(Oid indexoid, bool allow_partitioned, const char *what)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
	{
		char	   *name = get_rel_name(indexoid);

		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("index with OID %u does not exist", indexoid)));
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name),
				 errhint("Pass a bloomfilter index, e.g. 'users_email_bf'::regclass.")));
	}
	LockRelationOid(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	/* this backend's reads see the keys it has inserted */
	bf_pending_flush_all();
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		if (!allow_partitioned)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is a partitioned index", RelationGetRelationName(index)),
					 errdetail("Each partition has a filter of its own, possibly of another size."),
					 errhint("Call the function on the index of each partition.")));
		if (index->rd_rel->relam != get_index_am_oid("bloomfilter", false))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a bloomfilter index", RelationGetRelationName(index))));
	}
	else if (!bf_is_bloomfilter_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a bloomfilter index", RelationGetRelationName(index)),
				 errhint("Create one with CREATE INDEX ... USING bloomfilter (column).")));
	bf_index_check_complete(index);
	bf_check_local_rows(heapoid, what);
	return index;
}
