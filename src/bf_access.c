/*-------------------------------------------------------------------------
 *
 * bf_access.c
 *	  Who may read a bloomfilter index.  The filter reveals which keys its
 *	  table holds, all rows included (row-level security does not apply
 *	  to it), so reading it needs SELECT on every column the index reads
 *	  (its key columns and the columns of its expressions and predicate; a
 *	  whole-row reference needs SELECT on the table; table-level SELECT
 *	  covers all of them), and the SQL functions refuse a reader whom
 *	  row-level security restricts.  The SQL functions check the current user; the
 *	  planner checks the user a query runs as (bf_scan.c).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"
#include "bf_relcheck.h"

#include "access/sysattr.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

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
