/*-------------------------------------------------------------------------
 *
 * bf_join_runtime.c
 *	  Run-time join filters built from a hash join's inner side
 *	  (bloomfilter.runtime_join_filter).  While the Hash node reads its
 *	  input, a Bloom filter of the join keys is built; the scan that
 *	  produces the outer keys tests each row against it, so that a row
 *	  without a partner is dropped where it is read, before it reaches
 *	  intermediate joins, sorts or a multi-batch join's temp files.
 *
 * How.  The planner hook of bf_join_plan.c calls bf_join_runtime_consider
 * for each hash join of the finished plan.  It puts a custom node, "Bloom
 * Build", between the Hash node and its child: the node passes the
 * child's tuples on unchanged (the same slot; its result type and slot
 * kind are the child's) and hashes each one's inner key into a filter of
 * its state.  The outer scan gets the qual bf_runtime_filter(n, key), n
 * the filter's number in the plan; the build node registers its filter
 * under that number and the executor's per-query memory context when the
 * executor starts it (bf_join_query.c), and the qual finds it there (its
 * own FmgrInfo lives in that context): each execution (a cursor, a nested
 * execution of a cached plan, a parallel worker) has its own context, so
 * its own filters, and where none was registered (a worker running the outer scan
 * without the join, or SQL calling the function) the qual passes every
 * row.  A number, not a PARAM_EXEC parameter: EXPLAIN could not show a
 * parameter that only a custom node sets (PostgreSQL 16 on asserts there
 * is none), and no SQL value can stand for a pointer.
 *
 * When a row may be dropped.  Only once the build is complete (the
 * child returned its end): a hash join may fetch its first outer row
 * before it builds, and that row passes unfiltered.  A rescan of the
 * join that rebuilds its hash table rescans the Hash node, and so this
 * node, at once, which marks the filter incomplete again; a join whose
 * inner side depends on parameters (which would rescan it only when the
 * table is built, after the outer side may have been read) gets no
 * filter.  Only where an outer row without a partner is dropped by the
 * join: inner, semi and right joins (whose outer side is the nullable
 * one), the outer scan found through the nodes that bf_join_plan.c's
 * find_scan crosses; never a Parallel Hash (a worker's build sees part
 * of the inner side; a plain Hash under a Gather reads all of it in each
 * process).  The equality must hash alike on both sides (key_ok() of
 * bf_join_plan.c): then the filter's hashing (bf_hash_datum,
 * int2/int4/int8 alike) agrees with it.  A NULL outer key is dropped only
 * where the operator is strict.
 *
 * Size and cost.  The filter is sized from the inner side's row estimate
 * (1 % false positives); when more distinct keys arrive, a layer four
 * times larger is added (tests probe every layer), up to
 * RUNTIME_MAX_LAYERS layers or RUNTIME_MAX_BYTES, after which the filter
 * is dropped (passes every row).  A filter that removed less than a tenth
 * of its first BF_JOIN_PROBE tested keys switches itself off, as
 * bf_join_prefilter does.
 *
 * bloomfilter.runtime_join_filter: off, on (wherever safe) or auto: a
 * hash join the planner expects to spill to several batches (its inner
 * side larger than get_hash_memory_limit()) or to build a hash table of
 * AUTO_MIN_HASH_BYTES or more, dropping at least 10 000 outer rows and
 * keeping at most 60 % (bf_join_pays, also the index pre-filter's rule,
 * which leaves in-memory hash joins alone).  EXPLAIN shows the build node
 * with its filters, and with ANALYZE what each one held, tested and
 * removed.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"
#include "bf_passthrough.h"
#include "bf_value.h"

#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/nodeHash.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"

#define BUILD_NODE_NAME		"Bloom Build"


#define RUNTIME_FPR			0.01
#define RUNTIME_MIN_KEYS	1024.0
#define RUNTIME_MAX_LAYERS	8
#define RUNTIME_GROWTH		4.0
#define RUNTIME_MAX_BYTES	((Size) 64 * 1024 * 1024)
/*
 * auto: the smallest in-memory hash table worth a filter (beyond it a
 * probe leaves the CPU's caches; measured, docs/PERFORMANCE.md)
 */
#define AUTO_MIN_HASH_BYTES	(1024.0 * 1024.0)
#define RUNTIME_SEED		INT64CONST(0x5EED0F10)
#define RUNTIME_MAGIC		0x42465254	/* "BFRT" */

/* the values of both settings of join filters */
const struct config_enum_entry bf_join_filter_options[] = {
	{"off", BF_JOIN_FILTER_OFF, false},
	{"on", BF_JOIN_FILTER_ON, false},
	{"auto", BF_JOIN_FILTER_AUTO, false},
	{"force", BF_JOIN_FILTER_FORCE, true},
	{NULL, 0, false}
};

static int	runtime_filter_mode = BF_JOIN_FILTER_AUTO;

/* one layer of a filter */
typedef struct RuntimeLayer
{
	uint8	   *bits;
	uint64		nblocks;
	int			nhashes;
	double		capacity;		/* distinct keys it was sized for */
	double		distinct;		/* keys that set a bit */
} RuntimeLayer;

/*
 * One filter: what the build node fills and the qual reads (registered
 * under its number and the query's memory context), in that memory
 */
typedef struct RuntimeFilter
{
	uint32		magic;
	int			id;				/* its number in the plan */
	MemoryContext mcxt;			/* the query's: layers are made mid-scan */
	BfTypeInfo	ti;				/* the inner key's hashing */
	ExprState  *key;			/* the inner key, of the child's tuple */
	Expr	   *keyexpr;		/* for EXPLAIN */
	Var		   *outer_column;	/* the outer key's column, for EXPLAIN */
	bool		strict;			/* a NULL key joins nothing */
	double		first_capacity;
	int			nlayers;
	RuntimeLayer layers[RUNTIME_MAX_LAYERS];
	Size		bytes;
	bool		complete;		/* the child returned its end */
	bool		dropped;		/* too many keys */
	bool		off;			/* dropped too little */
	uint64		keys;			/* inner keys hashed */
	BfJoinProbe probe;			/* since the last build, for off */
	uint64		tested;			/* in all, for EXPLAIN ANALYZE */
	uint64		removed;
} RuntimeFilter;

typedef struct BuildState
{
	CustomScanState css;
	int			nfilters;
	RuntimeFilter **filters;
} BuildState;

static Node *build_create_state(CustomScan *cscan);
static void build_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *build_exec(CustomScanState *node);
static void build_end(CustomScanState *node);
static void build_rescan(CustomScanState *node);
static void build_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomScanMethods build_scan_methods = {
	.CustomName = BUILD_NODE_NAME,
	.CreateCustomScanState = build_create_state,
};

static const CustomExecMethods build_exec_methods = {
	.CustomName = BUILD_NODE_NAME,
	.BeginCustomScan = build_begin,
	.ExecCustomScan = build_exec,
	.EndCustomScan = build_end,
	.ReScanCustomScan = build_rescan,
	.ExplainCustomScan = build_explain,
};

/* ---- the filter ---- */

/* a new layer for capacity keys, or false when the filter may not grow */
static bool
add_layer(RuntimeFilter *rf, double capacity)
{
	RuntimeLayer *l;
	uint64		nblocks;
	int			nhashes;

	if (rf->nlayers >= RUNTIME_MAX_LAYERS ||
		!bloom_size_for(capacity, RUNTIME_FPR, &nblocks, &nhashes) ||
		rf->bytes + nblocks * BLOOM_BLOCK_BYTES > RUNTIME_MAX_BYTES)
		return false;
	l = &rf->layers[rf->nlayers++];
	l->bits = MemoryContextAllocExtended(rf->mcxt, nblocks * BLOOM_BLOCK_BYTES,
										 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	l->nblocks = nblocks;
	l->nhashes = nhashes;
	l->capacity = capacity;
	l->distinct = 0;
	rf->bytes += nblocks * BLOOM_BLOCK_BYTES;
	return true;
}

/* empty, incomplete, as sized by the plan (a build starts or starts again) */
static void
reset_filter(RuntimeFilter *rf)
{
	for (int i = 0; i < rf->nlayers; i++)
		pfree(rf->layers[i].bits);
	rf->nlayers = 0;
	rf->bytes = 0;
	rf->complete = false;
	rf->dropped = !add_layer(rf, rf->first_capacity);
	rf->off = false;
	rf->probe.tested = 0;
	rf->probe.dropped = 0;
}

static void
add_key(RuntimeFilter *rf, uint64 h)
{
	RuntimeLayer *l = &rf->layers[rf->nlayers - 1];

	rf->keys++;
	if (!bloom_set_hash(l->bits, l->nblocks, l->nhashes, h))
		return;
	/* more distinct keys than sized for: a larger layer, or give up */
	if (++l->distinct > l->capacity &&
		!add_layer(rf, l->capacity * RUNTIME_GROWTH))
	{
		rf->dropped = true;
		for (int i = 0; i < rf->nlayers; i++)
			pfree(rf->layers[i].bits);
		rf->nlayers = 0;
		rf->bytes = 0;
	}
}

static bool
test_key(const RuntimeFilter *rf, uint64 h)
{
	for (int i = 0; i < rf->nlayers; i++)
		if (bloom_test_hash(rf->layers[i].bits, rf->layers[i].nblocks,
							rf->layers[i].nhashes, h))
			return true;
	return false;
}

/* ---- the qual ---- */

PG_FUNCTION_INFO_V1(bf_runtime_filter);

/* a call site's filter, found once, and its key's hashing */
typedef struct RuntimeCall
{
	RuntimeFilter *rf;			/* NULL: none registered, pass every row */
	BfTypeInfo	ti;
} RuntimeCall;

/*
 * bf_runtime_filter(integer, anyelement): false when the key is not in
 * the complete filter number n of this query, made of a hash join's inner
 * keys; true where it cannot tell (no such filter in this execution, not
 * built yet, dropped, switched off).
 */
Datum
bf_runtime_filter(PG_FUNCTION_ARGS)
{
	RuntimeCall *call = (RuntimeCall *) fcinfo->flinfo->fn_extra;
	RuntimeFilter *rf;
	bool		found;

	if (call == NULL)
	{
		call = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(RuntimeCall));
		call->rf = PG_ARGISNULL(0) ? NULL :
			bf_query_get(fcinfo->flinfo->fn_mcxt, BF_QUERY_RUNTIME_FILTER,
						 (uint32) PG_GETARG_INT32(0));
		if (call->rf != NULL)
			bf_typeinfo_init(&call->ti, get_fn_expr_argtype(fcinfo->flinfo, 1),
							 PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = call;
	}
	rf = call->rf;
	if (rf == NULL || !rf->complete || rf->dropped || rf->off)
		PG_RETURN_BOOL(true);
	Assert(rf->magic == RUNTIME_MAGIC);
	if (PG_ARGISNULL(1))
		found = !rf->strict;
	else
		found = test_key(rf, bf_hash_datum(&call->ti, PG_GETARG_DATUM(1), RUNTIME_SEED));
	rf->tested++;
	rf->removed += !found;
	if (bf_join_probe(&rf->probe, found))
		rf->off = true;
	PG_RETURN_BOOL(found);
}

/* ---- the build node ---- */

static Node *
build_create_state(CustomScan *cscan)
{
	BuildState *bs = (BuildState *) newNode(sizeof(BuildState), T_CustomScanState);

	bs->css.methods = &build_exec_methods;
	return (Node *) bs;
}

/*
 * custom_private: the parameters' ids, whether each operator is strict,
 * each key's collation, each outer key's column; custom_exprs: the inner
 * keys, as expressions of the child's tuple (OUTER_VAR)
 */
static void
build_begin(CustomScanState *node, EState *estate, int eflags)
{
	BuildState *bs = (BuildState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	List	   *ids = linitial(cscan->custom_private);
	List	   *stricts = lsecond(cscan->custom_private);
	List	   *colls = lthird(cscan->custom_private);
	List	   *columns = lfourth(cscan->custom_private);
	int			i = 0;
	ListCell   *lc;

	bf_passthrough_begin(node, estate, eflags);

	bs->nfilters = list_length(ids);
	bs->filters = palloc0(sizeof(RuntimeFilter *) * bs->nfilters);
	foreach(lc, cscan->custom_exprs)
	{
		RuntimeFilter *rf = palloc0(sizeof(RuntimeFilter));
		Expr	   *key = lfirst(lc);

		rf->magic = RUNTIME_MAGIC;
		rf->mcxt = CurrentMemoryContext;
		rf->id = list_nth_int(ids, i);
		rf->strict = list_nth_int(stricts, i) != 0;
		rf->keyexpr = key;
		rf->outer_column = list_nth(columns, i);
		rf->key = ExecInitExpr(key, &node->ss.ps);
		bf_typeinfo_init(&rf->ti, exprType((Node *) key), list_nth_oid(colls, i),
						 CurrentMemoryContext);
		rf->first_capacity = Max(cscan->scan.plan.plan_rows, RUNTIME_MIN_KEYS);
		reset_filter(rf);
		/* the scan's qual finds it here */
		bf_query_put(estate->es_query_cxt, BF_QUERY_RUNTIME_FILTER, (uint32) rf->id, rf);
		bs->filters[i++] = rf;
	}
}

static TupleTableSlot *
build_exec(CustomScanState *node)
{
	BuildState *bs = (BuildState *) node;
	ExprContext *econtext = node->ss.ps.ps_ExprContext;
	TupleTableSlot *slot = ExecProcNode(outerPlanState(node));
	MemoryContext old;

	if (TupIsNull(slot))
	{
		for (int i = 0; i < bs->nfilters; i++)
			bs->filters[i]->complete = true;
		return slot;
	}
	ResetExprContext(econtext);
	econtext->ecxt_outertuple = slot;
	old = MemoryContextSwitchTo(econtext->ecxt_per_tuple_memory);
	for (int i = 0; i < bs->nfilters; i++)
	{
		RuntimeFilter *rf = bs->filters[i];
		bool		isnull;
		Datum		value;

		if (rf->dropped)
			continue;
		value = ExecEvalExpr(rf->key, econtext, &isnull);
		/* a NULL inner key joins nothing: it need not pass any outer key */
		if (!isnull)
			add_key(rf, bf_hash_datum(&rf->ti, value, RUNTIME_SEED));
	}
	MemoryContextSwitchTo(old);
	return slot;
}

static void
build_end(CustomScanState *node)
{
	/* the filters go with the query's memory, and their entries with them */
	ExecEndNode(outerPlanState(node));
}

/* the hash table is built again: so is the filter, and until then it passes */
static void
build_rescan(CustomScanState *node)
{
	BuildState *bs = (BuildState *) node;

	for (int i = 0; i < bs->nfilters; i++)
		reset_filter(bs->filters[i]);
	if (outerPlanState(node)->chgParam == NULL)
		ExecReScan(outerPlanState(node));
}

static void
build_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BuildState *bs = (BuildState *) node;
	List	   *context = set_deparse_context_plan(es->deparse_cxt, node->ss.ps.plan,
												   ancestors);

	for (int i = 0; i < bs->nfilters; i++)
	{
		RuntimeFilter *rf = bs->filters[i];
		StringInfoData buf;

		initStringInfo(&buf);
		appendStringInfo(&buf, "%d: %s tested at %s", rf->id,
						 deparse_expression((Node *) rf->keyexpr, context, true, false),
						 deparse_expression((Node *) rf->outer_column, context, true, false));
		if (es->analyze)
		{
			appendStringInfo(&buf, " (keys " UINT64_FORMAT ", tested " UINT64_FORMAT
							 ", removed " UINT64_FORMAT "%s)",
							 rf->keys, rf->tested, rf->removed,
							 rf->dropped ? "; dropped: too many keys" :
							 rf->off ? "; switched off: removed too few" : "");
		}
		ExplainPropertyText("Runtime Filter", buf.data, es);
		pfree(buf.data);
	}
}

/* the rule of auto: rows dropped at least, fraction kept at most */
#define AUTO_MIN_DROPPED	10000.0
#define AUTO_MAX_KEPT		0.6
/* the rule of on: a filter expected to keep more passes every row */
#define ON_MAX_KEPT			0.95

/*
 * Is a filter of the join expected to pay?  With auto, where the join does
 * more per outer row than the filter's test costs: a nested loop (an
 * inner scan per row), a merge join (the outer side sorted), a hash join
 * whose inner side does not fit in memory (outer rows written to temp
 * files by batch), or whose hash table is at least in_memory_bytes, so
 * large that a probe is a cache miss (a run-time filter's test costs
 * about what a probe of a table in the CPU's caches costs; a lookup in an
 * index about a btree descent, so the index pre-filter of bf_join_plan.c
 * passes HUGE_VAL) -- and only where the planner expects it to drop many
 * rows and keep few.  With on, wherever the planner does not expect it to
 * keep almost every row; with force (the tests' value), wherever it is
 * safe.  mode: the setting's value (not off).  inner_fraction: the share
 * of the filter's keys that the join's inner side holds (an index holds
 * the whole table's, so an outer row that the inner side's own quals
 * leave without a partner still passes it; 1 for a run-time filter).
 * inner_dups: the inner key's rows per value (bf_join_key_dups).
 * kept_least: the least share of rows the filter keeps, whatever the
 * join's estimate says (bf_join_key_presence; 0: none).
 *
 * Each setting errs on its own side where the estimate is unsure: auto,
 * which must not add a test that does not pay, takes an outer row that
 * joins several inner rows as several that join; on, which must not miss
 * a filter that drops rows, as one.
 */
bool
bf_join_pays(Join *join, int mode, double in_memory_bytes, double inner_fraction,
			 double inner_dups, double kept_least)
{
	bool		on = mode == BF_JOIN_FILTER_ON;
	Plan	   *outer = outerPlan(join);
	Plan	   *inner = innerPlan(join);
	double		outer_rows = outer->plan_rows;
	double		joined,
				kept;

	if (mode == BF_JOIN_FILTER_FORCE)
		return true;
	if (outer_rows <= 0)
		return on;
	if (IsA(join, HashJoin) && !on)
	{
		double		bytes = inner->plan_rows * (inner->plan_width + 24);

		if (bytes <= get_hash_memory_limit() && bytes < in_memory_bytes)
			return false;
	}

	/*
	 * the fraction of outer rows that join (for an anti join, that find no
	 * partner and skip the probe); a semi or anti join's estimate counts a
	 * row once
	 */
	joined = join->plan.plan_rows / outer_rows;
	if (on && join->jointype != JOIN_SEMI && join->jointype != JOIN_ANTI)
		joined /= Max(inner_dups, 1.0);
	kept = Min(1.0, joined);
	if (join->jointype == JOIN_ANTI)
		kept = 1.0 - kept;
	/* the keys of the rest of the table: as likely to match, independently */
	kept = Max(kept_least, Min(1.0, kept / Max(inner_fraction, 1e-9)));
	if (on)
		return kept < ON_MAX_KEPT;
	return outer_rows * (1.0 - kept) >= AUTO_MIN_DROPPED && kept <= AUTO_MAX_KEPT;
}

/* ---- the rewrite of a hash join ---- */

/*
 * The build node above child: its tuples' columns, as Vars of the child's
 * output (custom_scan_tlist) and of that (targetlist, INDEX_VAR)
 */
static CustomScan *
make_build_node(Plan *child, int node_id)
{
	CustomScan *cs = bf_passthrough_node(child, node_id, &build_scan_methods);

	/* a hash per row, about what a qual's operator costs */
	cs->scan.plan.total_cost += cpu_operator_cost * child->plan_rows;
	return cs;
}

/* may the filter hash keys of type t (an integer of any width, or the same type on both sides)? */
static bool
hashable(Oid t)
{
	int			family = bf_family_of_type(getBaseType(t));

	return family != BF_FAMILY_RECORD &&
		(family != BF_FAMILY_OTHER || bf_other_type_ok(getBaseType(t)));
}

/*
 * Give the hash join a build node and the outer scans of keys (of
 * bf_join_plan.c, BfRuntimeKey) their quals, where it is safe and the
 * setting says so
 */
/*
 * May the hash join get a build node, and does the setting want one?
 * (Then each of its keys of hashable types gets a filter:
 * bf_join_runtime_key_ok.)
 */
bool
bf_join_runtime_wanted(HashJoin *join, double inner_dups)
{
	Hash	   *hash = (Hash *) innerPlan(join);
	Plan	   *child;

	if (runtime_filter_mode == BF_JOIN_FILTER_OFF ||
		(join->join.jointype != JOIN_INNER && join->join.jointype != JOIN_SEMI &&
		 join->join.jointype != JOIN_RIGHT) ||
		hash == NULL || !IsA(hash, Hash) || hash->plan.parallel_aware ||
		join->join.plan.parallel_aware || (child = outerPlan(hash)) == NULL)
		return false;

	/*
	 * An inner side that depends on parameters is rescanned only when the
	 * table is built again, after the outer side may have been read with
	 * the old filter; and a Hash node already given a build node is left.
	 */
	return bms_is_empty(hash->plan.allParam) && !IsA(child, CustomScan) &&
		bf_join_pays((Join *) join, runtime_filter_mode,
					 AUTO_MIN_HASH_BYTES, 1.0, inner_dups, 0.0);
}

/* may a run-time filter hash the keys of this equality? */
bool
bf_join_runtime_key_ok(Oid outer_type, Oid inner_type)
{
	return hashable(outer_type) && hashable(inner_type);
}

bool
bf_join_runtime_consider(PlannedStmt *stmt, HashJoin *join, List *keys, double inner_dups,
						 Oid funcoid, int *last_node_id, int *next_filter_id)
{
	Hash	   *hash = (Hash *) innerPlan(join);
	Plan	   *child;
	List	   *ids = NIL,
			   *stricts = NIL,
			   *colls = NIL,
			   *columns = NIL,
			   *ikeys = NIL;
	ListCell   *lc;
	CustomScan *cs;

	if (!bf_join_runtime_wanted(join, inner_dups))
		return false;
	child = outerPlan(hash);
	foreach(lc, keys)
	{
		BfRuntimeKey *k = lfirst(lc);
		ListCell   *ls,
				   *lv;

		if (!bf_join_runtime_key_ok(exprType(linitial(k->clause->args)),
									exprType((Node *) k->inner_key)))
			continue;
		/* every scan of the key (each partition's) tests the one filter */
		forboth(ls, k->scans, lv, k->vars)
		{
			Scan	   *scan = lfirst(ls);

			scan->plan.qual =
				lappend(scan->plan.qual,
						makeFuncExpr(funcoid, BOOLOID,
									 list_make2(makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
														  Int32GetDatum(*next_filter_id), false,
														  true),
												copyObject(lfirst(lv))),
									 InvalidOid, k->clause->inputcollid, COERCE_EXPLICIT_CALL));
		}
		ids = lappend_int(ids, (*next_filter_id)++);
		stricts = lappend_int(stricts, op_strict(k->clause->opno));
		colls = lappend_oid(colls, k->clause->inputcollid);
		columns = lappend(columns, copyObject(k->column));
		ikeys = lappend(ikeys, copyObject(k->inner_key));
	}
	if (ikeys == NIL)
		return false;
	cs = make_build_node(child, ++*last_node_id);
	cs->custom_exprs = ikeys;
	cs->custom_private = list_make4(ids, stricts, colls, columns);
	hash->plan.lefttree = (Plan *) cs;
	return true;
}

/* ---- the setting ---- */

bool
bf_join_runtime_enabled(void)
{
	return runtime_filter_mode != BF_JOIN_FILTER_OFF;
}

void
bf_join_runtime_init(void)
{
	DefineCustomEnumVariable("bloomfilter.runtime_join_filter",
							 "Adds run-time join filters built from hash joins' inner sides to query plans.",
							 "off: never; on: wherever safe; auto: for hash joins the planner expects to spill to several batches or to build a hash table of 1 MB or more, dropping at least 10000 outer rows and keeping at most 60 %.",
							 &runtime_filter_mode, BF_JOIN_FILTER_AUTO, bf_join_filter_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	RegisterCustomScanMethods(&build_scan_methods);
	bf_join_early_init();
}
