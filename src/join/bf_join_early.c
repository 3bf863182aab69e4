/*-------------------------------------------------------------------------
 *
 * bf_join_early.c
 *	  A join filter tested before the rest of its scan's work.  A scan
 *	  evaluates its quals as one expression, which first deforms every
 *	  column any of them reads: a row that the join filter drops, by its
 *	  key in the first columns, still had its later columns deformed for a
 *	  date compared in another qual (TPC-H's lineitem: l_orderkey is the
 *	  first column, l_shipdate the eleventh, after four numerics).  So a
 *	  sequential scan whose other quals read columns beyond the filters'
 *	  keys is split: the scan keeps the filter quals alone and returns its
 *	  table's rows as they are (a physical target list: no projection), and
 *	  a custom node above it, "Bloom Rest", evaluates the other quals and
 *	  the projection for the rows the filters passed.  (A Result node
 *	  cannot: it evaluates no per-row qual.)
 *
 * When.  A SELECT without row marks (the node has no EvalPlanQual
 * recheck); a plain table's sequential scan (no dropped columns: the
 * physical target list must match the table's row to return it
 * unprojected), whose quals and target list read user columns only (no
 * system columns, no whole-row Vars), and whose other quals call no
 * volatile function (they are then evaluated for fewer rows, which only a
 * volatile function could tell).  The node has the scan's target list,
 * so the nodes above see the same columns.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"

#include "access/table.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/rel.h"

#define REST_NODE_NAME	"Bloom Rest"

static Node *rest_create_state(CustomScan *cscan);
static void rest_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *rest_exec(CustomScanState *node);
static void rest_end(CustomScanState *node);
static void rest_rescan(CustomScanState *node);

static const CustomScanMethods rest_scan_methods = {
	.CustomName = REST_NODE_NAME,
	.CreateCustomScanState = rest_create_state,
};

static const CustomExecMethods rest_exec_methods = {
	.CustomName = REST_NODE_NAME,
	.BeginCustomScan = rest_begin,
	.ExecCustomScan = rest_exec,
	.EndCustomScan = rest_end,
	.ReScanCustomScan = rest_rescan,
};

/* ---- the node ---- */

static Node *
rest_create_state(CustomScan *cscan)
{
	CustomScanState *css = (CustomScanState *) newNode(sizeof(CustomScanState),
													   T_CustomScanState);

	css->methods = &rest_exec_methods;
	return (Node *) css;
}

/*
 * The scan tuple is the child's row itself, in the child's slot: the qual
 * and the projection, made before this for a virtual slot, are made again
 * for the child's kind of slot
 */
static void
rest_begin(CustomScanState *node, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *child = ExecInitNode(outerPlan(cscan), estate, eflags);
	bool		fixed;

	outerPlanState(node) = child;
	node->ss.ps.scanops = ExecGetResultSlotOps(child, &fixed);
	node->ss.ps.scanopsfixed = fixed;
	node->ss.ps.scanopsset = true;
	node->ss.ps.qual = ExecInitQual(cscan->scan.plan.qual, &node->ss.ps);
	ExecAssignScanProjectionInfoWithVarno(&node->ss, INDEX_VAR);
}

static TupleTableSlot *
rest_exec(CustomScanState *node)
{
	ExprContext *econtext = node->ss.ps.ps_ExprContext;

	for (;;)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		slot = ExecProcNode(outerPlanState(node));
		if (TupIsNull(slot))
			return NULL;
		ResetExprContext(econtext);
		econtext->ecxt_scantuple = slot;
		if (ExecQual(node->ss.ps.qual, econtext))
			return node->ss.ps.ps_ProjInfo ? ExecProject(node->ss.ps.ps_ProjInfo) : slot;
		InstrCountFiltered1(node, 1);
	}
}

static void
rest_end(CustomScanState *node)
{
	ExecEndNode(outerPlanState(node));
}

static void
rest_rescan(CustomScanState *node)
{
	if (outerPlanState(node)->chgParam == NULL)
		ExecReScan(outerPlanState(node));
}

void
bf_join_early_init(void)
{
	RegisterCustomScanMethods(&rest_scan_methods);
}

/* ---- the rewrite ---- */

/* the largest user column of the scan that an expression reads, and whether it reads others */
typedef struct ColumnsRead
{
	Index		scanrelid;
	int			max;
	bool		other;			/* a Var that is not a user column of the scan */
} ColumnsRead;

static bool
columns_read_walker(Node *node, ColumnsRead *cr)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *v = (Var *) node;

		if (v->varno != (int) cr->scanrelid || v->varattno <= 0 || v->varlevelsup != 0)
			cr->other = true;
		else
			cr->max = Max(cr->max, v->varattno);
		return false;
	}
	return expression_tree_walker(node, columns_read_walker, (void *) cr);
}

/* the scan's Vars as the node above it sees them: its scan tuple's, the child's row */
static Node *
to_index_mutator(Node *node, Index *scanrelid)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, Var) && ((Var *) node)->varno == (int) *scanrelid)
	{
		Var		   *v = (Var *) copyObject(node);

		v->varno = INDEX_VAR;
		return (Node *) v;
	}
	return expression_tree_mutator(node, to_index_mutator, (void *) scanrelid);
}

/* the table's columns, in order, as Vars of the scan; NIL with a dropped column */
static List *
physical_tlist(PlannedStmt *stmt, Scan *scan)
{
	RangeTblEntry *rte = rt_fetch(scan->scanrelid, stmt->rtable);
	Relation	rel;
	TupleDesc	desc;
	List	   *tlist = NIL;

	if (rte->rtekind != RTE_RELATION)
		return NIL;
	rel = table_open(rte->relid, NoLock);	/* locked by the planner */
	desc = RelationGetDescr(rel);
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (att->attisdropped)
		{
			list_free_deep(tlist);
			tlist = NIL;
			break;
		}
		tlist = lappend(tlist,
						makeTargetEntry((Expr *) makeVar(scan->scanrelid, att->attnum,
														 att->atttypid, att->atttypmod,
														 att->attcollation, 0),
										att->attnum, NULL, false));
	}
	table_close(rel, NoLock);
	return tlist;
}

/*
 * The plan to put where scan is: a Bloom Rest node over the scan, the
 * scan keeping only its quals that is_filter says are join filters, where
 * that spares deforming; else the scan itself.  *last_node_id: the last
 * plan_node_id given out.
 */
Plan *
bf_join_filter_first(PlannedStmt *stmt, Plan *plan, bool (*is_filter) (Node *, void *),
					 void *arg, int *last_node_id)
{
	Scan	   *scan = (Scan *) plan;
	List	   *filters = NIL,
			   *others = NIL,
			   *tlist;
	ListCell   *lc;
	ColumnsRead fcols = {0},
				ocols = {0},
				tcols = {0};
	CustomScan *cs;

	if (!IsA(plan, SeqScan) || stmt->commandType != CMD_SELECT || stmt->rowMarks != NIL)
		return plan;
	foreach(lc, plan->qual)
	{
		if (is_filter(lfirst(lc), arg))
			filters = lappend(filters, lfirst(lc));
		else
			others = lappend(others, lfirst(lc));
	}
	fcols.scanrelid = ocols.scanrelid = tcols.scanrelid = scan->scanrelid;
	columns_read_walker((Node *) filters, &fcols);
	columns_read_walker((Node *) others, &ocols);
	/* (the projection is for passed rows only already: it decides nothing) */
	columns_read_walker((Node *) plan->targetlist, &tcols);
	if (filters == NIL || others == NIL || fcols.other || ocols.other || tcols.other ||
		ocols.max <= fcols.max || contain_volatile_functions((Node *) others) ||
		(tlist = physical_tlist(stmt, scan)) == NIL)
	{
		list_free(filters);
		list_free(others);
		return plan;
	}
	cs = makeNode(CustomScan);
	memcpy(&cs->scan.plan, plan, sizeof(Plan));
	cs->scan.plan.type = T_CustomScan;
	cs->scan.plan.parallel_aware = false;
	cs->scan.plan.plan_node_id = ++*last_node_id;
	cs->scan.plan.targetlist = (List *) to_index_mutator((Node *) plan->targetlist,
														 &scan->scanrelid);
	cs->scan.plan.qual = (List *) to_index_mutator((Node *) others, &scan->scanrelid);
	cs->scan.plan.lefttree = plan;
	cs->scan.plan.righttree = NULL;
	cs->scan.plan.initPlan = NIL;
	cs->scan.plan.extParam = bms_copy(plan->extParam);
	cs->scan.plan.allParam = bms_copy(plan->allParam);
	cs->scan.scanrelid = 0;
	/* the scan tuple: the child's row, each column as the child returns it */
	foreach(lc, tlist)
	{
		TargetEntry *tle = lfirst(lc);

		cs->custom_scan_tlist = lappend(cs->custom_scan_tlist,
										makeTargetEntry((Expr *) makeVarFromTargetEntry(OUTER_VAR, tle),
														tle->resno, NULL, false));
	}
	cs->methods = &rest_scan_methods;
	plan->qual = filters;
	plan->targetlist = tlist;
	return (Plan *) cs;
}
