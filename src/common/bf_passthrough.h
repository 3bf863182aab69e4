/*-------------------------------------------------------------------------
 *
 * bf_passthrough.h
 *	  Custom plan nodes that pass their child's tuples on unchanged (the
 *	  run-time join filters' build node, the scan guard).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PASSTHROUGH_H
#define BF_PASSTHROUGH_H

#include "postgres.h"

#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/plannodes.h"

extern CustomScan *bf_passthrough_node(Plan *child, int node_id, const CustomScanMethods *methods);
extern PlanState *bf_passthrough_begin(CustomScanState *node, EState *estate, int eflags);

#endif							/* BF_PASSTHROUGH_H */
