/*-------------------------------------------------------------------------
 *
 * bf_guard_node.c
 *	  The scan guard's node (Custom Scan "BloomGuard"): above a scan of a
 *	  table, at each start and rescan, it evaluates its keys and asks the
 *	  column's filter for each value; when the filter says that some key
 *	  is absent, the scan is not run and the node returns no rows, so
 *	  neither the table nor its other indexes are read.  Else it returns
 *	  the scan's tuples as they come (its output is the scan's).
 *
 * The filter is asked through the plan's own call of bf_join_prefilter
 * (an index) or bf_join_tracked_prefilter (a tracked column), on a
 * parameter of the guard's own that it sets to each value: those two
 * check, at every call, that the user may read the column, that no
 * row-level security restricts the table for them, that the index is
 * complete and usable by this transaction's snapshots or the tracked
 * filter not stale; where they cannot answer they say "maybe", which
 * runs the scan.  A key of the scan's "= ANY" or IN (...) is absent when
 * each of its elements is.  skip_scan() is the one place that decides,
 * and counts the skip in the filter's statistics (bf_stats.h); the tests
 * count their lookups themselves.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_compat.h"
#include "bf_guard.h"
#include "bf_passthrough.h"
#include "bf_stats.h"

#include "commands/explain.h"
#include "executor/executor.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

typedef struct GuardKeyState
{
	BfGuardKey	def;
	ExprState  *key;
	ExprState  *test;
	Oid			stats_relid;	/* the filter, as bf_stats.h names it */
	AttrNumber	stats_attnum;
	int16		elmlen;			/* of an array key's elements */
	bool		elmbyval;
	char		elmalign;
} GuardKeyState;

typedef struct GuardState
{
	CustomScanState css;
	int			nkeys;
	GuardKeyState *keys;
	int			eflags;			/* to start the scan with */
	bool		checked;		/* asked since the last start or rescan */
	bool		skip;			/* its answer: return no rows */
	uint64		asked;			/* for EXPLAIN ANALYZE */
	uint64		skipped;
} GuardState;

static Node *guard_create_state(CustomScan *cscan);
static void guard_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *guard_exec(CustomScanState *node);
static void guard_end(CustomScanState *node);
static void guard_rescan(CustomScanState *node);
static void guard_mark(CustomScanState *node);
static void guard_restore(CustomScanState *node);
static void guard_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomScanMethods guard_scan_methods = {
	.CustomName = "BloomGuard",
	.CreateCustomScanState = guard_create_state,
};

static const CustomExecMethods guard_exec_methods = {
	.CustomName = "BloomGuard",
	.BeginCustomScan = guard_begin,
	.ExecCustomScan = guard_exec,
	.EndCustomScan = guard_end,
	.ReScanCustomScan = guard_rescan,
	.MarkPosCustomScan = guard_mark,
	.RestrPosCustomScan = guard_restore,
	.ExplainCustomScan = guard_explain,
};

static Node *
guard_create_state(CustomScan *cscan)
{
	GuardState *gs = (GuardState *) newNode(sizeof(GuardState), T_CustomScanState);

	gs->css.methods = &guard_exec_methods;
	return (Node *) gs;
}

/*
 * The filter that key k's test asks, named as bf_stats.h names filters:
 * an index (its OID, 0), or a tracked column (the table, the column)
 */
static void
stats_name(GuardKeyState *k)
{
	FuncExpr   *f = (FuncExpr *) k->def.test;

	k->stats_relid = DatumGetObjectId(((Const *) linitial(f->args))->constvalue);
	k->stats_attnum = 0;
	if (list_length(f->args) == 3)
		k->stats_attnum =
			get_attnum(k->stats_relid,
					   NameStr(*DatumGetName(((Const *) lsecond(f->args))->constvalue)));
}

/*
 * custom_exprs: the keys, then their tests; custom_private: the tests'
 * parameter ids, whether each key is an array, whether its equality is
 * strict
 */
static void
guard_begin(CustomScanState *node, EState *estate, int eflags)
{
	GuardState *gs = (GuardState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *ids = linitial(cscan->custom_private);
	List	   *arrays = lsecond(cscan->custom_private);
	List	   *stricts = lthird(cscan->custom_private);

	/*
	 * The scan is started only when the filter first says "maybe": a
	 * lookup of an absent key spares its start too (opening and locking
	 * the index, its scan keys), which costs about as much as the btree
	 * descent.  Its slots, and so the node's, are then unknown here.
	 * Under EXPLAIN it starts now, to be shown (and "never executed").
	 */
	gs->eflags = eflags;
	if (estate->es_instrument || (eflags & EXEC_FLAG_EXPLAIN_ONLY))
		bf_passthrough_begin(node, estate, eflags);
	else
		node->ss.ps.resultopsfixed = false;
	gs->nkeys = list_length(ids);
	gs->keys = palloc0(sizeof(GuardKeyState) * gs->nkeys);
	for (int i = 0; i < gs->nkeys; i++)
	{
		GuardKeyState *k = &gs->keys[i];

		k->def.key = list_nth(cscan->custom_exprs, i);
		k->def.test = list_nth(cscan->custom_exprs, gs->nkeys + i);
		k->def.paramid = list_nth_int(ids, i);
		k->def.is_array = list_nth_int(arrays, i) != 0;
		k->def.strict = list_nth_int(stricts, i) != 0;
		k->key = ExecInitExpr(k->def.key, &node->ss.ps);
		k->test = ExecInitExpr(k->def.test, &node->ss.ps);
		stats_name(k);
		if (k->def.is_array)
			get_typlenbyvalalign(get_element_type(exprType((Node *) k->def.key)),
								 &k->elmlen, &k->elmbyval, &k->elmalign);
	}
}

/* may a row hold value (not NULL): the filter's answer, "maybe" if none */
static bool
may_hold(GuardKeyState *k, ExprContext *econtext, Datum value)
{
	ParamExecData *prm = &econtext->ecxt_param_exec_vals[k->def.paramid];
	Datum		found;
	bool		isnull;

	prm->execPlan = NULL;
	prm->value = value;
	prm->isnull = false;
	found = ExecEvalExpr(k->test, econtext, &isnull);
	return isnull || DatumGetBool(found);
}

/* may a row match key k: one of its values may be held */
static bool
key_may_match(GuardKeyState *k, ExprContext *econtext)
{
	bool		isnull;
	Datum		value = ExecEvalExpr(k->key, econtext, &isnull);
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int			n;

	/* a strict equality is true of no NULL */
	if (isnull)
		return !k->def.strict;
	if (!k->def.is_array)
		return may_hold(k, econtext, value);
	arr = DatumGetArrayTypeP(value);
	deconstruct_array(arr, ARR_ELEMTYPE(arr), k->elmlen, k->elmbyval, k->elmalign,
					  &elems, &nulls, &n);
	for (int i = 0; i < n; i++)
		if (nulls[i] ? !k->def.strict : may_hold(k, econtext, elems[i]))
			return true;
	return false;
}

/*
 * Does the guard skip the scan this time: is some key absent from its
 * filter?  The one place where a scan is skipped.
 */
static bool
skip_scan(GuardState *gs)
{
	ExprContext *econtext = gs->css.ss.ps.ps_ExprContext;
	MemoryContext old;
	bool		skip = false;

	ResetExprContext(econtext);
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	for (int i = 0; i < gs->nkeys && !skip; i++)
	{
		skip = !key_may_match(&gs->keys[i], econtext);
		if (skip)
			bf_stats_count_skip(gs->keys[i].stats_relid, gs->keys[i].stats_attnum);
	}
	MemoryContextSwitchTo(old);
	gs->asked++;
	gs->skipped += skip;
	return skip;
}

static TupleTableSlot *
guard_exec(CustomScanState *node)
{
	GuardState *gs = (GuardState *) node;

	if (!gs->checked)
	{
		gs->skip = skip_scan(gs);
		gs->checked = true;
	}
	if (gs->skip)
		return NULL;
	if (outerPlanState(node) == NULL)
	{
		EState	   *estate = node->ss.ps.state;
		MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

		outerPlanState(node) = ExecInitNode(outerPlan(node->ss.ps.plan), estate, gs->eflags);
		MemoryContextSwitchTo(old);
	}
	return ExecProcNode(outerPlanState(node));
}

static void
guard_end(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

/* new parameters may be new keys: ask again at the next fetch */
static void
guard_rescan(CustomScanState *node)
{
	GuardState *gs = (GuardState *) node;

	gs->checked = false;
	if (outerPlanState(node) != NULL && outerPlanState(node)->chgParam == NULL)
		ExecReScan(outerPlanState(node));
}

/*
 * A merge join marks and restores the position of its inner scan, which
 * the guard replaced: it did so only after a row, so the scan is started
 */
static void
guard_mark(CustomScanState *node)
{
	ExecMarkPos(outerPlanState(node));
}

static void
guard_restore(CustomScanState *node)
{
	ExecRestrPos(outerPlanState(node));
}

/* where the test of key k asks: an index, or a column's tracked filter */
static char *
filter_name(GuardKeyState *k)
{
	FuncExpr   *f = (FuncExpr *) k->def.test;
	Const	   *rel = linitial(f->args);
	char	   *name = get_rel_name(DatumGetObjectId(rel->constvalue));

	if (name == NULL)
		name = "?";
	if (list_length(f->args) == 3)
		return psprintf("filter of %s.%s (tracked)", name,
						NameStr(*DatumGetName(((Const *) lsecond(f->args))->constvalue)));
	return psprintf("index %s", name);
}

static void
guard_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	GuardState *gs = (GuardState *) node;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan,
												   ancestors);

	for (int i = 0; i < gs->nkeys; i++)
	{
		GuardKeyState *k = &gs->keys[i];

		ExplainPropertyText("Guard",
							psprintf("%s%s in %s", k->def.is_array ? "any of " : "",
									 deparse_expression((Node *) k->def.key, context, true,
														false),
									 filter_name(k)),
							es);
	}
	if (es->analyze)
	{
		ExplainPropertyUInteger("Guard Asked", NULL, gs->asked, es);
		ExplainPropertyUInteger("Guard Skipped", NULL, gs->skipped, es);
	}
}

/* the guard node above child, a scan, for keys (BfGuardKey) */
CustomScan *
bf_guard_make_node(Plan *child, int node_id, List *keys)
{
	CustomScan *cs = bf_passthrough_node(child, node_id, &guard_scan_methods);
	List	   *exprs = NIL,
			   *tests = NIL,
			   *ids = NIL,
			   *arrays = NIL,
			   *stricts = NIL;
	ListCell   *lc;

	foreach(lc, keys)
	{
		BfGuardKey *k = lfirst(lc);

		exprs = lappend(exprs, k->key);
		tests = lappend(tests, k->test);
		ids = lappend_int(ids, k->paramid);
		arrays = lappend_int(arrays, k->is_array);
		stricts = lappend_int(stricts, k->strict);
	}
	cs->custom_exprs = list_concat(exprs, tests);
	cs->custom_private = list_make3(ids, arrays, stricts);
	/* what the executor may ask of the scan it may ask of the guard */
	if (ExecSupportsBackwardScan(child))
		cs->flags |= CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
	if (IsA(child, IndexScan) || IsA(child, IndexOnlyScan))
		cs->flags |= CUSTOMPATH_SUPPORT_MARK_RESTORE;
	return cs;
}

void
bf_guard_register_node(void)
{
	RegisterCustomScanMethods(&guard_scan_methods);
}
