/*-------------------------------------------------------------------------
 *
 * bf_index_scan.c
 *	  Planner and executor use of a bloomfilter index: for col = const on
 *	  every key column, a bitmap scan that is empty when the filter rules
 *	  the key out.  The cost estimate says when that plan is worth it.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"
#include "bf_stats.h"

#include "access/genam.h"
#include "access/hash.h"
#include "access/htup_details.h"
#include "access/nbtree.h"
#include "access/relscan.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "storage/bufmgr.h"
#include "utils/lsyscache.h"
#include "utils/selfuncs.h"

/*
 * The key of col = const clauses on every key column, or false when some
 * column has none (or a NULL constant, or a non-constant comparison).
 * types[] get the constants' types and collations for hashing.
 */
static bool
bf_key_of_clauses(List *clauses, int ncols, Datum *values, bool *isnull,
				  Oid *types, Oid *colls)
{
	bool		have[BLOOM_MAX_RECORD_FIELDS] = {false};
	ListCell   *lc;

	foreach(lc, clauses)
	{
		IndexClause *ic = lfirst_node(IndexClause, lc);
		RestrictInfo *rinfo;
		Node	   *right;

		if (list_length(ic->indexquals) != 1 || ic->indexcol >= ncols)
			continue;
		rinfo = linitial_node(RestrictInfo, ic->indexquals);
		if (!IsA(rinfo->clause, OpExpr))
			continue;
		right = get_rightop(rinfo->clause);
		if (right == NULL || !IsA(right, Const) || ((Const *) right)->constisnull)
			continue;
		values[ic->indexcol] = ((Const *) right)->constvalue;
		isnull[ic->indexcol] = false;
		types[ic->indexcol] = ((Const *) right)->consttype;
		colls[ic->indexcol] = ((OpExpr *) rinfo->clause)->inputcollid;
		have[ic->indexcol] = true;
	}
	for (int i = 0; i < ncols; i++)
		if (!have[i])
			return false;
	return true;
}

/* is the key (of values of the given types) definitely absent? */
static bool
bf_key_absent(Relation index, Datum *values, bool *isnull, Oid *types, Oid *colls)
{
	BfIndexState st;
	BfTypeInfo	ti[BLOOM_MAX_RECORD_FIELDS];
	uint64		h;

	bf_index_state(index, &st);
	for (uint32 i = 0; i < st.meta.ncols; i++)
	{
		bf_typeinfo_init(&ti[i], types[i], colls[i], CurrentMemoryContext);
		/* the operator family guarantees this; never trust it blindly */
		if (ti[i].family != st.meta.colfamilies[i])
			return false;
	}
	if (st.meta.ncols == 1)
		h = bf_hash_datum(&ti[0], values[0], st.meta.seed);
	else
		h = bf_hash_fields(ti, (int) st.meta.ncols, values, isnull, st.meta.seed);
	return !bf_index_test_hash(index, &st.layers, st.layers.nlayers, h, NULL);
}

/*
 * May the planner probe the filter for this path?  The plan it chooses
 * (and so EXPLAIN) shows whether the key is absent from every row of the
 * table, so the probe is made only where the query could read all those
 * rows itself: no security-barrier view or row-level security policy
 * restricts the table (nor, for a partition, its parent; nor does the
 * query level sit inside a security-barrier subquery), and the user the
 * query runs as (a view's owner, for tables read through a view) may read
 * every column the index reads.  This is the planner's own rule for
 * statistics (examine_variable in selfuncs.c) without its exception for
 * leakproof operators: a probe reveals hidden rows whatever the operator.
 */
static bool
bf_plan_may_probe(PlannerInfo *root, IndexOptInfo *info, Relation index)
{
	RelOptInfo *rel = info->rel;
	Oid			userid = OidIsValid(rel->userid) ? rel->userid : GetUserId();
	Index		varno = rel->relid;
	Oid			checkrel = InvalidOid;

	/* this table and the tables it was expanded from (partitions, children) */
	for (;;)
	{
		RangeTblEntry *rte = planner_rt_fetch(varno, root);

		if (rte->securityQuals != NIL)
			return false;
		if (rte->rtekind == RTE_RELATION)
			checkrel = rte->relid;
		if (root->append_rel_array == NULL || root->append_rel_array[varno] == NULL)
			break;
		varno = root->append_rel_array[varno]->parent_relid;
	}
	/* a subquery of a security-barrier view that was not flattened */
	for (PlannerInfo *up = root->parent_root; up != NULL; up = up->parent_root)
	{
		ListCell   *lc;

		foreach(lc, up->parse->rtable)
		{
			RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

			if (rte->rtekind == RTE_SUBQUERY && rte->security_barrier)
				return false;
		}
	}
	return OidIsValid(checkrel) && bf_index_readable(index, userid, checkrel, NULL);
}

/*
 * The planner may use the index only for col = const (on every key
 * column) when the filter says the key is definitely absent: then the
 * scan costs one page and returns an empty bitmap.  In every other case
 * (including when it may not probe, bf_plan_may_probe) the cost is
 * prohibitive.  The filter is probed at plan time; a plan kept after the
 * key was inserted stays correct (the scan then returns every heap page,
 * lossy, and the heap scan rechecks), only slow.
 */
void
bfcostestimate(PlannerInfo *root, IndexPath *path, double loop_count,
			   Cost *indexStartupCost, Cost *indexTotalCost,
			   Selectivity *indexSelectivity, double *indexCorrelation,
			   double *indexPages)
{
	IndexOptInfo *info = path->indexinfo;
	Datum		values[BLOOM_MAX_RECORD_FIELDS];
	bool		isnull[BLOOM_MAX_RECORD_FIELDS];
	Oid			types[BLOOM_MAX_RECORD_FIELDS];
	Oid			colls[BLOOM_MAX_RECORD_FIELDS];
	bool		absent = false;

	*indexCorrelation = 0.0;
	if (info->nkeycolumns <= BLOOM_MAX_RECORD_FIELDS &&
		bf_key_of_clauses(path->indexclauses, info->nkeycolumns, values, isnull,
						  types, colls))
	{
		/* the planner holds a lock on the index */
		Relation	index = index_open(info->indexoid, NoLock);

		if (bf_plan_may_probe(root, info, index))
		{
			/* the keys this backend inserted count */
			bf_pending_flush_all();
			absent = bf_key_absent(index, values, isnull, types, colls);
		}
		index_close(index, NoLock);
	}
	if (absent)
	{
		*indexStartupCost = random_page_cost + cpu_operator_cost;
		*indexTotalCost = *indexStartupCost;
		*indexSelectivity = 0.0;
		*indexPages = 1;
	}
	else
	{
		*indexStartupCost = 1.0e10;
		*indexTotalCost = 1.0e10;
		*indexSelectivity = 1.0;
		*indexPages = info->pages;
	}
}

/*
 * The executor starts every scan of a query in the leader before any
 * parallel worker, so keys this backend inserted are in the pages before
 * a worker could build the bitmap.
 */
IndexScanDesc
bfbeginscan(Relation index, int nkeys, int norderbys)
{
	bf_pending_flush_all();
	return RelationGetIndexScan(index, nkeys, norderbys);
}

void
bfrescan(IndexScanDesc scan, ScanKey keys, int nkeys, ScanKey orderbys,
		 int norderbys)
{
	if (keys && scan->numberOfKeys > 0)
		memmove(scan->keyData, keys, scan->numberOfKeys * sizeof(ScanKeyData));
}

void
bfendscan(IndexScanDesc scan)
{
}

/*
 * An index that answers the same equality on the same leading columns,
 * exactly: a valid btree or hash index on plain columns, without
 * predicate, whose operator families hold the scan's operators.  Open
 * (AccessShareLock, kept to the end of the transaction) with its scan
 * keys in skeys, or NULL.
 */
static Relation
bf_sibling_open(IndexScanDesc scan, ScanKey skeys)
{
	Relation	index = scan->indexRelation;
	int			ncols = IndexRelationGetNumberOfKeyAttributes(index);
	Relation	heap = table_open(index->rd_index->indrelid, NoLock);
	List	   *oids = RelationGetIndexList(heap);
	ListCell   *lc;
	Relation	found = NULL;

	table_close(heap, NoLock);
	foreach(lc, oids)
	{
		Relation	sib;
		bool		ok;

		if (lfirst_oid(lc) == RelationGetRelid(index))
			continue;
		sib = index_open(lfirst_oid(lc), AccessShareLock);
		ok = (sib->rd_rel->relam == BTREE_AM_OID || sib->rd_rel->relam == HASH_AM_OID) &&
			bf_index_complete(sib->rd_index) && RelationGetIndexPredicate(sib) == NIL &&
			IndexRelationGetNumberOfKeyAttributes(sib) >= ncols;
		for (int i = 0; ok && i < scan->numberOfKeys; i++)
		{
			ScanKey		key = &scan->keyData[i];
			int			col = key->sk_attno - 1;
			Oid			right = OidIsValid(key->sk_subtype) ? key->sk_subtype :
				index->rd_opcintype[col];
			Oid			opno = get_opfamily_member(index->rd_opfamily[col],
												   index->rd_opcintype[col], right, 1);
			int			strategy;
			Oid			lefttype,
						righttype;

			ok = OidIsValid(opno) && index->rd_index->indkey.values[col] != 0 &&
				sib->rd_index->indkey.values[col] == index->rd_index->indkey.values[col] &&
				op_in_opfamily(opno, sib->rd_opfamily[col]);
			if (!ok)
				break;
			get_op_opfamily_properties(opno, sib->rd_opfamily[col], false,
									   &strategy, &lefttype, &righttype);
			ok = strategy == (sib->rd_rel->relam == BTREE_AM_OID ?
							  BTEqualStrategyNumber : HTEqualStrategyNumber);
			ScanKeyEntryInitialize(&skeys[i], 0, key->sk_attno, (StrategyNumber) strategy,
								   righttype, key->sk_collation, get_opcode(opno),
								   key->sk_argument);
		}
		if (ok)
		{
			found = sib;
			break;
		}
		index_close(sib, AccessShareLock);
	}
	list_free(oids);
	return found;
}

/*
 * Empty when the filter rules the key out.  Otherwise (a false positive,
 * or a key inserted since the plan was made): the rows another index on
 * the same columns finds, if there is one (the filter first, that index
 * second: no cliff from a one-page probe to a table scan); else every
 * page of the table, lossy (the heap scan rechecks the condition), which
 * is the table scan the query would have made without the filter.
 */
int64
bfgetbitmap(IndexScanDesc scan, TIDBitmap *tbm)
{
	Relation	index = scan->indexRelation;
	int			ncols = IndexRelationGetNumberOfKeyAttributes(index);
	Datum		values[BLOOM_MAX_RECORD_FIELDS];
	bool		isnull[BLOOM_MAX_RECORD_FIELDS];
	Oid			types[BLOOM_MAX_RECORD_FIELDS];
	Oid			colls[BLOOM_MAX_RECORD_FIELDS];
	bool		have[BLOOM_MAX_RECORD_FIELDS] = {false};
	ScanKeyData skeys[BLOOM_MAX_RECORD_FIELDS];
	bool		all = ncols <= BLOOM_MAX_RECORD_FIELDS &&
		scan->numberOfKeys <= BLOOM_MAX_RECORD_FIELDS;
	Relation	heap;
	Relation	sib;
	BlockNumber nblocks;

	for (int i = 0; all && i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			col = key->sk_attno - 1;

		if (key->sk_flags & SK_ISNULL)
			return 0;			/* col = NULL is never true */
		if (col < 0 || col >= ncols || key->sk_strategy != 1 ||
			(key->sk_flags & (SK_SEARCHARRAY | SK_ROW_HEADER | SK_SEARCHNULL | SK_SEARCHNOTNULL)))
		{
			all = false;
			break;
		}
		values[col] = key->sk_argument;
		isnull[col] = false;

		/*
		 * The operator's right-hand type, unless it is the column's own or a
		 * polymorphic one (enum_ops compares anyenum): then the column's type
		 * says how the value hashes.
		 */
		types[col] = key->sk_subtype;
		if (!OidIsValid(types[col]) || get_typtype(types[col]) == TYPTYPE_PSEUDO)
			types[col] = TupleDescAttr(RelationGetDescr(index), col)->atttypid;
		colls[col] = key->sk_collation;
		have[col] = true;
	}
	for (int i = 0; all && i < ncols; i++)
		all = have[i];
	if (all)
	{
		int64		ntids;

		bool		absent;

		bf_pending_flush_all();
		absent = bf_key_absent(index, values, isnull, types, colls);
		bf_stats_count(RelationGetRelid(index), 0, absent);
		if (absent)
			return 0;
		if ((sib = bf_sibling_open(scan, skeys)) != NULL)
		{
			IndexScanDesc sscan = bf_index_beginscan_bitmap(sib, scan->xs_snapshot,
															scan->numberOfKeys);

			index_rescan(sscan, skeys, scan->numberOfKeys, NULL, 0);
			ntids = index_getbitmap(sscan, tbm);
			index_endscan(sscan);
			index_close(sib, NoLock);
			return ntids;
		}
	}

	/* the executor holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	nblocks = RelationGetNumberOfBlocks(heap);
	table_close(heap, NoLock);
	for (BlockNumber b = 0; b < nblocks; b++)
	{
		if ((b & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		tbm_add_page(tbm, b);
	}
	return (int64) nblocks * MaxHeapTuplesPerPage;
}
