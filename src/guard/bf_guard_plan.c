/*-------------------------------------------------------------------------
 *
 * bf_guard_plan.c
 *	  Scan guards (bloomfilter.guard_scans): a planner hook that, in a
 *	  finished plan, puts the guard node (bf_guard_node.c) above each scan
 *	  of a table with a qual "column = key" whose key the scan does not
 *	  compute itself (a parameter: $n of a prepared statement's generic
 *	  plan, a nested loop's outer value, an InitPlan's result; or an
 *	  expression of those), where the column has a filter that answers
 *	  for it: a complete single-column bloomfilter index, or a filter
 *	  tracked by the trigger method.  The filter is asked with the key's
 *	  value at run time, so a plan made once answers for every value.
 *
 * Why.  The index's cost estimate (bf_index_scan.c) makes the planner use
 * it for a constant it finds absent, but a parameter's value is unknown
 * when a generic plan is made, and a tracked filter is no index at all:
 * without the guard, a lookup of an absent key reads the btree (or the
 * table) the filter was made to spare.
 *
 * When it is safe.  The key must be hashed by the filter as the column's
 * own values are (bf_join_key_ok: the same type, or two integer types,
 * under a deterministic collation, by the type's hash equality); the scan
 * must be of a plain table (a partition is one: its own index answers),
 * not parallel (nothing under a Gather is touched), and the statement a
 * SELECT without FOR UPDATE/SHARE (whose rechecks of concurrently updated
 * rows would run the guard again on another row version).  Row-level
 * security on the table, or a user who may not read the column, get no
 * guard; and the guard's test checks all of it again at run time (another
 * user may run the plan), saying "maybe" where it may not answer.  A
 * constant key is guarded only from a tracked filter: the index's cost
 * estimate deals with constants itself.  A nested loop's parameter that a
 * validated foreign key proves present in the column (bf_join_fkey.c) is
 * not guarded: the guard would never skip.  A tracked filter guards index
 * scans too: its probe, with the backend's kept lookups
 * (bf_track_lookup.c), costs less than the btree descent it spares for an
 * absent key (bench/track_callgrind.sh, docs/PERFORMANCE.md).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_guard.h"

#include "access/relation.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "bf_compat.h"
#include "bf_index.h"
#include "bf_join.h"
#include "bf_track.h"

static bool guard_scans = true;
static planner_hook_type prev_planner = NULL;

/* what one plan is rewritten with */
typedef struct GuardRewrite
{
	PlannedStmt *stmt;
	Oid			funcoid;		/* bf_join_prefilter(regclass, anyelement) */
	Oid			tracked_funcoid;	/* bf_join_tracked_prefilter(regclass,
									 * name, anyelement) */
	const BfExt *ext;			/* of tracked_funcoid (tracked_ext) */
	bool		ext_looked;
	List	   *nestparams;		/* the NestLoopParams of the nested loops
								 * walked into */
	Bitmapset  *prefiltered;	/* nested loops' parameters a join filter
								 * tested on the outer side */
	int			last_node_id;	/* bf_join_node_ids(): -1 until a node is
								 * added */
	bool		changed;
	bool		tracked_changed;
} GuardRewrite;

/* one equality of a scan's quals: column = key, or column = ANY (key) */
typedef struct Equality
{
	Var		   *col;			/* of the scan's relation */
	Expr	   *key;
	Oid			opno;			/* taking the key first */
	Oid			coll;
	bool		is_array;
} Equality;

/* ---- the plan's nodes ---- */

/* where a node's child plans are held */
static List *
child_slots(Plan *p)
{
	List	   *slots = NIL;
	ListCell   *lc;

	if (p->lefttree)
		slots = lappend(slots, &p->lefttree);
	if (p->righttree)
		slots = lappend(slots, &p->righttree);
	if (IsA(p, Append))
		foreach(lc, ((Append *) p)->appendplans)
			slots = lappend(slots, &lfirst(lc));
	else if (IsA(p, MergeAppend))
		foreach(lc, ((MergeAppend *) p)->mergeplans)
			slots = lappend(slots, &lfirst(lc));
	else if (IsA(p, SubqueryScan))
		slots = lappend(slots, &((SubqueryScan *) p)->subplan);
	return slots;
}


/* ---- the equalities of a scan ---- */

/*
 * The column of the scan's relation that a qual's Var names (an
 * index-only scan's quals name the index's columns), or NULL
 */
static Var *
scan_column(Scan *scan, Expr *e)
{
	Var		   *v = (Var *) bf_join_strip(e);

	if (!IsA(v, Var))
		return NULL;
	if (IsA(scan, IndexOnlyScan))
		v = bf_join_index_column((IndexOnlyScan *) scan, v);
	return v != NULL && (Index) v->varno == scan->scanrelid && v->varattno > 0 &&
		v->varlevelsup == 0 ? v : NULL;
}

/*
 * May key be computed before the scan runs, once per start or rescan?
 * Not a nested loop's parameter whose outer rows a join filter tested
 * already (asking again would cost a probe per row and drop nothing).
 */
static bool
key_ok(GuardRewrite *gr, Node *key)
{
	Param	   *p = (Param *) bf_join_strip((Expr *) key);

	if (IsA(p, Param) && p->paramkind == PARAM_EXEC &&
		bms_is_member(p->paramid, gr->prefiltered))
		return false;
	return !contain_var_clause(key) && !contain_volatile_functions(key) &&
		!contain_subplans(key);
}

/*
 * Is eq's key a nested loop's parameter, the outer row's column, that a
 * validated foreign key references eq's column from?  Then every outer
 * key has a partner and the guard would never skip.
 */
static bool
key_has_partner(GuardRewrite *gr, Equality *eq)
{
	Param	   *p = (Param *) bf_join_strip(eq->key);
	ListCell   *lc;

	if (!IsA(p, Param) || p->paramkind != PARAM_EXEC || eq->is_array)
		return false;
	foreach(lc, gr->nestparams)
	{
		NestLoopParam *nlp = lfirst(lc);
		Var			outer;

		if (nlp->paramno != p->paramid || !IsA(nlp->paramval, Var))
			continue;
		/* the outer row's column, by the names EXPLAIN shows it by */
		outer = *nlp->paramval;
		outer.varno = outer.varnosyn;
		outer.varattno = outer.varattnosyn;
		return outer.varno > 0 && outer.varno <= list_length(gr->stmt->rtable) &&
			bf_join_fkey_covers(gr->stmt->rtable, &outer, eq->col);
	}
	return false;
}

/* the equality of clause, or false */
static bool
equality_of(GuardRewrite *gr, Scan *scan, Expr *clause, Equality *eq)
{
	Expr	   *l,
			   *r;

	if (IsA(clause, OpExpr) && list_length(((OpExpr *) clause)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) clause;

		l = linitial(op->args);
		r = lsecond(op->args);
		eq->is_array = false;
		eq->coll = op->inputcollid;
		if ((eq->col = scan_column(scan, l)) != NULL)
		{
			eq->key = r;
			eq->opno = get_commutator(op->opno);
		}
		else if ((eq->col = scan_column(scan, r)) != NULL)
		{
			eq->key = l;
			eq->opno = op->opno;
		}
		else
			return false;
	}
	else if (IsA(clause, ScalarArrayOpExpr) && ((ScalarArrayOpExpr *) clause)->useOr)
	{
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *) clause;

		if ((eq->col = scan_column(scan, linitial(op->args))) == NULL)
			return false;
		eq->key = lsecond(op->args);
		eq->opno = get_commutator(op->opno);
		eq->coll = op->inputcollid;
		eq->is_array = true;
	}
	else
		return false;
	return OidIsValid(eq->opno) && key_ok(gr, (Node *) eq->key) &&
		bf_join_key_ok(eq->opno, eq->coll,
					   eq->is_array ? get_element_type(exprType((Node *) eq->key)) :
					   exprType((Node *) eq->key),
					   eq->col->vartype);
}

/* the quals of a scan that its rows must all pass */
static List *
scan_quals(Scan *scan)
{
	List	   *quals = scan->plan.qual;

	if (IsA(scan, IndexScan))
		quals = list_concat_copy(((IndexScan *) scan)->indexqualorig, quals);
	else if (IsA(scan, IndexOnlyScan))
		quals = list_concat_copy(((IndexOnlyScan *) scan)->indexqual, quals);
	else if (IsA(scan, BitmapHeapScan))
		quals = list_concat_copy(((BitmapHeapScan *) scan)->bitmapqualorig, quals);
	return quals;
}

/* ---- the filters that answer ---- */

/*
 * The complete single-column bloomfilter index on relid's column attnum
 * that the user may read (without expressions or a predicate), or
 * InvalidOid
 */
static Oid
column_index(Oid relid, AttrNumber attnum)
{
	Relation	rel = table_open(relid, NoLock);	/* locked by the planner */
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);

		if (index->rd_index->indnkeyatts == 1 &&
			index->rd_index->indkey.values[0] == attnum &&
			bf_index_answers(index) &&
			RelationGetIndexExpressions(index) == NIL &&
			RelationGetIndexPredicate(index) == NIL &&
			bf_index_readable(index, GetUserId(), relid, NULL))
			found = RelationGetRelid(index);
		index_close(index, AccessShareLock);
		if (OidIsValid(found))
			break;
	}
	list_free(indexes);
	table_close(rel, NoLock);
	return found;
}

/* has relid triggers (cheap, before the registry is read)? */
static bool
has_triggers(Oid relid)
{
	Relation	rel = table_open(relid, NoLock);	/* locked by the planner */
	bool		has = rel->rd_rel->relhastriggers;

	table_close(rel, NoLock);
	return has;
}

/* the extension of bf_join_tracked_prefilter, looked up once per plan */
static const BfExt *
tracked_ext(GuardRewrite *gr)
{
	if (!gr->ext_looked && OidIsValid(gr->tracked_funcoid))
		gr->ext = bf_ext(gr->tracked_funcoid, true);
	gr->ext_looked = true;
	return gr->ext;
}

/* does e contain a parameter (whose value the plan does not know)? */
static bool
has_param_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Param))
		return true;
	return expression_tree_walker(node, has_param_walker, context);
}

/*
 * The test of one value of eq's key, a column of relid, as a call on a
 * new PARAM_EXEC parameter (*paramid): of the column's index, or of its
 * tracked filter; NULL when neither answers
 */
static Expr *
key_test(GuardRewrite *gr, Oid relid, Equality *eq, int *paramid)
{
	Oid			type = eq->is_array ? get_element_type(exprType((Node *) eq->key)) :
		exprType((Node *) eq->key);
	Param	   *prm;
	Oid			indexoid = InvalidOid;
	char	   *colname = NULL;
	List	   *args;

	if (OidIsValid(gr->funcoid) && has_param_walker((Node *) eq->key, NULL))
		indexoid = column_index(relid, eq->col->varattno);
	if (!OidIsValid(indexoid))
	{
		/* a column tracked by the trigger method has its sync triggers */
		if (!has_triggers(relid) || tracked_ext(gr) == NULL ||
			(colname = get_attname(relid, eq->col->varattno, true)) == NULL ||
			!bf_tracked_join_usable(gr->ext, relid, colname, GetUserId()))
			return NULL;
	}
	prm = makeNode(Param);
	prm->paramkind = PARAM_EXEC;
	prm->paramid = *paramid = list_length(gr->stmt->paramExecTypes);
	prm->paramtype = type;
	prm->paramtypmod = -1;
	prm->paramcollid = exprCollation((Node *) eq->key);
	prm->location = -1;
	gr->stmt->paramExecTypes = lappend_oid(gr->stmt->paramExecTypes, type);
	if (OidIsValid(indexoid))
	{
		/* a plan that uses the index is made again when the index changes */
		gr->stmt->relationOids = lappend_oid(gr->stmt->relationOids, indexoid);
		gr->changed = true;
		args = list_make2(makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
									ObjectIdGetDatum(indexoid), false, true),
						  prm);
		return (Expr *) makeFuncExpr(gr->funcoid, BOOLOID, args, InvalidOid, eq->coll,
									 COERCE_EXPLICIT_CALL);
	}
	else
	{
		Name		col = palloc0(NAMEDATALEN);

		namestrcpy(col, colname);
		gr->tracked_changed = true;
		args = list_make3(makeConst(REGCLASSOID, -1, InvalidOid, sizeof(Oid),
									ObjectIdGetDatum(relid), false, true),
						  makeConst(NAMEOID, -1, C_COLLATION_OID, NAMEDATALEN,
									NameGetDatum(col), false, false),
						  prm);
		return (Expr *) makeFuncExpr(gr->tracked_funcoid, BOOLOID, args, InvalidOid,
									 eq->coll, COERCE_EXPLICIT_CALL);
	}
}

/* ---- rewriting ---- */

/* a scan of a table that a guard may stand above */
static bool
guardable_scan(GuardRewrite *gr, Plan *p)
{
	RangeTblEntry *rte;

	if (!IsA(p, SeqScan) && !IsA(p, IndexScan) && !IsA(p, IndexOnlyScan) &&
		!IsA(p, BitmapHeapScan))
		return false;
	rte = rt_fetch(((Scan *) p)->scanrelid, gr->stmt->rtable);
	return !p->parallel_aware && rte->rtekind == RTE_RELATION &&
		rte->relkind == RELKIND_RELATION &&
		check_enable_rls(rte->relid, InvalidOid, true) == RLS_NONE;
}

/* put a guard above the scan in *slot if one of its equalities has a filter */
static void
guard_scan(GuardRewrite *gr, Plan **slot)
{
	Scan	   *scan = (Scan *) *slot;
	Oid			relid = rt_fetch(scan->scanrelid, gr->stmt->rtable)->relid;
	List	   *quals = scan_quals(scan);
	List	   *keys = NIL;
	ListCell   *lc;

	foreach(lc, quals)
	{
		Equality	eq;
		BfGuardKey *k;
		Expr	   *test;
		int			paramid;

		if (!equality_of(gr, scan, lfirst(lc), &eq) || key_has_partner(gr, &eq) ||
			(test = key_test(gr, relid, &eq, &paramid)) == NULL)
			continue;
		k = palloc0(sizeof(BfGuardKey));
		k->key = copyObject(eq.key);
		k->test = test;
		k->paramid = paramid;
		k->is_array = eq.is_array;
		k->strict = op_strict(eq.opno);
		keys = lappend(keys, k);
	}
	if (keys != NIL)
	{
		CustomScan *cs = bf_guard_make_node(*slot,
											++*bf_join_node_ids(gr->stmt, &gr->last_node_id),
											keys);

		/*
		 * The scan's InitPlans (a query of one table has them there) may
		 * compute a key: the guard, which evaluates the keys before it
		 * starts the scan, starts them
		 */
		cs->scan.plan.initPlan = scan->plan.initPlan;
		scan->plan.initPlan = NIL;
		*slot = (Plan *) cs;
	}
}

/* does a scan of plan p have a join pre-filter among its quals? */
static bool
has_prefilter(GuardRewrite *gr, Plan *p)
{
	List	   *slots;
	ListCell   *lc;
	bool		found = false;

	if (p == NULL)
		return false;
	foreach(lc, p->qual)
	{
		FuncExpr   *f = lfirst(lc);

		if (IsA(f, FuncExpr) && (f->funcid == gr->funcoid || f->funcid == gr->tracked_funcoid))
			return true;
	}
	slots = child_slots(p);
	foreach(lc, slots)
		found = found || has_prefilter(gr, *(Plan **) lfirst(lc));
	list_free(slots);
	return found;
}

/*
 * Guard the scans of the plan in *slot; not below a Gather (parallel
 * workers), nor a scan a join filter gated already (a Result whose
 * one-time filter asks the index first)
 */
static void
walk(GuardRewrite *gr, Plan **slot)
{
	Plan	   *p = *slot;
	List	   *slots;
	ListCell   *lc;

	if (p == NULL || IsA(p, Gather) || IsA(p, GatherMerge) || IsA(p, CustomScan))
		return;
	check_stack_depth();
	if (IsA(p, Result) && ((Result *) p)->resconstantqual != NULL && p->lefttree != NULL &&
		guardable_scan(gr, p->lefttree))
		return;
	if (guardable_scan(gr, p))
	{
		guard_scan(gr, slot);
		return;
	}
	if (IsA(p, NestLoop))
		gr->nestparams = list_concat(gr->nestparams, ((NestLoop *) p)->nestParams);
	if (IsA(p, NestLoop) && has_prefilter(gr, outerPlan(p)))
	{
		ListCell   *np;

		foreach(np, ((NestLoop *) p)->nestParams)
			gr->prefiltered = bms_add_member(gr->prefiltered,
											 ((NestLoopParam *) lfirst(np))->paramno);
	}
	slots = child_slots(p);
	foreach(lc, slots)
		walk(gr, lfirst(lc));
	list_free(slots);
}

static PlannedStmt *
bf_guard_planner(BF_PLANNER_PARAMS)
{
	PlannedStmt *stmt = prev_planner ?
		prev_planner(BF_PLANNER_ARGS) :
		standard_planner(BF_PLANNER_ARGS);
	static Oid	prefilter_cached = InvalidOid;
	static Oid	tracked_cached = InvalidOid;
	static const Oid prefilter_args[2] = {REGCLASSOID, ANYELEMENTOID};
	static const Oid tracked_args[3] = {REGCLASSOID, NAMEOID, ANYELEMENTOID};
	GuardRewrite gr;
	ListCell   *lc;

	if (!guard_scans || !IsTransactionState() || stmt->commandType != CMD_SELECT ||
		stmt->rowMarks != NIL)
		return stmt;
	memset(&gr, 0, sizeof(gr));
	gr.stmt = stmt;
	gr.last_node_id = -1;
	gr.funcoid = bf_join_extension_function("bf_join_prefilter", 2, prefilter_args,
											&prefilter_cached);
	gr.tracked_funcoid = bf_join_extension_function("bf_join_tracked_prefilter", 3,
													tracked_args, &tracked_cached);
	if (!OidIsValid(gr.funcoid) && !OidIsValid(gr.tracked_funcoid))
		return stmt;
	walk(&gr, &stmt->planTree);
	foreach(lc, stmt->subplans)
		walk(&gr, (Plan **) &lfirst(lc));
	/* and when the function goes (DROP EXTENSION) */
	if (gr.changed)
		bf_join_depend_on_function(stmt, gr.funcoid);
	if (gr.tracked_changed)
		bf_join_depend_on_function(stmt, gr.tracked_funcoid);
	return stmt;
}

/* the setting, the hook and the node (the library is loaded once per backend) */
void
bf_guard_init(void)
{
	DefineCustomBoolVariable("bloomfilter.guard_scans",
							 "Guards scans for a key by the key column's filter.",
							 "A scan of a table for column = key, whose column has a bloomfilter index or a filter tracked by the trigger method, is run only when the filter says the key may be present.",
							 &guard_scans, true, PGC_USERSET, 0, NULL, NULL, NULL);
	prev_planner = planner_hook;
	planner_hook = bf_guard_planner;
	bf_guard_register_node();
}
