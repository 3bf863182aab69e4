/*-------------------------------------------------------------------------
 *
 * bf_join_filter.c
 *	  bf_join_prefilter(index, key): the qual the planner hook adds to the
 *	  scan that produces a join's outer keys (bf_join_plan.c).  It answers
 *	  as bf_index_contains, except that it never fails a query that would
 *	  have run without it: where it cannot answer (the index gone, no
 *	  longer valid, or not readable by the user the query runs as), it
 *	  says "maybe" to every key, which drops nothing.  A partitioned index
 *	  answers from its leaves, the indexes of the partitions.
 *	  bf_join_tracked_prefilter(tbl, col, key) is the same qual for an
 *	  inner key column tracked by the trigger method.
 *
 * Both also switch themselves off: after BF_JOIN_PROBE keys, if one
 * dropped less than a tenth of them, the rest pass untested (the lookups cost
 * more than the join work they spare).  The counts are per call site, so
 * per scan and per parallel worker.
 *
 * A call site that goes on testing copies the index's bits into the
 * query's memory (bf_index_copy, which says why the copy is as good as
 * the index for this execution's snapshot) once the copy costs no more
 * than the lookups so far, COPY_BYTES_PER_KEY bytes per key tested, and
 * up to COPY_MAX_BYTES, as a run-time filter may take (one copy per index
 * and query, which every call site of the query uses): a probe of the
 * copy costs a hash and one memory read, a probe of the index a buffer
 * pin and lock besides (about 150 against 76 ns per key over 10 M keys
 * here, docs/PERFORMANCE.md).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"
#include "bf_join.h"
#include "bf_relcheck.h"
#include "bf_stats.h"
#include "bf_track.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#define COPY_BYTES_PER_KEY	512
#define COPY_MAX_BYTES		((Size) 64 * 1024 * 1024)

typedef struct JoinFilterState
{
	BfTypeInfo	ti;
	BfIndexLookup lk;
	BfIndexCopy *copy;			/* the index's bits, once copied */
	uint64		copy_at;		/* keys tested when to try copying; 0: never */
	Oid			checked_user;	/* checked_index found usable for this user */
	Oid			checked_index;
	bool		off;			/* pass every key */
	BfJoinProbe probe;
} JoinFilterState;

/*
 * Is indexoid a complete bloomfilter index of a table that holds its rows
 * (not one of Citus's), usable by this transaction's snapshots
 * (bf_index_current)?  Locks it until the end of the transaction when it
 * is.  *heap: its table.
 */
static bool
answers(Oid indexoid, char relkind, Oid *heap)
{
	Relation	index = try_relation_open(indexoid, AccessShareLock);
	bool		ok;

	if (index == NULL)
		return false;
	*heap = index->rd_index->indrelid;
	ok = index->rd_rel->relkind == relkind &&
		get_rel_relkind(*heap) == (relkind == RELKIND_INDEX ? RELKIND_RELATION :
								   RELKIND_PARTITIONED_TABLE) &&
		!bf_citus_table(*heap) && bf_index_answers(index);
	relation_close(index, NoLock);
	return ok;
}

/*
 * May the filter answer for userid: the index still there and answering
 * (a partitioned index: each of its leaves, the indexes of the
 * partitions), readable by userid and its table under no row-level
 * security for it (which the SQL functions would refuse)?
 */
static bool
usable(Oid indexoid, Oid userid)
{
	char		relkind = get_rel_relkind(indexoid);
	Oid			heap;
	Relation	index;
	bool		ok;
	ListCell   *lc;

	if (relkind != RELKIND_INDEX && relkind != RELKIND_PARTITIONED_INDEX)
		return false;
	if (!answers(indexoid, relkind, &heap))
		return false;
	index = relation_open(indexoid, NoLock);
	ok = bf_index_readable(index, userid, heap, NULL) &&
		check_enable_rls(heap, userid, true) == RLS_NONE;
	if (ok && relkind == RELKIND_PARTITIONED_INDEX)
	{
		List	   *leaves = bf_index_leaves(indexoid);
		Oid			leafheap;

		foreach(lc, leaves)
			ok = ok && answers(lfirst_oid(lc), RELKIND_INDEX, &leafheap);
		list_free(leaves);
	}
	relation_close(index, NoLock);
	return ok;
}

/*
 * Use the query's copy of the index, or make it if that costs no more
 * than this call site's lookups so far did; else try again when twice as
 * many keys were tested, or never (too large, or an index that cannot be
 * copied)
 */
static void
try_copy(JoinFilterState *st, Oid indexoid, MemoryContext mcxt)
{
	Size		bytes;

	/* one copy per index and query: a partition's scan uses another's */
	st->copy = bf_query_get(mcxt, BF_QUERY_INDEX_COPY, indexoid);
	if (st->copy != NULL)
		return;
	st->copy = bf_index_copy(&st->lk, indexoid,
							 Min(COPY_MAX_BYTES, st->probe.tested * COPY_BYTES_PER_KEY), mcxt,
							 "bf_join_prefilter", &bytes);
	if (st->copy != NULL)
		bf_query_put(mcxt, BF_QUERY_INDEX_COPY, indexoid, st->copy);
	else
		st->copy_at = (bytes > 0 && bytes <= COPY_MAX_BYTES) ? st->copy_at * 2 : 0;
}

PG_FUNCTION_INFO_V1(bf_join_prefilter);

/* bf_join_prefilter(regclass, anyelement): STRICT, a NULL key never joins */
Datum
bf_join_prefilter(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	JoinFilterState *st = (JoinFilterState *) fcinfo->flinfo->fn_extra;
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;
	bool		found;

	if (st == NULL)
	{
		st = MemoryContextAllocZero(mcxt, sizeof(JoinFilterState));
		bf_typeinfo_init(&st->ti, get_fn_expr_argtype(fcinfo->flinfo, 1),
						 PG_GET_COLLATION(), mcxt);
		st->copy_at = BF_JOIN_PROBE;
		fcinfo->flinfo->fn_extra = st;
	}
	if (st->off)
		PG_RETURN_BOOL(true);
	/* the plan passes one index; a call from SQL may pass another per row */
	if (st->checked_user != GetUserId() || st->checked_index != indexoid)
	{
		if (!usable(indexoid, GetUserId()))
		{
			st->off = true;
			PG_RETURN_BOOL(true);
		}
		if (OidIsValid(st->checked_index) && st->checked_index != indexoid)
		{
			st->copy = NULL;	/* of the other index; and no copy again */
			st->copy_at = 0;
		}
		st->checked_user = GetUserId();
		st->checked_index = indexoid;
	}
	if (st->copy != NULL)
		found = bf_index_copy_contains(st->copy, &st->ti, PG_GETARG_DATUM(1));
	else
		found = bf_index_might_contain_cached(&st->lk, indexoid, &st->ti, PG_GETARG_DATUM(1),
											  mcxt, "bf_join_prefilter");
	bf_stats_count(indexoid, 0, !found);
	if (bf_join_probe(&st->probe, found))
		st->off = true;
	else if (st->probe.tested == st->copy_at)
		try_copy(st, indexoid, mcxt);
	PG_RETURN_BOOL(found);
}

/* a call site of bf_join_tracked_prefilter */
typedef struct TrackedFilterState
{
	bool		off;			/* pass every key */
	BfJoinProbe probe;
} TrackedFilterState;

/*
 * bf_join_tracked_prefilter(tbl, col, key): the qual the planner hook
 * (bf_join_plan.c) gives the scan of a join's outer keys when the inner
 * key column is tracked by the trigger method, and the scan guard's test
 * of such a column (bf_guard_plan.c).  It answers as bf_might_contain, at
 * its cost (the backend's kept lookups, the rights checked once per call
 * site and user), except that where it cannot (the column untracked, its
 * filter stale, or not readable by the user the query runs as) it says
 * "maybe" to every key, and that it switches itself off after
 * BF_JOIN_PROBE keys of which it dropped less than a tenth, as
 * bf_join_prefilter does.  Its state is kept with that of the lookup
 * (bf_tracked_call_state).
 */
PG_FUNCTION_INFO_V1(bf_join_tracked_prefilter);
Datum
bf_join_tracked_prefilter(PG_FUNCTION_ARGS)
{
	void	  **slot = bf_tracked_call_state(fcinfo);
	TrackedFilterState *st = *slot;
	bool		found;

	if (st == NULL)
		*slot = st = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt,
											sizeof(TrackedFilterState));
	if (st->off)
		PG_RETURN_BOOL(true);
	if (!bf_tracked_might_contain(fcinfo, &found))
	{
		st->off = true;
		PG_RETURN_BOOL(true);
	}
	if (bf_join_probe(&st->probe, found))
		st->off = true;
	PG_RETURN_BOOL(found);
}
