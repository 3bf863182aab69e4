/*-------------------------------------------------------------------------
 *
 * bf_index_dist.c
 *	  Lookups in the bloomfilter index of a table distributed by Citus,
 *	  whose rows (and index entries) live in shards on other nodes.
 *
 * The coordinator asks every shard at once with one statement that Citus
 * plans and runs like any other query on the table:
 *
 *   SELECT 1 FROM tbl
 *   WHERE bf_shard_might_contain(tableoid, '{col}', $1) [AND distcol = $1]
 *   LIMIT 1
 *
 * Citus sends each shard its own copy, "FROM tbl_<shardid>" with LIMIT 1,
 * over the connections of the current transaction, so a lookup sees the
 * transaction's own writes as a local one does.  On the shard's node the
 * support function of bf_shard_might_contain replaces "tableoid" by the
 * shard's OID while the query is planned: the condition then reads no
 * column, so PostgreSQL tests it once, before the scan (a one-time filter),
 * and the scan stops at its first row.  A shard answers "maybe" by a row:
 * its index may hold the key and the shard has a row the statement can
 * see.  A shard without rows has no key either way.  When the key is the
 * distribution column's, "distcol = $1" lets Citus send the statement to
 * the one shard that can hold it, where the scan looks for the key itself.
 *
 * The statement names the index by its key columns: each shard's index is
 * found among the shard's own indexes (Citus gives it a name of its own).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_dist.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "catalog/pg_operator.h"
#include "catalog/index.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "storage/lmgr.h"
#include "parser/parsetree.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

#include "bf_relcheck.h"

/* ---- on the shard's node ---- */

/*
 * The usable bloomfilter index of shard whose key columns are exactly the
 * names in cols, in order (no expression, no predicate: such an index
 * holds every row's key).
 */
static Oid
shard_index(Relation shard, Datum *cols, int ncols)
{
	List	   *indexes = RelationGetIndexList(shard);
	ListCell   *lc;
	Oid			found = InvalidOid;

	foreach(lc, indexes)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index ix = index->rd_index;
		bool		match = bf_is_bloomfilter_index(index) &&
			ix->indnkeyatts == ncols &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
			heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL);

		for (int i = 0; match && i < ncols; i++)
		{
			AttrNumber	attnum = ix->indkey.values[i];

			match = attnum > 0 &&
				namestrcmp(&TupleDescAttr(RelationGetDescr(shard), attnum - 1)->attname,
						   NameStr(*DatumGetName(cols[i]))) == 0;
		}
		index_close(index, AccessShareLock);
		if (match)
		{
			found = lfirst_oid(lc);
			break;
		}
	}
	list_free(indexes);
	return found;
}

/*
 * The usable bloomfilter index on columns colarr (name[]) of relid, a
 * shard or any table that is not distributed; an error when it has none.
 */
static Oid
shard_index_checked(Oid relid, ArrayType *colarr, const char *what)
{
	Relation	rel;
	Datum	   *cols;
	bool	   *colnulls;
	int			ncols;
	Oid			indexoid;

	deconstruct_array(colarr, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR,
					  &cols, &colnulls, &ncols);
	for (int i = 0; i < ncols; i++)
		if (colnulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s: the column names must not be null", what)));
	if (bf_rel_is_distributed(relid))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s: \"%s\" is a distributed table, not one of its shards",
						what, get_rel_name(relid)),
				 errhint("Call bf_index_contains, bf_index_info or bf_might_contain on the coordinator.")));
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	indexoid = shard_index(rel, cols, ncols);
	if (!OidIsValid(indexoid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" has no usable bloomfilter index on the columns asked for",
						RelationGetRelationName(rel)),
				 errdetail("Its bloomfilter index may be missing, invalid, or on other columns or expressions."),
				 errhint("Create the index on the distributed table, or REINDEX it.")));
	relation_close(rel, NoLock);
	return indexoid;
}

/*
 * bf_shard_index(rel, cols): that index (the shards' side of bf_index_info
 * on the coordinator, which names the shard, not its index).  Reading the
 * index needs the rights bf_index_info checks; naming it needs none.
 */
PG_FUNCTION_INFO_V1(bf_shard_index);
Datum
bf_shard_index(PG_FUNCTION_ARGS)
{
	PG_RETURN_OID(shard_index_checked(PG_GETARG_OID(0), PG_GETARG_ARRAYTYPE_P(1),
									  "bf_shard_index"));
}

/*
 * bf_shard_might_contain(rel, cols, value): may the bloomfilter index of
 * table rel on columns cols hold value?  For the shards of a distributed
 * table, named by "tableoid" in a statement the coordinator sends (see
 * above); for any other table it answers as bf_index_contains on that
 * index, with the same rights needed (SELECT on the columns, no row-level
 * security in the way).
 */
PG_FUNCTION_INFO_V1(bf_shard_might_contain);
Datum
bf_shard_might_contain(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	ArrayType  *colarr = PG_GETARG_ARRAYTYPE_P(1);
	Datum		value = PG_GETARG_DATUM(2);
	BfTypeCache *tc = (BfTypeCache *) fcinfo->flinfo->fn_extra;
	Relation	index;
	Oid			indexoid;
	bool		found;

	if (tc == NULL)
		fcinfo->flinfo->fn_extra = tc =
			MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfTypeCache));
	indexoid = shard_index_checked(relid, colarr, "bf_shard_might_contain");
	index = bf_index_open(indexoid, false, "bf_shard_might_contain");
	bf_index_check_access(index);
	found = bf_probe(index, NIL, bf_typecache_lookup(tc, fcinfo, 2, false), value,
					 NULL, NULL);
	index_close(index, NoLock);
	PG_RETURN_BOOL(found);
}

/*
 * The planner support function of bf_shard_might_contain: in a statement
 * on a shard (a table Citus does not list as distributed), the first
 * argument "tableoid" of that table becomes the table's OID, so that the
 * call reads no column and is tested once per statement.  On the
 * coordinator the table is the distributed one and the call stays as it
 * is: Citus sends it to the shards.
 */
PG_FUNCTION_INFO_V1(bf_shard_might_contain_support);
Datum
bf_shard_might_contain_support(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	FuncExpr   *fexpr;
	Var		   *var;
	RangeTblEntry *rte;
	FuncExpr   *copy;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	fexpr = req->fcall;
	if (req->root == NULL || req->root->parse == NULL || list_length(fexpr->args) != 3 ||
		!IsA(linitial(fexpr->args), Var))
		PG_RETURN_POINTER(NULL);
	var = (Var *) linitial(fexpr->args);
	if (var->varattno != TableOidAttributeNumber || var->varlevelsup != 0 ||
		var->varno < 1 || var->varno > list_length(req->root->parse->rtable))
		PG_RETURN_POINTER(NULL);
	rte = rt_fetch(var->varno, req->root->parse->rtable);
	if (rte->rtekind != RTE_RELATION || rte->relkind != RELKIND_RELATION ||
		bf_rel_is_distributed(rte->relid))
		PG_RETURN_POINTER(NULL);
	copy = copyObject(fexpr);
	linitial(copy->args) = makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
									 ObjectIdGetDatum(rte->relid), false, true);
	PG_RETURN_POINTER(copy);
}

/* ---- on the coordinator ---- */

/*
 * The distribution column of distributed table relid, or NULL (a reference
 * table or a Citus local table has none).
 */
static char *
distribution_column(Oid relid)
{
	Oid			types[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	char	   *col = NULL;

	if (SPI_execute_with_args("SELECT pg_catalog.column_to_column_name(logicalrelid, partkey) "
							  "FROM pg_catalog.pg_dist_partition "
							  "WHERE logicalrelid = $1 AND partkey IS NOT NULL",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read the distribution column of relation %u", relid);
	if (SPI_processed > 0)
		col = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return col;
}

/* the equality operator of keytype, qualified, or NULL */
static char *
equality_operator(Oid keytype, Oid coltype)
{
	TypeCacheEntry *tce;
	HeapTuple	tup;
	char	   *op;

	if (keytype != coltype)
		return NULL;
	tce = lookup_type_cache(keytype, TYPECACHE_EQ_OPR);
	if (!OidIsValid(tce->eq_opr))
		return NULL;
	tup = SearchSysCache1(OPEROID, ObjectIdGetDatum(tce->eq_opr));
	if (!HeapTupleIsValid(tup))
		return NULL;
	op = psprintf("OPERATOR(%s.%s)",
				  quote_identifier(get_namespace_name(((Form_pg_operator) GETSTRUCT(tup))->oprnamespace)),
				  NameStr(((Form_pg_operator) GETSTRUCT(tup))->oprname));
	ReleaseSysCache(tup);
	return op;
}

/*
 * The statement that asks the shards of distributed table relid whether
 * its bloomfilter index on cols may hold a value of type keytype ($2; the
 * column names are $1).
 */
static char *
shard_statement(Oid relid, List *colnames, Oid keytype, const char *nsp)
{
	StringInfoData sql;
	char	   *distcol = NULL;
	char	   *eq = NULL;

	if (list_length(colnames) == 1)
	{
		distcol = distribution_column(relid);
		if (distcol && strcmp(distcol, (char *) linitial(colnames)) == 0)
		{
			AttrNumber	attnum = get_attnum(relid, distcol);

			eq = equality_operator(keytype, get_atttype(relid, attnum));
		}
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT 1 FROM %s.%s t WHERE %s.bf_shard_might_contain(t.tableoid, $1, $2)",
					 quote_identifier(get_namespace_name(get_rel_namespace(relid))),
					 quote_identifier(get_rel_name(relid)), nsp);
	if (eq)
		appendStringInfo(&sql, " AND t.%s %s $2", quote_identifier(distcol), eq);
	appendStringInfoString(&sql, " LIMIT 1");
	return sql.data;
}

/*
 * The statements asked of shards, prepared once per backend for each
 * (table, index, key type) and kept: a lookup per statement then costs
 * Citus's execution, not a parse and plan of ours.  A relcache
 * invalidation of the table or the index (a rename, a new distribution,
 * the index dropped) drops the entry, and the next lookup prepares the
 * statement again from the names of then.
 */
typedef struct DistPlanKey
{
	Oid			relid;
	Oid			indexoid;
	Oid			keytype;
} DistPlanKey;

typedef struct DistPlan
{
	DistPlanKey key;
	bool		valid;
	SPIPlanPtr	plan;
	ArrayType  *cols;			/* the index's key columns, $1 */
} DistPlan;

static HTAB *dist_plans = NULL;

static void
dist_plans_inval(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS seq;
	DistPlan   *p;

	hash_seq_init(&seq, dist_plans);
	while ((p = hash_seq_search(&seq)) != NULL)
		if (!OidIsValid(relid) || p->key.relid == relid || p->key.indexoid == relid)
			p->valid = false;
}

/* the key column names of index (on plain columns only), as name[] in mcxt */
ArrayType *
bf_dist_index_columns(Oid relid, Relation index, List **colnames, MemoryContext mcxt)
{
	int			n = index->rd_index->indnkeyatts;
	Datum	   *names = palloc(sizeof(Datum) * n);
	MemoryContext old;
	ArrayType  *arr;

	if (n < 1 ||
		!heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) ||
		!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot look up bloomfilter index \"%s\" of a distributed table",
						RelationGetRelationName(index)),
				 errdetail("Only indexes on plain columns, without a predicate, are asked on the shards."),
				 errhint("Create a bloomfilter index on the columns themselves.")));
	for (int i = 0; i < n; i++)
	{
		char	   *name = get_attname(relid, index->rd_index->indkey.values[i], false);
		NameData   *nd = palloc(sizeof(NameData));

		namestrcpy(nd, name);
		names[i] = NameGetDatum(nd);
		*colnames = lappend(*colnames, name);
	}
	old = MemoryContextSwitchTo(mcxt);
	arr = construct_array(names, n, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR);
	MemoryContextSwitchTo(old);
	return arr;
}

/* the kept statement for (relid, indexoid, keytype); inside SPI */
static DistPlan *
dist_plan(Oid relid, Oid indexoid, Oid keytype, const char *nsp)
{
	DistPlanKey key;
	DistPlan   *p;
	bool		found;
	Relation	index;
	List	   *colnames = NIL;
	Oid			types[2] = {NAMEARRAYOID, keytype};

	if (dist_plans == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(DistPlanKey);
		ctl.entrysize = sizeof(DistPlan);
		dist_plans = hash_create("bloomfilter distributed lookups", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS);
		CacheRegisterRelcacheCallback(dist_plans_inval, (Datum) 0);
	}
	memset(&key, 0, sizeof(key));
	key.relid = relid;
	key.indexoid = indexoid;
	key.keytype = keytype;
	p = hash_search(dist_plans, &key, HASH_ENTER, &found);
	if (found && p->valid)
		return p;
	if (found)
	{
		if (p->plan)
			SPI_freeplan(p->plan);
		if (p->cols)
			pfree(p->cols);
	}
	p->plan = NULL;
	p->cols = NULL;
	p->valid = false;
	index = index_open(indexoid, AccessShareLock);
	p->cols = bf_dist_index_columns(relid, index, &colnames, TopMemoryContext);
	index_close(index, NoLock);
	p->plan = SPI_prepare(shard_statement(relid, colnames, keytype, nsp), 2, types);
	if (p->plan == NULL || SPI_keepplan(p->plan) != 0)
		elog(ERROR, "could not prepare the lookup of relation %u: %s", relid,
			 SPI_result_code_string(SPI_result));
	p->valid = true;
	return p;
}

/*
 * SPI for the statements asked of Citus, under the search_path
 * "pg_catalog, pg_temp" (everything they name is qualified); the nest
 * level to give bf_dist_spi_end
 */
int
bf_dist_spi_begin(void)
{
	int			save_nestlevel;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return save_nestlevel;
}

void
bf_dist_spi_end(int save_nestlevel)
{
	AtEOXact_GUC(true, save_nestlevel);
	SPI_finish();
}

/*
 * May the bloomfilter index indexoid of distributed table relid hold
 * value (of type keytype)?  The caller has checked the rights to read the
 * index's columns.  nsp is the extension's schema, quoted; the statement is
 * prepared under the search_path "pg_catalog, pg_temp".
 */
bool
bf_dist_might_contain(Oid relid, Oid indexoid, Oid keytype, Datum value,
					  const char *nsp)
{
	DistPlan   *p;
	Datum		values[2];
	int			save_nestlevel = bf_dist_spi_begin();
	int			rc;
	bool		found;

	p = dist_plan(relid, indexoid, keytype, nsp);
	values[0] = PointerGetDatum(p->cols);
	values[1] = value;
	rc = SPI_execute_plan(p->plan, values, NULL, true, 1);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not ask the shards of relation %u: %s", relid,
			 SPI_result_code_string(rc));
	found = SPI_processed > 0;
	bf_dist_spi_end(save_nestlevel);
	return found;
}

/* the number of shards of Citus table relid; inside SPI */
int64
bf_dist_shard_count(Oid relid)
{
	Oid			types[1] = {REGCLASSOID};
	Datum		values[1] = {ObjectIdGetDatum(relid)};
	bool		isnull;

	if (SPI_execute_with_args("SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_shard "
							  "WHERE logicalrelid = $1",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "could not count the shards of relation %u", relid);
	return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/*
 * What each shard's index of distributed table relid is sized for, so
 * that a lookup over all S shards keeps the rate *fpr the whole column was
 * given: a key absent from the table passes S filters, so each gets the
 * rate fpr / S (the union's rate is then at most fpr); its keys are spread
 * over the shards by their hash, so each holds capacity / S of them (0:
 * each shard sizes its index from its own rows).  The bits grow by about
 * log(S) / log(1 / fpr), a little more for blocked filters at low rates:
 * 1.89 times one filter of the whole column for 32 shards at 1 %, 2.09
 * for 64 (docs/PERFORMANCE.md).
 */
void
bf_dist_shard_sizing(Oid relid, int64 *capacity, double *fpr)
{
	int64		shards = Max(bf_dist_shard_count(relid), 1);

	if (*capacity > 0)
		*capacity = (*capacity + shards - 1) / shards;
	*fpr /= (double) shards;
}

/*
 * The table of indexoid when it is a bloomfilter index of a table of
 * Citus's (distributed, reference or Citus local) that the caller may read
 * through it: the rights are the same as for a local index, SELECT on the
 * columns the index reads and no row-level security in the way.  Invalid
 * when it is not such an index (the caller looks it up in its own pages).
 * The table and the index are locked until the end of the transaction.
 */
Oid
bf_dist_index_table(Oid indexoid)
{
	Oid			heapoid;
	Relation	index;

	/* without Citus itself the local path refuses the table (bf_relcheck.c) */
	if (!bf_citus_catalog())
		return InvalidOid;
	heapoid = IndexGetRelation(indexoid, true);
	if (!OidIsValid(heapoid) || !bf_citus_table(heapoid))
		return InvalidOid;
	LockRelationOid(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (!bf_is_bloomfilter_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a bloomfilter index", RelationGetRelationName(index))));
	bf_index_check_complete(index);
	bf_index_check_access(index);
	index_close(index, NoLock);
	return heapoid;
}

/* the extension's schema, quoted: that of the function being called */
char *
bf_dist_schema(FunctionCallInfo fcinfo)
{
	return (char *) quote_identifier(get_namespace_name(get_func_namespace(fcinfo->flinfo->fn_oid)));
}

/*
 * bf_index_contains on the coordinator, for an index of a distributed (or
 * reference) table: false when indexoid is not one; else *found is the
 * shards' answer.
 */
bool
bf_dist_index_contains(FunctionCallInfo fcinfo, Oid indexoid, Oid keytype,
					   Datum value, bool *found)
{
	Oid			heapoid = bf_dist_index_table(indexoid);

	if (!OidIsValid(heapoid))
		return false;
	*found = bf_dist_might_contain(heapoid, indexoid, keytype, value,
								   bf_dist_schema(fcinfo));
	return true;
}
