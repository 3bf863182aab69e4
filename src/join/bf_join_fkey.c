/*-------------------------------------------------------------------------
 *
 * bf_join_fkey.c
 *	  Does the catalog prove that a join filter removes nothing?  A
 *	  validated foreign key from the outer key's column to the inner key's
 *	  column, or a chain of them through other tables, says every outer
 *	  key (not NULL) is a key of the inner table:
 *	  a filter of all the inner table's keys (an index's, a tracked
 *	  column's, or a run-time filter of an inner side without quals) then
 *	  passes every row, and costs its tests for nothing.  The planner
 *	  matches foreign keys to joins too (root->fkey_list), but that is gone
 *	  with the PlannerInfo when the hook sees the finished plan, so the
 *	  relation cache's list is read here.  And what ANALYZE says of the
 *	  inner key: its rows per value, which the join's estimate counts.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_constraint.h"
#include "catalog/pg_statistic.h"
#include "miscadmin.h"
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

/* how many foreign keys a proof may follow: outer -> ... -> inner */
#define FKEY_MAX_HOPS 3

/*
 * Is every value (not NULL) of column attnum of relid a value of inner's
 * column, by a chain of at most hops validated foreign keys?  Each key
 * holds for the column it maps (holds_for_column), so each table's column
 * holds only values of the next: TPC-H's l_partkey references partsupp
 * with l_suppkey, and partsupp's ps_partkey references part.
 */
static bool
fkey_chain(Oid relid, AttrNumber attnum, Oid inner_relid, AttrNumber inner_attnum, int hops)
{
	Relation	rel;
	List	   *fkeys;
	ListCell   *lc;
	bool		found = false;

	if (hops <= 0)
		return false;
	CHECK_FOR_INTERRUPTS();
	rel = table_open(relid, AccessShareLock);	/* a referenced table may be
												 * new to the query */
	fkeys = RelationGetFKeyList(rel);
	foreach(lc, fkeys)
	{
		ForeignKeyCacheInfo *fk = lfirst(lc);

		for (int i = 0; i < fk->nkeys && !found; i++)
		{
			if (fk->conkey[i] != attnum || !holds_for_column(fk, i))
				continue;
			found = (fk->confrelid == inner_relid && fk->confkey[i] == inner_attnum) ||
				fkey_chain(fk->confrelid, fk->confkey[i], inner_relid, inner_attnum, hops - 1);
		}
		if (found)
			break;
	}
	table_close(rel, NoLock);
	return found;
}

/*
 * Do validated foreign keys of outer's table say that each of its
 * column's values is one of inner's column: directly, or through other
 * tables' keys?  outer and inner: columns of plain or partitioned tables
 * of the plan's range table.
 */
bool
bf_join_fkey_covers(List *rtable, Var *outer, Var *inner)
{
	RangeTblEntry *orte = rt_fetch(outer->varno, rtable);
	RangeTblEntry *irte = rt_fetch(inner->varno, rtable);

	if (orte->rtekind != RTE_RELATION || irte->rtekind != RTE_RELATION ||
		outer->varattno <= 0 || inner->varattno <= 0)
		return false;
	return fkey_chain(orte->relid, outer->varattno, irte->relid, inner->varattno,
					  FKEY_MAX_HOPS);
}

/* the rows of a table, as its last ANALYZE counted them (-1: unknown) */
double
bf_join_table_rows(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);	/* locked by the planner */
	double		rows = rel->rd_rel->reltuples;

	table_close(rel, NoLock);
	return rows;
}

/*
 * The distinct values of column var and the rows of its table, as ANALYZE
 * last counted them; false where that is not known
 */
static bool
column_ndistinct(List *rtable, Var *var, double *nd, double *rows)
{
	RangeTblEntry *rte = rt_fetch(var->varno, rtable);
	HeapTuple	tup;

	if (rte->rtekind != RTE_RELATION || var->varattno <= 0)
		return false;
	tup = SearchSysCache3(STATRELATTINH, ObjectIdGetDatum(rte->relid),
						  Int16GetDatum(var->varattno), BoolGetDatum(rte->inh));
	if (!HeapTupleIsValid(tup))
		return false;
	*nd = ((Form_pg_statistic) GETSTRUCT(tup))->stadistinct;
	ReleaseSysCache(tup);
	*rows = bf_join_table_rows(rte->relid);
	if (*nd < 0)
		*nd = -*nd * *rows;
	return *nd > 0 && *rows > 0;
}

/*
 * The rows per distinct value of inner's column: a join's estimated rows
 * count an outer key once per partner, so they say how many outer keys
 * find one only divided by this.  1 where it is not known.
 */
double
bf_join_key_dups(List *rtable, Var *inner)
{
	double		nd,
				rows;

	if (!column_ndistinct(rtable, inner, &nd, &rows))
		return 1.0;
	return Max(1.0, rows / nd);
}

/*
 * The share of outer's distinct values that inner's column (of its whole
 * table) holds, if the fewer are among the more, as the planner's join
 * estimates take them: what a filter of the whole inner table (an index,
 * a tracked filter) passes, whatever quals the query puts on the inner
 * side.  0 where it is not known.
 */
double
bf_join_key_presence(List *rtable, Var *outer, Var *inner)
{
	double		ond,
				ind,
				rows;

	if (outer == NULL || !column_ndistinct(rtable, outer, &ond, &rows) ||
		!column_ndistinct(rtable, inner, &ind, &rows))
		return 0.0;
	return Min(1.0, ind / ond);
}
