/*-------------------------------------------------------------------------
 *
 * bf_sync_into.c
 *	  bf_sync_into, a trigger helper for users' own tables: adds the new
 *	  rows' values to per-group filters stored in another table, one
 *	  UPDATE per statement.  Not part of tracked filters: the filters are
 *	  the user's, in a table of the user's.
 *
 * It is executable by PUBLIC (CREATE TRIGGER needs EXECUTE on it, also in
 * a restore by a table's owner), so it checks where it may act.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_relcheck.h"
#include "bf_trigger.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "catalog/pg_class.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/tuplestore.h"

/*
 * bf_sync_into(target_table, target_key_column, target_filter_column,
 *              source_key_column, source_value_column [, capacity, fpr])
 *
 * One UPDATE per statement:
 *   UPDATE target t SET f = bf_add_all(COALESCE(t.f, bf_create(cap, fpr)), s.vals)
 *   FROM (SELECT k, array_agg(v) vals FROM unnest($1, $2) u(k, v) ... GROUP BY k) s
 *   WHERE t.key = s.k
 * with the source keys and values of the transition table as two arrays.
 * Prepared once per trigger and kept while its text stays the same.
 */
#define SYNC_INTO_CACHE 16

typedef struct SyncIntoPlan
{
	Oid			tgoid;
	char	   *sql;
	SPIPlanPtr	plan;
} SyncIntoPlan;

static SyncIntoPlan sync_into_plans[SYNC_INTO_CACHE];
static int	sync_into_next;

static SPIPlanPtr
sync_into_plan(Oid tgoid, const char *sql, Oid *types)
{
	SyncIntoPlan *p;

	for (int i = 0; i < SYNC_INTO_CACHE; i++)
		if (sync_into_plans[i].plan && sync_into_plans[i].tgoid == tgoid &&
			strcmp(sync_into_plans[i].sql, sql) == 0)
			return sync_into_plans[i].plan;
	p = &sync_into_plans[sync_into_next];
	sync_into_next = (sync_into_next + 1) % SYNC_INTO_CACHE;
	if (p->plan)
	{
		SPI_freeplan(p->plan);
		pfree(p->sql);
		p->plan = NULL;
	}
	p->plan = bf_spi_keep(sql, 4, types);
	p->sql = MemoryContextStrdup(TopMemoryContext, sql);
	p->tgoid = tgoid;
	return p->plan;
}

static AttrNumber
column_of(Oid relid, const char *colname, const char *argname)
{
	AttrNumber	attnum = get_attnum(relid, colname);

	if (attnum == InvalidAttrNumber || attnum < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("bf_sync_into: %s \"%s\" is not a column of \"%s\"",
						argname, colname, get_rel_name(relid))));
	return attnum;
}

PG_FUNCTION_INFO_V1(bf_sync_into);
Datum
bf_sync_into(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	Trigger    *tg;
	char	  **args;
	Relation	src;
	Oid			srcid;
	Oid			tgtid;
	List	   *names;
	AttrNumber	src_key,
				src_val,
				tgt_filter;
	Oid			bftype;
	Oid			nsp;
	int64		capacity = 1000;
	double		fpr = 0.01;
	Oid			ktype,
				vtype;
	Oid			types[4];
	Datum		values[4];
	int64		n;
	Datum	   *keys;
	bool	   *knulls;
	Datum	   *vals;
	bool	   *vnulls;
	int64		i = 0;
	BfTransitionScan scan;
	int16		klen,
				vlen;
	bool		kbyval,
				vbyval;
	char		kalign,
				valign;
	int			dims[1];
	int			lbs[1] = {1};
	char	   *sql;
	const char *nspname;
	int			rc;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_sync_into must be called as a trigger")));
	td = (TriggerData *) fcinfo->context;
	tg = td->tg_trigger;
	bf_check_statement_trigger(td, "bf_sync_into");
	if (!(TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event)) ||
		td->tg_newtable == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_sync_into must be fired AFTER INSERT or UPDATE with REFERENCING NEW TABLE"),
				 errhint("CREATE TRIGGER ... AFTER INSERT ON source REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into(...).")));
	if (tg->tgnargs != 5 && tg->tgnargs != 6 && tg->tgnargs != 7)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_sync_into takes 5 to 7 arguments, got %d", tg->tgnargs),
				 errhint("The arguments are target_table, target_key_column, target_filter_column, source_key_column, source_value_column [, capacity [, fpr]].")));
	args = tg->tgargs;
	if (tg->tgnargs >= 6)
		capacity = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(args[5])));
	if (tg->tgnargs >= 7)
		fpr = DatumGetFloat8(DirectFunctionCall1(float8in, CStringGetDatum(args[6])));

	n = tuplestore_tuple_count(td->tg_newtable);
	if (n == 0)
		return PointerGetDatum(NULL);

	src = td->tg_relation;
	srcid = RelationGetRelid(src);

	/*
	 * An unqualified target table is looked up in the schema of the source
	 * table, not along the search_path: the trigger means the same table
	 * whoever fires it.
	 */
	names = bf_qualified_name_list(args[0]);
	if (list_length(names) == 1)
		names = lcons(makeString(get_namespace_name(RelationGetNamespace(src))), names);
	tgtid = RangeVarGetRelid(makeRangeVarFromNameList(names), NoLock, false);
	if (get_rel_relkind(tgtid) != RELKIND_RELATION &&
		get_rel_relkind(tgtid) != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("bf_sync_into: target \"%s\" is not a table", args[0])));

	/*
	 * A trigger on the shard of a distributed table runs on a worker, where
	 * an update of a table Citus manages would be a distributed query run
	 * from a shard: refused here, before the write it belongs to is lost.
	 */
	if (bf_citus_table(tgtid) && bf_citus_worker())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("bf_sync_into: table \"%s\" is managed by Citus, and this trigger runs on a shard",
						get_rel_name(tgtid)),
				 errdetail("Its trigger would run on the shards, which cannot update another distributed or reference table."),
				 errhint("Keep the per-group filters with bf_agg over the distributed table, e.g. INSERT ... SELECT grp, bf_agg(v) ... GROUP BY grp.")));

	src_key = column_of(srcid, args[3], "source_key_column");
	src_val = column_of(srcid, args[4], "source_value_column");
	(void) column_of(tgtid, args[1], "target_key_column");
	tgt_filter = column_of(tgtid, args[2], "target_filter_column");
	nsp = bf_ext(fcinfo->flinfo->fn_oid, false)->nsp;
	bftype = bf_ext(fcinfo->flinfo->fn_oid, false)->bftype;
	if (get_atttype(tgtid, tgt_filter) != bftype)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("bf_sync_into: target_filter_column \"%s\" is not of type bloomfilter",
						args[2])));

	/*
	 * Who may make a trigger write into which table: the UPDATE below runs
	 * as the user firing the trigger, who needs the rights for it; and the
	 * owner of the source table, who (or whose delegate) made the trigger,
	 * must be allowed to update the target's filter column too.  Otherwise
	 * an owner could make other users write, with their rights, into a
	 * table the owner may not touch.
	 */
	if (pg_class_aclcheck(tgtid, src->rd_rel->relowner, ACL_UPDATE) != ACLCHECK_OK &&
		pg_attribute_aclcheck(tgtid, tgt_filter, src->rd_rel->relowner, ACL_UPDATE) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("bf_sync_into: the owner of table \"%s\" may not update column \"%s\" of table \"%s\"",
						RelationGetRelationName(src), args[2], get_rel_name(tgtid)),
				 errdetail("A bf_sync_into trigger writes only into columns the owner of its table may update.")));

	/* the transition rows' keys and values as two arrays of base types */
	ktype = getBaseType(TupleDescAttr(RelationGetDescr(src), src_key - 1)->atttypid);
	vtype = getBaseType(TupleDescAttr(RelationGetDescr(src), src_val - 1)->atttypid);
	types[0] = get_array_type(ktype);
	types[1] = get_array_type(vtype);
	if (!OidIsValid(types[0]) || !OidIsValid(types[1]))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("bf_sync_into: the source columns' types have no array type")));
	types[2] = INT8OID;
	types[3] = FLOAT8OID;
	get_typlenbyvalalign(ktype, &klen, &kbyval, &kalign);
	get_typlenbyvalalign(vtype, &vlen, &vbyval, &valign);
	keys = palloc(sizeof(Datum) * n);
	knulls = palloc(sizeof(bool) * n);
	vals = palloc(sizeof(Datum) * n);
	vnulls = palloc(sizeof(bool) * n);
	bf_transition_begin(&scan, td->tg_newtable, RelationGetDescr(src));
	while (bf_transition_next(&scan) && i < n)
	{
		CHECK_FOR_INTERRUPTS();
		keys[i] = slot_getattr(scan.slot, src_key, &knulls[i]);
		vals[i] = slot_getattr(scan.slot, src_val, &vnulls[i]);
		/* the slot is reused: copy out by-reference values */
		if (!knulls[i])
			keys[i] = datumCopy(keys[i], kbyval, klen);
		if (!vnulls[i])
			vals[i] = datumCopy(vals[i], vbyval, vlen);
		i++;
	}
	bf_transition_end(&scan);
	dims[0] = (int) i;
	values[0] = PointerGetDatum(construct_md_array(keys, knulls, 1, dims, lbs,
												   ktype, klen, kbyval, kalign));
	values[1] = PointerGetDatum(construct_md_array(vals, vnulls, 1, dims, lbs,
												   vtype, vlen, vbyval, valign));
	values[2] = Int64GetDatum(capacity);
	values[3] = Float8GetDatum(fpr);

	/* every name qualified, every operator from pg_catalog */
	nspname = quote_identifier(get_namespace_name(nsp));
	{
		const char *fcol = quote_identifier(args[2]);

		sql = psprintf("UPDATE %s t SET %s = %s.bf_add_all(COALESCE(t.%s, %s.bf_create($3, $4)), s.vals) "
					   "FROM (SELECT u.k, pg_catalog.array_agg(u.v) AS vals "
					   "FROM ROWS FROM (pg_catalog.unnest($1), pg_catalog.unnest($2)) AS u(k, v) "
					   "WHERE u.k IS NOT NULL AND u.v IS NOT NULL GROUP BY u.k) s "
					   "WHERE t.%s OPERATOR(pg_catalog.=) s.k",
					   quote_qualified_identifier(get_namespace_name(get_rel_namespace(tgtid)),
												  get_rel_name(tgtid)),
					   fcol, nspname, fcol, nspname, quote_identifier(args[1]));
	}

	/* runs as the user firing the trigger, who needs UPDATE on the target */
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_plan(sync_into_plan(tg->tgoid, sql, types), values, NULL, false, 0);
	if (rc != SPI_OK_UPDATE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("bf_sync_into: the update of table \"%s\" was rewritten by a rule",
						get_rel_name(tgtid)),
				 errdetail("The update of the filters ran as %s, so the new values would be missing from them.",
						   SPI_result_code_string(rc)),
				 errhint("Drop the DO INSTEAD rule on UPDATE of table \"%s\", or choose another target table.",
						 get_rel_name(tgtid))));
	SPI_finish();
	return PointerGetDatum(NULL);
}
