/*-------------------------------------------------------------------------
 *
 * bf_join_plan.c
 *	  Join pre-filters from bloomfilter indexes: a planner hook that, in a
 *	  finished plan, gives the scan producing a join's outer keys the qual
 *	  bf_join_prefilter(index, key) (bf_join_filter.c) when the join's
 *	  inner relation has a bloomfilter index on the key.  An outer row whose
 *	  key the index says is absent cannot join, so it is dropped where it is
 *	  read, before it costs a hash probe, a sort, a btree descent of a
 *	  parameterized index scan, or a place in a temp file.
 *
 * Why a rewrite of the finished plan.  The join method, the sides and the
 * keys are decided by then, and the qual is an ordinary one: EXPLAIN shows
 * it in the scan's Filter line and EXPLAIN ANALYZE the rows it removed,
 * and nothing else of the plan changes (the cost-based choice between
 * plans with and without it, which a path hook would allow, is left out:
 * the filter is cheap where it is applied, and switches itself off at run
 * time where it drops too little).  PostgreSQL 17 and 18 did not change
 * the parts used here (the join nodes' clauses in outer/inner order, the
 * scans' target lists after set_plan_references), apart from new join
 * types (right anti, right semi), which this file does not touch.
 *
 * When it is safe.  Only where an outer row without a partner is dropped
 * by the join: inner and semi joins, and right joins (whose outer side is
 * the nullable one); never left, full or anti joins.  An anti join by
 * nested loop gets the filter on its inner side instead
 * (gate_inner_scan).  The key must reach the join unchanged from a scan:
 * through sorts, materializations, gathers and inner or semi joins, never
 * through a limit, an aggregate or a window (filtering below those would
 * change which rows they pick or count), and not into a scan whose output
 * calls volatile functions; through an Append or MergeAppend (an outer
 * partitioned table), each branch's scan gets the filter.  On the inner side
 * the key must be a column of a plain table with a complete bloomfilter
 * index on it, seen through any node that only passes rows on or drops
 * them: then every inner key is a key of the index.  A partitioned table
 * is seen through the Append of its partitions' scans (each naming the
 * same column of it, through the plan's AppendRelInfos), and its
 * partitioned index answers (each partition's index); an inheritance
 * parent's index holds its own rows only, and answers for none.  The equality
 * must be one the index hashes alike on both sides: the same type, or two
 * integer types, under a deterministic collation.  A user who may not read
 * the column, or whom row-level security restricts on the inner table,
 * gets no filter (it would tell rows that security hides from rows that do
 * not exist); the run-time function checks again, for a plan run by
 * another user.
 *
 * bloomfilter.join_filter: off, on (wherever safe) or auto (pays(): where
 * the join does more per outer row than a lookup costs, and the planner
 * expects the filter to drop at least 10 000 rows and keep at most 60 % of
 * the outer side).
 *
 * The same pass gives each hash join's keys that got no pre-filter a
 * run-time filter built from its inner side (bf_join_runtime.c,
 * bloomfilter.runtime_join_filter), so the hook runs when either setting
 * is on.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"
#include "bf_join.h"
#include "bf_track.h"

#include <math.h>

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/syscache.h"

static int	join_filter_mode = BF_JOIN_FILTER_AUTO;

/*
 * a run-time filter instead of an index's where the inner side holds less
 * than this share of the table's keys (estimates: clearly fewer)
 */
#define PREFER_RUNTIME_FRACTION	0.9
static planner_hook_type prev_planner = NULL;


/* what one plan is rewritten with */
typedef struct JoinRewrite
{
	PlannedStmt *stmt;
	Oid			funcoid;		/* bf_join_prefilter(regclass, anyelement) */
	Oid			tracked_funcoid;	/* bf_join_tracked_prefilter(regclass,
									 * name, anyelement) */
	Oid			runtime_funcoid;	/* bf_runtime_filter(integer, anyelement) */
	bool		changed;
	bool		tracked_changed;
	bool		runtime_changed;
	int			last_node_id;	/* bf_join_node_ids(): -1 until a node is
								 * added */
	int			next_filter_id; /* the next run-time filter's number */
	List	   *placed;			/* the pre-filters of the join at hand */
} JoinRewrite;

static Plan **inner_index_scan(NestLoop *nl);

/* ---- the keys of a join, and the index that answers for them ---- */

/*
 * One equality of a join: the outer key as its scan's quals name it
 * (ovar), the inner table's column (icol), the operator taking the outer
 * key first, and its collation.
 */
typedef struct KeyPair
{
	Scan	   *oscan;			/* NULL: okey is a nested loop's parameter */
	Expr	   *okey;
	Var		   *ocol;			/* the outer table's column; NULL: unknown */
	Scan	   *iscan;
	Var		   *icol;
	Oid			opno;
	Oid			coll;
	bool		hashed;			/* a hash join's hash clause */
} KeyPair;

/*
 * May the filter answer for this pair: an equality a filter answers for
 * (bf_join_key_ok), and an outer scan that computes no volatile output
 * for rows the join would have dropped only later?
 */
static bool
pair_ok(const KeyPair *kp)
{
	return bf_join_key_ok(kp->opno, kp->coll, exprType((Node *) kp->okey), kp->icol->vartype) &&
		(kp->oscan == NULL || !contain_volatile_functions((Node *) kp->oscan->plan.targetlist));
}

/* the equality of pairs whose inner column is attnum (NULL: none) */
static KeyPair *
pair_of(List *pairs, AttrNumber attnum)
{
	ListCell   *lc;

	foreach(lc, pairs)
		if (((KeyPair *) lfirst(lc))->icol->varattno == attnum)
			return lfirst(lc);
	return NULL;
}

/* is rte a plain or partitioned table, the inner tables a filter answers for? */
static bool
table_rte(const RangeTblEntry *rte)
{
	return rte->rtekind == RTE_RELATION &&
		(rte->relkind == RELKIND_RELATION || rte->relkind == RELKIND_PARTITIONED_TABLE);
}

/*
 * The complete bloomfilter index of the inner scan's plain table whose key
 * columns all have an equality in pairs (all of one outer scan and one
 * inner scan), the one with the most columns; *keys gets their pairs in
 * the index's column order.  InvalidOid when there is none, or the user
 * may not read it, or row-level security restricts the table for them.
 */
static Oid
inner_index(PlannedStmt *stmt, List *pairs, List **keys)
{
	Index		varno = ((KeyPair *) linitial(pairs))->icol->varno;
	RangeTblEntry *rte = rt_fetch(varno, stmt->rtable);
	ListCell   *la;
	Relation	rel;
	List	   *indexes;
	ListCell   *lc;
	Oid			found = InvalidOid;
	int			best = 0;

	if (!table_rte(rte) || check_enable_rls(rte->relid, InvalidOid, true) != RLS_NONE)
		return InvalidOid;
	/* an inheritance parent's index holds its own rows only, not its children's */
	foreach(la, stmt->appendRelations)
		if (((AppendRelInfo *) lfirst(la))->parent_relid == varno &&
			rte->relkind != RELKIND_PARTITIONED_TABLE)
			return InvalidOid;
	rel = table_open(rte->relid, NoLock);	/* locked by the planner */
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		int			n = index->rd_index->indnkeyatts;
		List	   *match = NIL;

		if (n > best && bf_index_answers(index) &&
			RelationGetIndexExpressions(index) == NIL &&
			RelationGetIndexPredicate(index) == NIL &&
			bf_index_readable(index, GetUserId(), rte->relid, NULL))
		{
			for (int i = 0; i < n; i++)
			{
				KeyPair    *kp = pair_of(pairs, index->rd_index->indkey.values[i]);

				if (kp == NULL)
				{
					list_free(match);
					match = NIL;
					break;
				}
				match = lappend(match, kp);
			}
			if (match != NIL)
			{
				found = RelationGetRelid(index);
				best = n;
				*keys = match;
			}
		}
		index_close(index, AccessShareLock);
	}
	list_free(indexes);
	table_close(rel, NoLock);
	/* a later snapshot may use an index this one may not: plan again then */
	if (OidIsValid(found))
		stmt->transientPlan = true;
	return found;
}

/*
 * The pair of pairs whose inner column, of the inner scan's plain or
 * partitioned table, is tracked by the trigger method with a filter the
 * user may use (bf_tracked_join_usable); NULL if none.
 */
static KeyPair *
inner_tracked(JoinRewrite *rw, List *pairs)
{
	RangeTblEntry *rte = rt_fetch(((KeyPair *) linitial(pairs))->icol->varno, rw->stmt->rtable);
	const BfExt *ext;
	ListCell   *lc;

	if (!OidIsValid(rw->tracked_funcoid) || !table_rte(rte) ||
		(ext = bf_ext(rw->tracked_funcoid, true)) == NULL)
		return NULL;
	foreach(lc, pairs)
	{
		KeyPair    *kp = lfirst(lc);
		char	   *col = get_attname(rte->relid, kp->icol->varattno, true);

		if (col != NULL && bf_tracked_join_usable(ext, rte->relid, col, GetUserId()))
		{
			/* a later snapshot, or another user, may not use it: plan again */
			rw->stmt->transientPlan = true;
			return kp;
		}
	}
	return NULL;
}

/*
 * The qual bf_join_tracked_prefilter(table, column, key) of pair kp, whose
 * inner column is tracked by the trigger method
 */
static FuncExpr *
tracked_qual(JoinRewrite *rw, KeyPair *kp)
{
	Oid			relid = rt_fetch(kp->icol->varno, rw->stmt->rtable)->relid;
	Name		col = palloc0(NAMEDATALEN);

	namestrcpy(col, get_attname(relid, kp->icol->varattno, false));
	rw->tracked_changed = true;
	return makeFuncExpr(rw->tracked_funcoid, BOOLOID,
						list_make3(makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
											 ObjectIdGetDatum(relid), false, true),
								   makeConst(NAMEOID, -1, C_COLLATION_OID, NAMEDATALEN,
											 NameGetDatum(col), false, false),
								   copyObject(kp->okey)),
						InvalidOid, kp->coll, COERCE_EXPLICIT_CALL);
}

/* ---- rewriting ---- */

/* does the index pre-filter of the join pay (bloomfilter.join_filter)? */
static bool
pays(Join *join, double inner_fraction, double inner_dups, double kept_least)
{
	return bf_join_pays(join, join_filter_mode, HUGE_VAL, inner_fraction, inner_dups,
						kept_least);
}

/*
 * The share of the inner table's keys that the join's inner side holds,
 * after its own quals: an index's filter holds them all, a run-time
 * filter only these.  For a parameterized inner scan, whose estimate is
 * per outer row, the rows it expects against the key's rows per value.
 */
static double
inner_fraction(JoinRewrite *rw, Join *join, KeyPair *kp)
{
	Plan	  **slot;
	double		rows;

	if (IsA(join, NestLoop) && (slot = inner_index_scan((NestLoop *) join)) != NULL &&
		*slot == (Plan *) kp->iscan)
		return Min(1.0, (*slot)->plan_rows / bf_join_key_dups(rw->stmt->rtable, kp->icol));
	rows = bf_join_table_rows(rt_fetch(kp->icol->varno, rw->stmt->rtable)->relid);
	if (rows <= 0)
		return 1.0;
	return Min(1.0, innerPlan(join)->plan_rows / rows);
}

/* does a foreign key say that each of keys (some) finds its partner? */
static bool
fkey_covered(JoinRewrite *rw, List *keys)
{
	ListCell   *lc;

	if (keys == NIL)
		return false;
	foreach(lc, keys)
	{
		KeyPair    *kp = lfirst(lc);

		if (kp->ocol == NULL || !bf_join_fkey_covers(rw->stmt->rtable, kp->ocol, kp->icol))
			return false;
	}
	return true;
}

/* the fewest rows per value of keys' inner columns (bf_join_key_dups) */
static double
keys_dups(JoinRewrite *rw, List *keys)
{
	double		dups = HUGE_VAL;
	ListCell   *lc;

	foreach(lc, keys)
		dups = Min(dups, bf_join_key_dups(rw->stmt->rtable, ((KeyPair *) lfirst(lc))->icol));
	return keys == NIL ? 1.0 : dups;
}

/*
 * the least share of outer rows that a filter of the whole inner table
 * passes, by the key's distinct values (bf_join_key_presence); 0 for a
 * key of several columns, whose values' pairs the statistics do not count
 */
static double
keys_presence(JoinRewrite *rw, List *keys)
{
	KeyPair    *kp;

	if (list_length(keys) != 1)
		return 0.0;
	kp = linitial(keys);
	return bf_join_key_presence(rw->stmt->rtable, kp->ocol, kp->icol);
}

/*
 * will each of keys, of a hash join, get a run-time filter if left to it?
 * dups: keys_dups(keys)
 */
static bool
runtime_instead(JoinRewrite *rw, Join *join, List *keys, double dups)
{
	ListCell   *lc;

	if (!IsA(join, HashJoin) || !OidIsValid(rw->runtime_funcoid) ||
		!bf_join_runtime_wanted((HashJoin *) join, dups))
		return false;
	foreach(lc, keys)
	{
		KeyPair    *kp = lfirst(lc);

		if (!kp->hashed ||
			!bf_join_runtime_key_ok(exprType((Node *) kp->okey), kp->icol->vartype))
			return false;
	}
	return true;
}

/*
 * Should the join's keys get the pre-filter of an index or tracked filter
 * that answers for them?  Not where a foreign key says it removes nothing;
 * not where a run-time filter of the same keys is built from clearly
 * fewer of them (the inner side's quals drop some: it removes the rows the
 * pre-filter does and more); else where the setting says so (pays(): on
 * unless the planner expects it to keep almost every row, auto judging by
 * the rows the pre-filter (not the join) is expected to drop).  join NULL:
 * an anti join's gate, which pays() judged already.
 */
static bool
prefilter_wanted(JoinRewrite *rw, Join *join, List *keys)
{
	double		fraction,
				dups;

	if (fkey_covered(rw, keys))
		return false;
	if (join == NULL)
		return true;
	fraction = inner_fraction(rw, join, linitial(keys));
	dups = keys_dups(rw, keys);
	if (fraction < PREFER_RUNTIME_FRACTION && runtime_instead(rw, join, keys, dups))
		return false;
	return pays(join, fraction, dups, keys_presence(rw, keys));
}

/*
 * The filter qual of the index that answers for some of pairs (all of one
 * outer and one inner scan): bf_join_prefilter(index, key), the key itself
 * or a row of the keys for an index of several columns.  NULL when no
 * index answers.
 */
static FuncExpr *
filter_qual(JoinRewrite *rw, Join *join, List *pairs)
{
	List	   *keys = NIL;
	List	   *args = NIL;
	ListCell   *lc;
	Oid			indexoid = inner_index(rw->stmt, pairs, &keys);
	Expr	   *key;
	KeyPair    *tracked;

	if (!OidIsValid(indexoid))
	{
		/* no index: the filter of a column tracked by the trigger method */
		if ((tracked = inner_tracked(rw, pairs)) == NULL ||
			!prefilter_wanted(rw, join, list_make1(tracked)))
			return NULL;
		return tracked_qual(rw, tracked);
	}
	if (!prefilter_wanted(rw, join, keys))
		return NULL;
	foreach(lc, keys)
		args = lappend(args, copyObject(((KeyPair *) lfirst(lc))->okey));
	if (list_length(args) == 1)
		key = linitial(args);
	else
	{
		RowExpr    *row = makeNode(RowExpr);

		row->args = args;
		row->row_typeid = RECORDOID;
		row->row_format = COERCE_IMPLICIT_CAST;
		row->location = -1;
		key = (Expr *) row;
	}
	/* a plan that uses the index is made again when the index changes */
	rw->stmt->relationOids = lappend_oid(rw->stmt->relationOids, indexoid);
	rw->changed = true;
	return makeFuncExpr(rw->funcoid, BOOLOID,
						list_make2(makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
											 ObjectIdGetDatum(indexoid), false, true),
								   key),
						InvalidOid, ((KeyPair *) linitial(keys))->coll, COERCE_EXPLICIT_CALL);
}

/* give the outer scan of pairs the filter qual */
static void
add_filter(JoinRewrite *rw, Join *join, List *pairs)
{
	Scan	   *oscan = ((KeyPair *) linitial(pairs))->oscan;
	FuncExpr   *f = filter_qual(rw, join, pairs);

	/* unless another join gave it already */
	if (f != NULL && !list_member(oscan->plan.qual, f))
	{
		oscan->plan.qual = lappend(oscan->plan.qual, f);
		rw->placed = lappend(rw->placed, f);
	}
}

/* note an equality: its keys' scans found and the index allowed to answer */
static List *
add_pair(List *pairs, Scan *oscan, Expr *okey, Var *ocol, Scan *iscan, Var *icol, Oid opno,
		 Oid coll)
{
	KeyPair    *kp = palloc0(sizeof(KeyPair));

	kp->oscan = oscan;
	kp->okey = okey;
	kp->ocol = ocol;
	kp->iscan = iscan;
	kp->icol = icol;
	kp->opno = opno;
	kp->coll = coll;
	if (!pair_ok(kp))
	{
		pfree(kp);
		return pairs;
	}
	return lappend(pairs, kp);
}

/*
 * The pairs of an equality whose outer key oe (of outer or inner) some
 * scans produce, one for each (the partitions of an outer partitioned
 * table: bf_join_find_outer_scans)
 */
static List *
outer_pairs(List *pairs, List *apprels, Plan *outer, Plan *inner, Expr *oe, Scan *iscan,
			Var *icol, Oid opno, Oid coll)
{
	List	   *scans,
			   *vars;
	Var		   *ocol;
	ListCell   *ls,
			   *lv;

	if (bf_join_find_outer_scans(apprels, outer, inner, oe, &scans, &vars, &ocol))
	{
		ocol = bf_join_table_column(scans, ocol);
		forboth(ls, scans, lv, vars)
			pairs = add_pair(pairs, lfirst(ls), lfirst(lv), ocol, iscan, icol, opno, coll);
	}
	return pairs;
}

/*
 * An equality between outer key oe and inner key ie (Vars of the join's
 * children); opno takes the outer key first.
 */
static List *
consider(List *pairs, List *apprels, Join *join, Oid opno, Oid coll, Expr *oe, Expr *ie)
{
	Scan	   *iscan;
	Var		   *ivar,
			   *icol;

	if (bf_join_find_scan(apprels, outerPlan(join), innerPlan(join), ie, false, &iscan, &ivar,
						  &icol))
		pairs = outer_pairs(pairs, apprels, outerPlan(join), innerPlan(join), oe, iscan, icol,
							opno, coll);
	return pairs;
}

/*
 * The inner index scan of a nested loop, below a Memoize or Material, and
 * where the plan points to it (NULL: the inner side is something else)
 */
static Plan **
inner_index_scan(NestLoop *nl)
{
	Plan	  **slot = &nl->join.plan.righttree;

	while (*slot && (IsA(*slot, Memoize) || IsA(*slot, Material)))
		slot = &(*slot)->lefttree;
	return *slot && (IsA(*slot, IndexScan) || IsA(*slot, IndexOnlyScan)) ? slot : NULL;
}

/*
 * The equalities of a nested loop's parameterized inner index scan:
 * "inner column = parameter", the parameter an outer key.  With
 * as_params, each with the parameter as its key (for the scan's own
 * gate); else with the outer scan that produces the parameter's value.
 * Either way the filter spares a btree descent per outer row that has no
 * partner.
 */
static List *
param_pairs(List *pairs, List *apprels, NestLoop *nl, bool as_params)
{
	Plan	  **slot = inner_index_scan(nl);
	Plan	   *p;
	ListCell   *lc;
	List	   *quals;

	if (slot == NULL)
		return pairs;
	p = *slot;
	/* an index-only scan's quals name the index's columns (INDEX_VAR) */
	quals = IsA(p, IndexScan) ? ((IndexScan *) p)->indexqualorig :
		((IndexOnlyScan *) p)->indexqual;
	foreach(lc, quals)
	{
		OpExpr	   *op = lfirst(lc);
		Var		   *v;
		Param	   *prm;
		ListCell   *np;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		v = (Var *) bf_join_strip(linitial(op->args));
		prm = (Param *) bf_join_strip(lsecond(op->args));
		if (!IsA(v, Var) || !IsA(prm, Param) || prm->paramkind != PARAM_EXEC)
			continue;
		if (IsA(p, IndexOnlyScan) && (v = bf_join_index_column((IndexOnlyScan *) p, v)) == NULL)
			continue;
		if (v->varno != (int) ((Scan *) p)->scanrelid || v->varattno <= 0)
			continue;
		if (as_params)
		{
			pairs = add_pair(pairs, NULL, (Expr *) prm, NULL, (Scan *) p, v,
							 get_commutator(op->opno), op->inputcollid);
			continue;
		}
		foreach(np, nl->nestParams)
		{
			NestLoopParam *nlp = lfirst(np);

			if (nlp->paramno == prm->paramid)
				pairs = outer_pairs(pairs, apprels, outerPlan(nl), NULL, (Expr *) nlp->paramval,
									(Scan *) p, v, get_commutator(op->opno), op->inputcollid);
		}
	}
	return pairs;
}

/* the plans below p that walk() and max_node_id() visit */
static List *
child_plans(Plan *p)
{
	List	   *children = NIL;

	if (outerPlan(p))
		children = lappend(children, outerPlan(p));
	if (innerPlan(p))
		children = lappend(children, innerPlan(p));
	if (IsA(p, Append))
		children = list_concat(children, ((Append *) p)->appendplans);
	else if (IsA(p, MergeAppend))
		children = list_concat(children, ((MergeAppend *) p)->mergeplans);
	else if (IsA(p, SubqueryScan))
		children = lappend(children, ((SubqueryScan *) p)->subplan);
	return children;
}

/* the largest plan_node_id in the plan */
static int
max_node_id(Plan *p)
{
	List	   *children = child_plans(p);
	ListCell   *lc;
	int			m = p->plan_node_id;

	foreach(lc, children)
		m = Max(m, max_node_id(lfirst(lc)));
	list_free(children);
	return m;
}

/*
 * The last plan_node_id given out in stmt, to number a new node from:
 * *last, found in the plan the first time a node is added (-1 until then;
 * most plans get none)
 */
int *
bf_join_node_ids(PlannedStmt *stmt, int *last)
{
	ListCell   *lc;

	if (*last < 0)
	{
		*last = max_node_id(stmt->planTree);
		foreach(lc, stmt->subplans)
			if (lfirst(lc))
				*last = Max(*last, max_node_id(lfirst(lc)));
	}
	return last;
}

static int *
node_ids(JoinRewrite *rw)
{
	return bf_join_node_ids(rw->stmt, &rw->last_node_id);
}

/*
 * An anti join keeps the outer rows without a partner, so no outer row may
 * be dropped; but a nested loop's inner index scan need not look for the
 * partner of a key the index says is absent.  The scan is put under a
 * Result whose one-time filter, evaluated again at each rescan (each new
 * parameter), asks the index first: when it says "absent" the scan
 * returns nothing without descending its btree, and the join emits the
 * outer row at once.
 */
static void
gate_inner_scan(JoinRewrite *rw, NestLoop *nl)
{
	Plan	  **slot = inner_index_scan(nl);
	List	   *pairs = param_pairs(NIL, rw->stmt->appendRelations, nl, true);
	FuncExpr   *f;
	Plan	   *scan;
	Result	   *r;
	ListCell   *lc;

	/* a foreign key that gives every outer row its partner: nothing to skip */
	if (slot == NULL || pairs == NIL ||
		fkey_covered(rw, param_pairs(NIL, rw->stmt->appendRelations, nl, false)) ||
		(f = filter_qual(rw, NULL, pairs)) == NULL)
		return;
	scan = *slot;
	r = makeNode(Result);
	memcpy(&r->plan, scan, sizeof(Plan));
	r->plan.type = T_Result;
	r->plan.parallel_aware = false;
	r->plan.plan_node_id = ++*node_ids(rw);
	r->plan.targetlist = NIL;
	foreach(lc, scan->targetlist)
	{
		TargetEntry *tle = lfirst(lc);

		r->plan.targetlist = lappend(r->plan.targetlist,
									 makeTargetEntry((Expr *) makeVarFromTargetEntry(OUTER_VAR, tle),
													 tle->resno, tle->resname, tle->resjunk));
	}
	r->plan.qual = NIL;
	r->plan.lefttree = scan;
	r->plan.righttree = NULL;
	r->plan.initPlan = NIL;
	r->plan.extParam = bms_copy(scan->extParam);
	r->plan.allParam = bms_copy(scan->allParam);
	r->resconstantqual = (Node *) list_make1(f);
	*slot = (Plan *) r;
}

/*
 * The equality clauses of a join, each with its outer key first, grouped
 * by the scans of their keys; each group gets the filter of the index that
 * answers for the most of its keys.
 */
static void
index_filters(JoinRewrite *rw, Join *join)
{
	List	   *clauses = NIL;
	List	   *hashed = NIL;
	List	   *pairs = NIL;
	ListCell   *lc;

	if (join->jointype == JOIN_ANTI && IsA(join, NestLoop) && pays(join, 1.0, 1.0, 0.0))
	{
		gate_inner_scan(rw, (NestLoop *) join);
		return;
	}
	if (join->jointype != JOIN_INNER && join->jointype != JOIN_SEMI &&
		join->jointype != JOIN_RIGHT)
		return;
	if (IsA(join, HashJoin))
		clauses = hashed = ((HashJoin *) join)->hashclauses;
	else if (IsA(join, MergeJoin))
		clauses = ((MergeJoin *) join)->mergeclauses;
	clauses = list_concat_copy(clauses, join->joinqual);
	foreach(lc, clauses)
	{
		OpExpr	   *op = lfirst(lc);
		Var		   *l,
				   *r;
		int			before = list_length(pairs);

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		l = (Var *) bf_join_strip(linitial(op->args));
		r = (Var *) bf_join_strip(lsecond(op->args));
		if (!IsA(l, Var) || !IsA(r, Var))
			continue;
		if (l->varno == OUTER_VAR && r->varno == INNER_VAR)
			pairs = consider(pairs, rw->stmt->appendRelations, join, op->opno, op->inputcollid,
							 (Expr *) l, (Expr *) r);
		else if (l->varno == INNER_VAR && r->varno == OUTER_VAR)
			pairs = consider(pairs, rw->stmt->appendRelations, join, get_commutator(op->opno),
							 op->inputcollid,
							 (Expr *) r, (Expr *) l);
		for (int i = before; i < list_length(pairs); i++)
			((KeyPair *) list_nth(pairs, i))->hashed = list_member_ptr(hashed, op);
	}
	if (IsA(join, NestLoop))
		pairs = param_pairs(pairs, rw->stmt->appendRelations, (NestLoop *) join, false);
	while (pairs != NIL)
	{
		KeyPair    *first = linitial(pairs);
		List	   *group = NIL;
		List	   *rest = NIL;

		foreach(lc, pairs)
		{
			KeyPair    *kp = lfirst(lc);

			if (kp->oscan == first->oscan && kp->iscan == first->iscan)
				group = lappend(group, kp);
			else
				rest = lappend(rest, kp);
		}
		add_filter(rw, join, group);
		list_free(group);
		list_free(pairs);
		pairs = rest;
	}
}

/*
 * Has a pre-filter that this join placed (of its inner table's index or
 * tracked filter) already tested this key in its scan?  One another join
 * placed is of another inner side, which may hold keys this one does not:
 * both stay.
 */
static bool
has_prefilter(JoinRewrite *rw, Scan *scan, Var *var)
{
	ListCell   *lc;

	foreach(lc, scan->plan.qual)
	{
		FuncExpr   *f = lfirst(lc);

		if (list_member_ptr(rw->placed, f) && equal(llast(f->args), var))
			return true;
	}
	return false;
}

/*
 * Does the hash join's inner side read every row of its table (a
 * sequential scan without quals right below the Hash), whose column ie
 * (the inner key) a foreign key of ocol references?  Then every outer key
 * finds its partner.
 */
static bool
inner_all_rows(JoinRewrite *rw, HashJoin *join, Expr *ie, Var *ocol)
{
	Plan	   *child = outerPlan(innerPlan(join));
	Scan	   *iscan;
	Var		   *ivar,
			   *icol;

	return ocol != NULL && child != NULL && IsA(child, SeqScan) && child->qual == NIL &&
		bf_join_find_scan(rw->stmt->appendRelations, outerPlan(join), innerPlan(join), ie, false,
						  &iscan, &ivar, &icol) &&
		(Plan *) iscan == child &&
		bf_join_fkey_covers(rw->stmt->rtable, ocol, icol);
}

/* the fewest rows per value of a hash join's inner key columns */
static double
hash_dups(JoinRewrite *rw, HashJoin *join)
{
	double		dups = HUGE_VAL;
	ListCell   *lc;

	foreach(lc, join->hashclauses)
	{
		OpExpr	   *op = lfirst(lc);
		Scan	   *iscan;
		Var		   *ivar,
				   *icol;

		if (IsA(op, OpExpr) && list_length(op->args) == 2 &&
			bf_join_find_scan(rw->stmt->appendRelations, outerPlan(join), innerPlan(join),
							  lsecond(op->args), false, &iscan, &ivar, &icol))
			dups = Min(dups, bf_join_key_dups(rw->stmt->rtable, icol));
	}
	return dups == HUGE_VAL ? 1.0 : dups;
}

/*
 * The keys of a hash join that a run-time filter may test
 * (bf_join_runtime.c decides whether they get one): an outer key that
 * reaches the join unchanged from a scan, by an equality that hashes
 * alike on both sides, not tested by an index pre-filter already
 */
static void
runtime_filters(JoinRewrite *rw, HashJoin *join)
{
	Hash	   *hash = (Hash *) innerPlan(join);
	List	   *keys = NIL;
	ListCell   *lc,
			   *lk;

	if (!IsA(hash, Hash) || list_length(join->hashclauses) != list_length(hash->hashkeys))
		return;
	forboth(lc, join->hashclauses, lk, hash->hashkeys)
	{
		OpExpr	   *op = lfirst(lc);
		Expr	   *ikey = lfirst(lk);
		Var		   *okey;
		BfRuntimeKey *k;
		List	   *scans,
				   *vars;
		Var		   *ocol;
		ListCell   *ls,
				   *lv;

		if (!IsA(op, OpExpr) || list_length(op->args) != 2)
			continue;
		okey = (Var *) bf_join_strip(linitial(op->args));
		if (!IsA(okey, Var) || okey->varno != OUTER_VAR ||
			!bf_join_key_ok(op->opno, op->inputcollid, exprType((Node *) okey), exprType((Node *) ikey)) ||
			contain_volatile_functions((Node *) ikey) ||
			!bf_join_find_outer_scans(rw->stmt->appendRelations, outerPlan(join), innerPlan(join),
									  (Expr *) okey, &scans, &vars, &ocol))
			continue;
		/* a foreign key to an inner side without quals: nothing to remove */
		if (inner_all_rows(rw, join, lsecond(op->args), bf_join_table_column(scans, ocol)))
			continue;
		k = palloc0(sizeof(BfRuntimeKey));
		k->clause = op;
		k->inner_key = ikey;
		k->column = ocol;
		/* each scan that computes nothing volatile and has no pre-filter of it */
		forboth(ls, scans, lv, vars)
		{
			Scan	   *oscan = lfirst(ls);

			if (contain_volatile_functions((Node *) oscan->plan.targetlist) ||
				(OidIsValid(rw->funcoid) && has_prefilter(rw, oscan, lfirst(lv))))
				continue;
			k->scans = lappend(k->scans, oscan);
			k->vars = lappend(k->vars, lfirst(lv));
		}
		if (k->scans != NIL)
			keys = lappend(keys, k);
	}
	if (keys != NIL &&
		bf_join_runtime_consider(rw->stmt, join, keys, hash_dups(rw, join), rw->runtime_funcoid,
								 node_ids(rw), &rw->next_filter_id))
		rw->runtime_changed = true;
}

/*
 * The index pre-filters of a join, then for a hash join the run-time
 * filters of the keys that got none
 */
static void
consider_join(JoinRewrite *rw, Join *join)
{
	list_free(rw->placed);
	rw->placed = NIL;
	if (join_filter_mode != BF_JOIN_FILTER_OFF && OidIsValid(rw->funcoid))
		index_filters(rw, join);
	if (IsA(join, HashJoin) && OidIsValid(rw->runtime_funcoid))
		runtime_filters(rw, (HashJoin *) join);
}

static void
walk(JoinRewrite *rw, Plan *p)
{
	List	   *children;
	ListCell   *lc;

	if (p == NULL)
		return;
	check_stack_depth();
	if (IsA(p, NestLoop) || IsA(p, HashJoin) || IsA(p, MergeJoin))
		consider_join(rw, (Join *) p);
	/* after the join: a node it added above a child is walked too */
	children = child_plans(p);
	foreach(lc, children)
		walk(rw, lfirst(lc));
	list_free(children);
}

/* is q a join filter's qual (of the functions the hook adds)? */
static bool
is_filter(Node *q, void *arg)
{
	JoinRewrite *rw = arg;
	Oid			f;

	if (!IsA(q, FuncExpr))
		return false;
	f = ((FuncExpr *) q)->funcid;
	return (OidIsValid(rw->funcoid) && f == rw->funcoid) ||
		(OidIsValid(rw->tracked_funcoid) && f == rw->tracked_funcoid) ||
		(OidIsValid(rw->runtime_funcoid) && f == rw->runtime_funcoid);
}

/*
 * Each scan below *slot whose join filters would spare deforming if they
 * were tested before its other quals gets them first (bf_join_early.c)
 */
static void
filters_first(JoinRewrite *rw, Plan **slot)
{
	Plan	   *p = *slot;
	ListCell   *lc;

	if (p == NULL)
		return;
	check_stack_depth();
	filters_first(rw, &p->lefttree);
	filters_first(rw, &p->righttree);
	if (IsA(p, Append))
		foreach(lc, ((Append *) p)->appendplans)
			filters_first(rw, (Plan **) &lfirst(lc));
	else if (IsA(p, MergeAppend))
		foreach(lc, ((MergeAppend *) p)->mergeplans)
			filters_first(rw, (Plan **) &lfirst(lc));
	else if (IsA(p, SubqueryScan))
		filters_first(rw, &((SubqueryScan *) p)->subplan);
	*slot = bf_join_filter_first(rw->stmt, p, is_filter, rw, node_ids(rw));
}

/*
 * The function name(args) of the extension installed here (1.2 on), or
 * invalid; *cached remembers it
 */
Oid
bf_join_extension_function(const char *name, int nargs, const Oid *args, Oid *cached)
{
	Oid			ext;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	/* the extension dropped and made again gives the function a new OID */
	if (OidIsValid(*cached) && SearchSysCacheExists1(PROCOID, ObjectIdGetDatum(*cached)))
		return *cached;
	ext = get_extension_oid("bloomfilter", true);
	if (!OidIsValid(ext))
		return InvalidOid;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	if (HeapTupleIsValid(tup = systable_getnext(scan)))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (!OidIsValid(nsp))
		return InvalidOid;
	*cached = LookupFuncName(list_make2(makeString(get_namespace_name(nsp)),
										makeString(pstrdup(name))),
							 nargs, args, true);
	return *cached;
}

/* a plan that calls funcoid is made again when the function goes */
void
bf_join_depend_on_function(PlannedStmt *stmt, Oid funcoid)
{
	PlanInvalItem *item = makeNode(PlanInvalItem);

	item->cacheId = PROCOID;
	item->hashValue = GetSysCacheHashValue1(PROCOID, ObjectIdGetDatum(funcoid));
	stmt->invalItems = lappend(stmt->invalItems, item);
}

static PlannedStmt *
bf_planner(BF_PLANNER_PARAMS)
{
	PlannedStmt *stmt = prev_planner ?
		prev_planner(BF_PLANNER_ARGS) :
		standard_planner(BF_PLANNER_ARGS);
	static Oid	prefilter_cached = InvalidOid;
	static Oid	tracked_cached = InvalidOid;
	static Oid	runtime_cached = InvalidOid;
	static const Oid prefilter_args[2] = {REGCLASSOID, ANYELEMENTOID};
	static const Oid tracked_args[3] = {REGCLASSOID, NAMEOID, ANYELEMENTOID};
	static const Oid runtime_args[2] = {INT4OID, ANYELEMENTOID};
	JoinRewrite rw;
	ListCell   *lc;

	/* a join needs two relations */
	if ((join_filter_mode == BF_JOIN_FILTER_OFF && !bf_join_runtime_enabled()) ||
		!IsTransactionState() || list_length(stmt->rtable) < 2)
		return stmt;
	rw.stmt = stmt;
	rw.changed = false;
	rw.tracked_changed = false;
	rw.runtime_changed = false;
	rw.funcoid = bf_join_extension_function("bf_join_prefilter", 2, prefilter_args, &prefilter_cached);
	rw.tracked_funcoid = bf_join_extension_function("bf_join_tracked_prefilter", 3, tracked_args,
											&tracked_cached);
	rw.runtime_funcoid = bf_join_runtime_enabled() ?
		bf_join_extension_function("bf_runtime_filter", 2, runtime_args, &runtime_cached) : InvalidOid;
	if (!OidIsValid(rw.funcoid) && !OidIsValid(rw.runtime_funcoid))
		return stmt;
	rw.last_node_id = -1;		/* not known yet: bf_join_node_ids() */
	rw.next_filter_id = 0;
	rw.placed = NIL;
	walk(&rw, stmt->planTree);
	foreach(lc, stmt->subplans)
		walk(&rw, lfirst(lc));
	if (rw.changed || rw.tracked_changed || rw.runtime_changed)
	{
		filters_first(&rw, &stmt->planTree);
		foreach(lc, stmt->subplans)
			filters_first(&rw, (Plan **) &lfirst(lc));
	}
	/* and when the function goes (DROP EXTENSION) */
	if (rw.changed)
		bf_join_depend_on_function(stmt, rw.funcoid);
	if (rw.tracked_changed)
		bf_join_depend_on_function(stmt, rw.tracked_funcoid);
	if (rw.runtime_changed)
		bf_join_depend_on_function(stmt, rw.runtime_funcoid);
	return stmt;
}

/* the setting, and the hook (the library is loaded once per backend) */
void
bf_join_define_gucs(void)
{
	DefineCustomEnumVariable("bloomfilter.join_filter",
							 "Adds join pre-filters from bloomfilter indexes to query plans.",
							 "off: never; on: wherever safe; auto: where the planner expects at least 10000 outer rows dropped and at most 60 % kept.",
							 &join_filter_mode, BF_JOIN_FILTER_AUTO, bf_join_filter_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	prev_planner = planner_hook;
	planner_hook = bf_planner;
}
