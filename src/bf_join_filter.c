/*-------------------------------------------------------------------------
 *
 * bf_join_filter.c
 *	  bf_join_prefilter(index, key): the qual the planner hook adds to the
 *	  scan that produces a join's outer keys (bf_join_plan.c).  It answers
 *	  as bf_index_contains, except that it never fails a query that would
 *	  have run without it: where it cannot answer (the index gone, no
 *	  longer valid, or not readable by the user the query runs as), it
 *	  says "maybe" to every key, which drops nothing.
 *
 * It also switches itself off: after BF_JOIN_PROBE keys, if it dropped
 * less than a tenth of them, the rest pass untested (the lookups cost
 * more than the join work they spare).  The counts are per call site, so
 * per scan and per parallel worker.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"
#include "bf_relcheck.h"

#include "access/relation.h"
#include "catalog/pg_class.h"
#include "miscadmin.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

typedef struct JoinFilterState
{
	BfTypeInfo	ti;
	BfIndexLookup lk;
	Oid			checked_user;	/* the index found usable for this user */
	bool		off;			/* pass every key */
	uint64		tested;
	uint64		dropped;
} JoinFilterState;

/*
 * May the filter answer for userid: the index still there, a complete
 * bloomfilter index of a table that holds its rows (not one of Citus's),
 * usable by this transaction's snapshots (bf_index_current),
 * readable by userid and its table under no row-level security for it
 * (which the SQL functions would refuse)?  Locks the
 * index until the end of the transaction when it may.
 */
static bool
usable(Oid indexoid, Oid userid)
{
	Relation	index = try_relation_open(indexoid, AccessShareLock);
	bool		ok;

	if (index == NULL)
		return false;
	ok = index->rd_rel->relkind == RELKIND_INDEX &&
		get_rel_relkind(index->rd_index->indrelid) == RELKIND_RELATION &&
		!bf_citus_table(index->rd_index->indrelid) &&
		bf_index_answers(index) &&
		bf_index_readable(index, userid, index->rd_index->indrelid, NULL) &&
		check_enable_rls(index->rd_index->indrelid, userid, true) == RLS_NONE;
	relation_close(index, NoLock);
	return ok;
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
		fcinfo->flinfo->fn_extra = st;
	}
	if (st->off)
		PG_RETURN_BOOL(true);
	if (st->checked_user != GetUserId())
	{
		if (!usable(indexoid, GetUserId()))
		{
			st->off = true;
			PG_RETURN_BOOL(true);
		}
		st->checked_user = GetUserId();
	}
	found = bf_index_might_contain_cached(&st->lk, indexoid, &st->ti, PG_GETARG_DATUM(1),
										  mcxt, "bf_join_prefilter");
	st->tested++;
	st->dropped += !found;
	if (st->tested == BF_JOIN_PROBE && st->dropped < BF_JOIN_PROBE / 10)
		st->off = true;
	PG_RETURN_BOOL(found);
}
