/*-------------------------------------------------------------------------
 *
 * bf_join_keys.c
 *	  The keys of a join in a finished plan, for the join filters
 *	  (bf_join_plan.c): the scan that produces a key unchanged, followed
 *	  down from the join through the nodes that only pass rows on or drop
 *	  them (on the outer side, only those where dropping a row early
 *	  changes nothing), through the Append of a partitioned table's scans
 *	  on the inner side, and on the outer side to each branch's scan of an
 *	  Append or MergeAppend; and which equalities a filter may answer for.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"

#include "access/stratnum.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

/* e without the RelabelTypes around it (binary-compatible casts) */
Expr *
bf_join_strip(Expr *e)
{
	while (e && IsA(e, RelabelType))
		e = ((RelabelType *) e)->arg;
	return e;
}

/* a scan whose quals see its own relation's columns as Vars of scanrelid */
static bool
is_plain_scan(Plan *p)
{
	switch (nodeTag(p))
	{
		case T_SeqScan:
		case T_SampleScan:
		case T_IndexScan:
		case T_BitmapHeapScan:
		case T_TidScan:
		case T_TidRangeScan:
		case T_SubqueryScan:
		case T_FunctionScan:
		case T_ValuesScan:
		case T_CteScan:
			return true;
		default:
			return false;
	}
}

/*
 * The table's column that an index-only scan's Var v (INDEX_VAR, a column
 * of the index) stands for; NULL when it is not a plain column
 */
Var *
bf_join_index_column(IndexOnlyScan *ios, Var *v)
{
	TargetEntry *tle;
	Var		   *col;

	if (v->varno != INDEX_VAR ||
		(tle = get_tle_by_resno(ios->indextlist, v->varattno)) == NULL)
		return NULL;
	col = (Var *) bf_join_strip(tle->expr);
	return IsA(col, Var) && col->varattno > 0 ? col : NULL;
}

/*
 * The column of the partitioned table at the top of the partition tree
 * that col, a column of a partition's scan, stands for; NULL if it is no
 * partition's (or no plain column of the top table).
 */
static Var *
top_column(List *apprels, Var *col)
{
	Var		   *v = col;
	bool		moved = false;

	for (;;)
	{
		AppendRelInfo *found = NULL;
		ListCell   *lc;
		AttrNumber	parent_att;

		foreach(lc, apprels)
			if (((AppendRelInfo *) lfirst(lc))->child_relid == (Index) v->varno)
				found = lfirst(lc);
		if (found == NULL)
			return moved ? v : NULL;
		/* the finished plan keeps parent_colnos (translated_vars are dropped) */
		if (v->varattno > found->num_child_cols ||
			(parent_att = found->parent_colnos[v->varattno - 1]) <= 0)
			return NULL;
		v = makeVar(found->parent_relid, parent_att, v->vartype, v->vartypmod,
					v->varcollid, 0);
		moved = true;
	}
}

/*
 * An inner key through an Append or MergeAppend of partitions' scans (a
 * partitioned table): every partition's scan produces the key from the
 * same column of the same partitioned table, which is *column; *scan is
 * the first partition's scan.
 */
static bool
find_partitions_scan(List *apprels, List *children, Expr *e, Scan **scan, Var **var,
					 Var **column)
{
	ListCell   *lc;
	Var		   *top = NULL;

	foreach(lc, children)
	{
		Scan	   *s;
		Var		   *v,
				   *c,
				   *t;

		/* the Append's Vars name its children's outputs as OUTER_VAR */
		if (!bf_join_find_scan(apprels, lfirst(lc), NULL, e, false, &s, &v, &c) ||
			(t = top_column(apprels, c)) == NULL ||
			(top != NULL && (t->varno != top->varno || t->varattno != top->varattno)))
			return false;
		if (top == NULL)
		{
			top = t;
			*scan = s;
			*var = v;
		}
	}
	*column = top;
	return top != NULL;
}

/*
 * bf_join_find_scan's walk.  scans/vars non-NULL (an outer key only): an
 * Append or MergeAppend on the way is crossed too, each of its branches
 * followed on its own; every scan found is appended to *scans and its Var
 * to *vars, and the first one found is the one returned.  A branch without one
 * is left out: its rows are then not filtered, which drops nothing
 * wrongly.
 */
static bool
find_scan(List *apprels, Plan *outer, Plan *inner, Expr *e, bool outer_side,
		  Scan **scan, Var **var, Var **column, List **scans, List **vars)
{
	Plan	   *p;
	TargetEntry *tle;
	Var		   *v = (Var *) bf_join_strip(e);
	List	   *branches = NIL;
	ListCell   *lc;
	bool		found = false;

	if (v == NULL || !IsA(v, Var) || v->varattno <= 0)
		return false;
	p = v->varno == OUTER_VAR ? outer : v->varno == INNER_VAR ? inner : NULL;
	if (p == NULL || (tle = get_tle_by_resno(p->targetlist, v->varattno)) == NULL)
		return false;
	if (is_plain_scan(p) || IsA(p, IndexOnlyScan))
	{
		Var		   *sv = (Var *) bf_join_strip(tle->expr);
		Var		   *col = sv;

		if (!IsA(sv, Var) || sv->varattno <= 0 || sv->varlevelsup != 0)
			return false;
		if (IsA(p, IndexOnlyScan) && (col = bf_join_index_column((IndexOnlyScan *) p, sv)) == NULL)
			return false;
		if (col->varno != (int) ((Scan *) p)->scanrelid)
			return false;
		*scan = (Scan *) p;
		*var = sv;
		*column = col;
		if (scans != NULL)
		{
			*scans = lappend(*scans, p);
			*vars = lappend(*vars, sv);
		}
		return true;
	}
	switch (nodeTag(p))
	{
		case T_Sort:
		case T_IncrementalSort:
		case T_Material:
		case T_Memoize:
		case T_Gather:
		case T_GatherMerge:
		case T_Hash:
			break;
		case T_Unique:
		case T_Agg:
		case T_Limit:
		case T_Result:
			if (outer_side)
				return false;
			break;
		case T_NestLoop:
		case T_HashJoin:
		case T_MergeJoin:
			if (outer_side && ((Join *) p)->jointype != JOIN_INNER &&
				((Join *) p)->jointype != JOIN_SEMI)
				return false;
			break;
		case T_Append:
			branches = ((Append *) p)->appendplans;
			break;
		case T_MergeAppend:
			branches = ((MergeAppend *) p)->mergeplans;
			break;
		default:
			return false;
	}
	if (!IsA(p, Append) && !IsA(p, MergeAppend))
		return find_scan(apprels, outerPlan(p), innerPlan(p), tle->expr, outer_side, scan,
						 var, column, scans, vars);
	if (!outer_side)
		return find_partitions_scan(apprels, branches, tle->expr, scan, var, column);
	if (scans == NULL)
		return false;
	/* the Append's Vars name its branches' outputs as OUTER_VAR */
	foreach(lc, branches)
	{
		Scan	   *s;
		Var		   *sv,
				   *c;

		if (find_scan(apprels, lfirst(lc), NULL, tle->expr, true, &s, &sv, &c, scans, vars) &&
			!found)
		{
			*scan = s;
			*var = sv;
			*column = c;
			found = true;
		}
	}
	return found;
}

/*
 * Follow the Var e (OUTER_VAR or INNER_VAR of a node whose children are
 * outer and inner) down to the scan that produces it unchanged: *scan,
 * the Var a qual of the scan names it by (*var), and the table's column
 * (*column: the same Var but for an index-only scan, whose quals name the
 * index's columns).  outer_side: e is a join's outer key, so only the
 * nodes through which filtering is harmless are crossed; otherwise any
 * node that passes rows on or drops them, and the Append of a partitioned
 * table's scans (apprels: the plan's AppendRelInfos, which tell the
 * partitioned table's column; *column is then that column).
 */
bool
bf_join_find_scan(List *apprels, Plan *outer, Plan *inner, Expr *e, bool outer_side,
				  Scan **scan, Var **var, Var **column)
{
	return find_scan(apprels, outer, inner, e, outer_side, scan, var, column, NULL, NULL);
}

/*
 * The scans that produce a join's outer key e unchanged: the one of
 * bf_join_find_scan, or through an Append or MergeAppend (the scans of a
 * partitioned table's partitions, the branches of a UNION ALL) those of
 * its branches (find_scan), a Scan in *scans and its Var in *vars each;
 * *column: the first's column, or the partitioned table's that the
 * partitions' columns stand for.  False when there is none.
 */
bool
bf_join_find_outer_scans(List *apprels, Plan *outer, Plan *inner, Expr *e, List **scans,
						 List **vars, Var **column)
{
	Scan	   *scan;
	Var		   *var;
	Var		   *top;

	*scans = NIL;
	*vars = NIL;
	if (!find_scan(apprels, outer, inner, e, true, &scan, &var, column, scans, vars))
		return false;
	/* the partitions' scans: name the partitioned table's column */
	if (list_length(*scans) > 1 && (top = top_column(apprels, *column)) != NULL)
		*column = top;
	return true;
}

/*
 * The table column that column (of bf_join_find_outer_scans) names for
 * every one of scans: itself for one scan, the partitioned table's for
 * its partitions' scans; NULL for the branches of a UNION ALL.
 */
Var *
bf_join_table_column(List *scans, Var *column)
{
	if (list_length(scans) == 1 ||
		column->varno != (int) ((Scan *) linitial(scans))->scanrelid)
		return column;
	return NULL;
}

static bool
integer_type(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

/*
 * May a filter of the inner keys (an index's, a tracked column's, or a
 * run-time filter, which hash the same way) answer for this equality?
 * opno must be the equality of the inner type's default hash operator
 * class (that is the equality the filters' hashing agrees with; another
 * one, a case-insensitive operator of an extension say, could call keys
 * equal that hash apart), between the same type or two integer types
 * (which hash alike), under a deterministic collation.
 */
bool
bf_join_key_ok(Oid opno, Oid coll, Oid outer_type, Oid inner_type)
{
	Oid			ot = getBaseType(outer_type);
	Oid			it = getBaseType(inner_type);
	Oid			opclass = GetDefaultOpClass(it, HASH_AM_OID);

	return (ot == it || (integer_type(ot) && integer_type(it))) &&
		OidIsValid(opclass) &&
		get_opfamily_member(get_opclass_family(opclass), ot, it, HTEqualStrategyNumber) == opno &&
		(!OidIsValid(coll) || get_collation_isdeterministic(coll));
}
