/*-------------------------------------------------------------------------
 *
 * bf_join_fkey.c
 *	  Does the catalog prove that a join filter removes nothing?  A
 *	  validated foreign key from the outer key's column to the inner key's
 *	  column says every outer key (not NULL) is a key of the inner table:
 *	  a filter of all the inner table's keys (an index's, a tracked
 *	  column's, or a run-time filter of an inner side without quals) then
 *	  passes every row, and costs its tests for nothing.  The planner
 *	  matches foreign keys to joins too (root->fkey_list), but that is gone
 *	  with the PlannerInfo when the hook sees the finished plan, so the
 *	  relation cache's list is read here.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_constraint.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

/* is column attnum of relid NOT NULL? */
static bool
not_null(Oid relid, AttrNumber attnum)
{
	HeapTuple	tup = SearchSysCacheAttNum(relid, attnum);
	bool		nn;

	if (!HeapTupleIsValid(tup))
		return false;
	nn = ((Form_pg_attribute) GETSTRUCT(tup))->attnotnull;
	ReleaseSysCache(tup);
	return nn;
}

/*
 * Does the foreign key fk, whose column i references, hold for that
 * column alone: validated (enforced), and of one column, or MATCH FULL, or
 * with every other referencing column NOT NULL (MATCH SIMPLE checks no
 * row with a NULL in any of them)?
 */
static bool
holds_for_column(ForeignKeyCacheInfo *fk, int i)
{
	HeapTuple	tup = SearchSysCache1(CONSTROID, ObjectIdGetDatum(fk->conoid));
	bool		validated,
				full;

	if (!HeapTupleIsValid(tup))
		return false;
	validated = ((Form_pg_constraint) GETSTRUCT(tup))->convalidated;
	full = ((Form_pg_constraint) GETSTRUCT(tup))->confmatchtype == FKCONSTR_MATCH_FULL;
	ReleaseSysCache(tup);
	if (!validated)
		return false;
	for (int j = 0; j < fk->nkeys && !full; j++)
		if (j != i && !not_null(fk->conrelid, fk->conkey[j]))
			return false;
	return true;
}

/*
 * Does a validated foreign key of outer's table reference inner's column
 * from outer's column?  outer and inner: columns of plain or partitioned
 * tables of the plan's range table.
 */
bool
bf_join_fkey_covers(List *rtable, Var *outer, Var *inner)
{
	RangeTblEntry *orte = rt_fetch(outer->varno, rtable);
	RangeTblEntry *irte = rt_fetch(inner->varno, rtable);
	Relation	rel;
	List	   *fkeys;
	ListCell   *lc;
	bool		found = false;

	if (orte->rtekind != RTE_RELATION || irte->rtekind != RTE_RELATION ||
		outer->varattno <= 0 || inner->varattno <= 0)
		return false;
	rel = table_open(orte->relid, NoLock);	/* locked by the planner */
	fkeys = RelationGetFKeyList(rel);
	foreach(lc, fkeys)
	{
		ForeignKeyCacheInfo *fk = lfirst(lc);

		if (fk->confrelid != irte->relid)
			continue;
		for (int i = 0; i < fk->nkeys && !found; i++)
			found = fk->conkey[i] == outer->varattno && fk->confkey[i] == inner->varattno &&
				holds_for_column(fk, i);
		if (found)
			break;
	}
	table_close(rel, NoLock);
	return found;
}
