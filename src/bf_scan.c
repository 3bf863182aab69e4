/*-------------------------------------------------------------------------
 *
 * bf_scan.c
 *	  Planner and executor use of a bloomfilter index: for col = const on
 *	  every key column, a bitmap scan that is empty when the filter rules
 *	  the key out.  The cost estimate says when that plan is worth it.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

#include "access/htup_details.h"
#include "access/relscan.h"
#include "access/table.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
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
	return !bf_index_test_hash(index, &st.meta, h, NULL);
}

/*
 * The planner may use the index only for col = const (on every key
 * column) when the filter says the key is definitely absent: then the
 * scan costs one page and returns an empty bitmap.  In every other case
 * the cost is prohibitive.  The filter is probed at plan time; a plan kept
 * after the key was inserted stays correct (the scan then returns every
 * heap page, lossy, and the heap scan rechecks), only slow.
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

		absent = bf_key_absent(index, values, isnull, types, colls);
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

IndexScanDesc
bfbeginscan(Relation index, int nkeys, int norderbys)
{
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
 * Empty when the filter rules the key out; otherwise every page of the
 * table, lossy (the heap scan rechecks the condition).
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
	bool		all = ncols <= BLOOM_MAX_RECORD_FIELDS;
	Relation	heap;
	BlockNumber nblocks;

	for (int i = 0; i < scan->numberOfKeys; i++)
	{
		ScanKey		key = &scan->keyData[i];
		int			col = key->sk_attno - 1;

		if (key->sk_flags & SK_ISNULL)
			return 0;			/* col = NULL is never true */
		if (col < 0 || col >= ncols || key->sk_strategy != 1 ||
			(key->sk_flags & (SK_SEARCHARRAY | SK_ROW_HEADER | SK_SEARCHNULL | SK_SEARCHNOTNULL)))
			continue;
		values[col] = key->sk_argument;
		isnull[col] = false;
		types[col] = OidIsValid(key->sk_subtype) ? key->sk_subtype :
			TupleDescAttr(RelationGetDescr(index), col)->atttypid;
		colls[col] = key->sk_collation;
		have[col] = true;
	}
	for (int i = 0; all && i < ncols; i++)
		all = have[i];
	if (all && bf_key_absent(index, values, isnull, types, colls))
		return 0;

	/* the executor holds a lock on the table */
	heap = table_open(index->rd_index->indrelid, NoLock);
	nblocks = RelationGetNumberOfBlocks(heap);
	table_close(heap, NoLock);
	for (BlockNumber b = 0; b < nblocks; b++)
		tbm_add_page(tbm, b);
	return (int64) nblocks * MaxHeapTuplesPerPage;
}

