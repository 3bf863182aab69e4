/*-------------------------------------------------------------------------
 *
 * bf_passthrough.c
 *	  Custom plan nodes put into a finished plan above a child whose
 *	  tuples they pass on unchanged: the run-time join filters' build node
 *	  (join/bf_join_runtime.c) and the scan guard (guard/bf_guard_node.c).
 *	  Their output is the child's, so the parent's references to the
 *	  child's columns need no change, and the slots they return are the
 *	  child's own.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_passthrough.h"

#include "executor/executor.h"
#include "nodes/makefuncs.h"

/*
 * The node above child: its output is the child's (custom_scan_tlist,
 * Vars of the child's output; targetlist, INDEX_VAR Vars of that), its
 * cost and size the child's
 */
CustomScan *
bf_passthrough_node(Plan *child, int node_id, const CustomScanMethods *methods)
{
	CustomScan *cs = makeNode(CustomScan);
	ListCell   *lc;

	cs->scan.plan.startup_cost = child->startup_cost;
	cs->scan.plan.total_cost = child->total_cost;
	cs->scan.plan.plan_rows = child->plan_rows;
	cs->scan.plan.plan_width = child->plan_width;
	cs->scan.plan.parallel_aware = false;
	cs->scan.plan.parallel_safe = child->parallel_safe;
	cs->scan.plan.plan_node_id = node_id;
	cs->scan.plan.extParam = bms_copy(child->extParam);
	cs->scan.plan.allParam = bms_copy(child->allParam);
	cs->scan.plan.lefttree = child;
	cs->scan.scanrelid = 0;
	foreach(lc, child->targetlist)
	{
		TargetEntry *tle = lfirst(lc);

		cs->custom_scan_tlist = lappend(cs->custom_scan_tlist,
										makeTargetEntry((Expr *) makeVarFromTargetEntry(OUTER_VAR, tle),
														tle->resno, tle->resname, tle->resjunk));
		cs->scan.plan.targetlist = lappend(cs->scan.plan.targetlist,
										   makeTargetEntry((Expr *) makeVarFromTargetEntry(INDEX_VAR, tle),
														   tle->resno, tle->resname, tle->resjunk));
	}
	cs->methods = methods;
	return cs;
}

/*
 * Start the node's child; the tuples the node returns are the child's, so
 * are their type and slots
 */
PlanState *
bf_passthrough_begin(CustomScanState *node, EState *estate, int eflags)
{
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	PlanState  *child = ExecInitNode(outerPlan(cscan), estate, eflags);
	bool		fixed;

	outerPlanState(node) = child;
	node->ss.ps.resultops = ExecGetResultSlotOps(child, &fixed);
	node->ss.ps.resultopsfixed = fixed;
	node->ss.ps.resultopsset = true;
	return child;
}
