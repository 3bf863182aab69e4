/*-------------------------------------------------------------------------
 *
 * bf_guard.h
 *	  Scan guards (src/guard/): a node put above the scan of a table for
 *	  "column = key" that asks the column's filter (a bloomfilter index or
 *	  a filter tracked by the trigger method) for the key, at run time,
 *	  before the scan reads anything; an absent key returns no rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_GUARD_H
#define BF_GUARD_H

#include "postgres.h"

#include "nodes/plannodes.h"

/*
 * One key of a guard: the key as the plan computes it (a parameter, a
 * constant, an array of them for "= ANY"), and the test of one value of
 * it, a call of bf_join_prefilter or bf_join_tracked_prefilter on the
 * PARAM_EXEC parameter paramid, which the guard sets to the value first.
 */
typedef struct BfGuardKey
{
	Expr	   *key;
	Expr	   *test;
	int			paramid;
	bool		is_array;		/* key is an array: "= ANY", IN (...) */
	bool		strict;			/* the equality is never true of a NULL */
} BfGuardKey;

/* bf_guard_plan.c: the setting bloomfilter.guard_scans and the planner hook */
extern void bf_guard_init(void);

/* bf_guard_node.c: the custom node */
extern void bf_guard_register_node(void);
extern CustomScan *bf_guard_make_node(Plan *child, int node_id, List *keys);

#endif							/* BF_GUARD_H */
