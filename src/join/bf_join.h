/*-------------------------------------------------------------------------
 *
 * bf_join.h
 *	  Join filters (src/join/): pre-filters that the planner hook gives
 *	  the scan of a join's outer keys, answered by a bloomfilter index or a
 *	  tracked filter of the inner key column, and run-time filters built by
 *	  a hash join's inner side.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_JOIN_H
#define BF_JOIN_H

#include "bf_value.h"

#include "nodes/execnodes.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "utils/guc.h"

/* bf_join_plan.c: join pre-filters (the planner hook); bf_join_filter.c: their qual */
extern void bf_join_define_gucs(void);
extern Oid	bf_join_extension_function(const char *name, int nargs, const Oid *args,
									   Oid *cached);
extern void bf_join_depend_on_function(PlannedStmt *stmt, Oid funcoid);

/*
 * bf_join_runtime.c: run-time join filters built by a hash join's inner
 * side (bloomfilter.runtime_join_filter): the setting and the custom node.
 * bf_join_plan.c finds, for each hash join, the keys that may have one
 * (BfRuntimeKey: the hash clause, the inner key as the Hash node computes
 * it, the outer scan and its Var, the table's column) and hands them to
 * bf_join_runtime_consider, which decides and rewrites: filters numbered
 * from *next_filter_id, new nodes from *last_node_id; true when it changed
 * the plan.
 */
typedef struct BfRuntimeKey
{
	OpExpr	   *clause;			/* outer key first */
	Expr	   *inner_key;
	List	   *scans;			/* the scans producing the outer key */
	List	   *vars;			/* the key, as each one's qual names it */
	Var		   *column;			/* the first one's column, for EXPLAIN */
} BfRuntimeKey;

extern void bf_join_runtime_init(void);

/* bloomfilter.join_filter and bloomfilter.runtime_join_filter */
typedef enum BfJoinFilterMode
{
	BF_JOIN_FILTER_OFF,
	BF_JOIN_FILTER_ON,
	BF_JOIN_FILTER_AUTO,
	BF_JOIN_FILTER_FORCE		/* wherever safe; for tests, not shown */
} BfJoinFilterMode;
extern const struct config_enum_entry bf_join_filter_options[];
extern bool bf_join_pays(Join *join, int mode, double in_memory_bytes,
						 double inner_fraction, double inner_dups, double kept_least);

/*
 * keys a join filter tests before it judges whether it pays: it switches
 * itself off if it dropped less than a tenth of them
 */
#define BF_JOIN_PROBE	10000

/* the keys a join filter tested, and dropped, for that judgement */
typedef struct BfJoinProbe
{
	uint64		tested;
	uint64		dropped;
} BfJoinProbe;

/* count a key tested; true when the filter should now switch itself off */
static inline bool
bf_join_probe(BfJoinProbe *p, bool found)
{
	p->tested++;
	p->dropped += !found;
	return p->tested == BF_JOIN_PROBE && p->dropped < BF_JOIN_PROBE / 10;
}
extern bool bf_join_runtime_enabled(void);

/* bf_join_plan.c: the last plan_node_id given out in a plan (see there) */
extern int *bf_join_node_ids(PlannedStmt *stmt, int *last);

/* bf_join_fkey.c: what the catalog says of a join's keys (foreign keys, statistics) */
extern bool bf_join_fkey_covers(List *rtable, Var *outer, Var *inner);
extern double bf_join_table_rows(Oid relid);
extern double bf_join_key_dups(List *rtable, Var *inner);
extern double bf_join_key_presence(List *rtable, Var *outer, Var *inner);

/* bf_join_early.c: a scan's join filters tested before its other quals */
extern void bf_join_early_init(void);
extern Plan *bf_join_filter_first(PlannedStmt *stmt, Plan *plan,
								  bool (*is_filter) (Node *, void *), void *arg,
								  int *last_node_id);

/* bf_join_query.c: what join filters keep for one execution of a query */
typedef enum BfQueryKind
{
	BF_QUERY_RUNTIME_FILTER,	/* key: the filter's number in the plan */
	BF_QUERY_INDEX_COPY			/* key: the index's OID */
} BfQueryKind;
extern void bf_query_put(MemoryContext cxt, BfQueryKind kind, uint32 key, void *value);
extern void *bf_query_get(MemoryContext cxt, BfQueryKind kind, uint32 key);

/* bf_join_keys.c: the keys of a join in a finished plan */
extern Expr *bf_join_strip(Expr *e);
extern Var *bf_join_index_column(IndexOnlyScan *ios, Var *v);
extern bool bf_join_find_scan(List *apprels, Plan *outer, Plan *inner, Expr *e,
							  bool outer_side, Scan **scan, Var **var, Var **column);
extern bool bf_join_find_outer_scans(List *apprels, Plan *outer, Plan *inner, Expr *e,
									 List **scans, List **vars, Var **column);
extern Var *bf_join_table_column(List *scans, Var *column);
extern bool bf_join_key_ok(Oid opno, Oid coll, Oid outer_type, Oid inner_type);

extern bool bf_join_runtime_wanted(HashJoin *join, double inner_dups);
extern bool bf_join_runtime_key_ok(Oid outer_type, Oid inner_type);
extern bool bf_join_runtime_consider(PlannedStmt *stmt, HashJoin *join, List *keys,
									 double inner_dups, Oid funcoid, int *last_node_id,
									 int *next_filter_id);

#endif							/* BF_JOIN_H */
