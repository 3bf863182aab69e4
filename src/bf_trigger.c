/*-------------------------------------------------------------------------
 *
 * bf_trigger.c
 *	  The trigger functions of the bloomfilter extension:
 *
 *	  bf_track_sync   the statement-level AFTER trigger bf_track installs:
 *	                  hashes the tracked column of every row of the
 *	                  transition table and writes the stored filter once
 *	                  per statement (INSERT, UPDATE), counts deleted rows
 *	                  (DELETE), clears the filter (TRUNCATE).
 *	  bf_sync_into    a trigger helper for users' own tables: adds the new
 *	                  rows' values to per-group filters stored in another
 *	                  table, one UPDATE per statement.
 *
 * Both are executable by PUBLIC (CREATE TRIGGER needs EXECUTE on them, also
 * in a restore by a table's owner), so each checks where it may act.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

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

/* bf_funcs.c */
extern Datum bf_clear(PG_FUNCTION_ARGS);

static void
check_statement_trigger(TriggerData *td, const char *fname)
{
	if (!TRIGGER_FIRED_AFTER(td->tg_event) || !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be fired AFTER ... FOR EACH STATEMENT", fname)));
}

/*
 * Walk the rows of a transition table with a private read pointer (other
 * triggers of the statement read the same tuplestore).
 */
typedef struct TransitionScan
{
	Tuplestorestate *ts;
	TupleTableSlot *slot;
} TransitionScan;

static void
transition_begin(TransitionScan *scan, Tuplestorestate *ts, TupleDesc desc)
{
	int			ptr = tuplestore_alloc_read_pointer(ts, EXEC_FLAG_REWIND);

	tuplestore_select_read_pointer(ts, ptr);
	tuplestore_rescan(ts);
	scan->ts = ts;
	scan->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
}

static bool
transition_next(TransitionScan *scan)
{
	return tuplestore_gettupleslot(scan->ts, true, false, scan->slot);
}

static void
transition_end(TransitionScan *scan)
{
	tuplestore_select_read_pointer(scan->ts, 0);
	ExecDropSingleTupleTableSlot(scan->slot);
}

/* ---- bf_track_sync ---- */

/*
 * Statements on the registry, prepared once per backend (and registry
 * layout: 1.1 added the version column).
 */
static Oid	plans_registry = InvalidOid;
static AttrNumber plans_version;
static AttrNumber plans_changes;
static SPIPlanPtr plan_lock;
static SPIPlanPtr plan_update;
static SPIPlanPtr plan_deleted;
static SPIPlanPtr plan_truncate;

static SPIPlanPtr
keep(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_prepare failed: %s", sql);
	return plan;
}

static void
prepare_plans(const BfExt *ext)
{
	Oid			types[3] = {INT8OID, InvalidOid, BYTEAOID};
	/* with 1.1's registry, also what each write changed (bf_track_changes.c) */
	bool		stamps = ext->att_changes != 0;

	if (plans_registry == ext->registry_relid && plans_version == ext->att_version &&
		plans_changes == ext->att_changes)
		return;
	if (OidIsValid(plans_registry))
	{
		SPI_freeplan(plan_lock);
		SPI_freeplan(plan_update);
		SPI_freeplan(plan_deleted);
		SPI_freeplan(plan_truncate);
		plans_registry = InvalidOid;
	}
	plan_lock = keep(psprintf("SELECT filter%s FROM %s WHERE id = $1 FOR UPDATE",
							  stamps ? ", version, changes" : "", ext->registry),
					 1, types);
	types[1] = ext->bftype;
	plan_update = keep(stamps ?
					   psprintf("UPDATE %s SET filter = $2, version = DEFAULT, changes = $3 "
								"WHERE id = $1", ext->registry) :
					   psprintf("UPDATE %s SET filter = $2%s WHERE id = $1",
								ext->registry, bf_registry_new_value_sql(ext)),
					   stamps ? 3 : 2, types);
	plan_truncate = keep(psprintf("UPDATE %s SET filter = $2, deleted_since_rebuild = 0%s "
								  "WHERE id = $1", ext->registry, bf_registry_new_value_sql(ext)),
						 2, types);
	types[1] = INT8OID;
	plan_deleted = keep(psprintf("UPDATE %s SET deleted_since_rebuild = deleted_since_rebuild + $2 "
								 "WHERE id = $1", ext->registry),
						2, types);
	plans_registry = ext->registry_relid;
	plans_version = ext->att_version;
	plans_changes = ext->att_changes;
}

static void
run_plan(SPIPlanPtr plan, Datum *values, const char *nulls, int expect)
{
	int			rc = SPI_execute_plan(plan, values, nulls, false, 0);

	if (rc != expect)
		elog(ERROR, "SPI_execute_plan failed: %s", SPI_result_code_string(rc));
}

/*
 * true if every non-NULL value of the transition table is (probably) in
 * f already, so that the statement need not write the filter
 */
static bool
all_present(TransitionScan *scan, AttrNumber attnum, BfTypeInfo *ti, BfFilter *f)
{
	if (f->hdr.family == BF_FAMILY_NONE)
		return false;
	while (transition_next(scan))
	{
		bool		isnull;
		Datum		v = slot_getattr(scan->slot, attnum, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		/* a mismatched family errors out here, before anything is written */
		if (!bf_filter_test(f, ti, v))
			return false;
	}
	return true;
}

/* may the user firing the trigger read the tracked column, every row of it? */
static bool
may_read_column(RegRow *r)
{
	Oid			userid = GetUserId();
	AttrNumber	attnum;

	if (check_enable_rls(r->tbl, InvalidOid, true) == RLS_ENABLED)
		return false;
	if (pg_class_aclcheck(r->tbl, userid, ACL_SELECT) == ACLCHECK_OK)
		return true;
	attnum = get_attnum(r->tbl, NameStr(r->col));
	return attnum > 0 &&
		pg_attribute_aclcheck(r->tbl, attnum, userid, ACL_SELECT) == ACLCHECK_OK;
}

static void
sync_new_rows(FunctionCallInfo fcinfo, TriggerData *td, BfSpiContext *cx,
			  RegRow *r, Tuplestorestate *ts)
{
	Relation	rel = td->tg_relation;
	Oid			relid = RelationGetRelid(rel);
	AttrNumber	attnum = get_attnum(relid, NameStr(r->col));
	Oid			typid;
	int32		typmod;
	Oid			collid;
	BfTypeInfo	ti;
	TransitionScan scan;
	BfFilter	f;
	BfAdder		adder;
	Datum		values[3];
	bool		isnull;
	bool		reader = may_read_column(r);
	bool	   *touched = NULL;
	char		nulls[3] = {' ', ' ', ' '};

	if (attnum == InvalidAttrNumber)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("tracked column \"%s\" of table \"%s\" does not exist",
						NameStr(r->col), RelationGetRelationName(rel)),
				 errhint("Call bf_untrack for the column, or bf_track it again.")));
	get_atttypetypmodcoll(relid, attnum, &typid, &typmod, &collid);
	bf_typeinfo_init(&ti, typid, collid, CurrentMemoryContext);

	/*
	 * Cheap path: every value already in the latest committed filter (e.g.
	 * an UPDATE of another column).  Only when that filter is at hand
	 * without a detoast; and sound without a lock because from now on bits
	 * are only added: TRUNCATE and bf_rebuild, which reset bits, lock the
	 * table against writers such as this transaction.  Only for users who
	 * may read the column: for others, whether the registry row gets
	 * locked and written would tell whether their values were in the
	 * filter already.
	 */
	if (reader && bf_registry_filter_cached(r, &f))
	{
		bool		present;

		transition_begin(&scan, ts, RelationGetDescr(rel));
		present = all_present(&scan, attnum, &ti, &f);
		transition_end(&scan);
		if (present)
			return;
	}

	/* lock the registry row, read its latest version, add, write once */
	bf_spi_begin(cx, fcinfo->flinfo->fn_oid, true);
	prepare_plans(cx->ext);
	values[0] = Int64GetDatum(r->id);
	run_plan(plan_lock, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
	{
		/* untracked concurrently: nothing left to keep in sync */
		bf_spi_end(cx);
		return;
	}
	values[1] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
	{
		bf_spi_end(cx);
		return;
	}
	f = bf_detoast_copy(values[1]);
	bf_adder_init(&adder, &f, &ti);
	if (cx->ext->att_changes)
		adder.touched = touched = bf_track_touched(VARSIZE_ANY_EXHDR(f.vl));
	transition_begin(&scan, ts, RelationGetDescr(rel));
	while (transition_next(&scan))
	{
		Datum		v = slot_getattr(scan.slot, attnum, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (!isnull)
			bf_adder_add(&adder, v);
	}
	transition_end(&scan);
	bf_adder_finish(&adder);
	if (bf_adder_changed(&adder) || !reader)
	{
		if (touched)
		{
			bool		vnull;
			Datum		version = SPI_getbinval(SPI_tuptable->vals[0],
												SPI_tuptable->tupdesc, 2, &vnull);
			Datum		changes = SPI_getbinval(SPI_tuptable->vals[0],
												SPI_tuptable->tupdesc, 3, &isnull);

			values[2] = PointerGetDatum(bf_track_stamps(isnull ? NULL : (struct varlena *) DatumGetPointer(changes),
														vnull ? 0 : DatumGetInt64(version),
														VARSIZE_ANY_EXHDR(f.vl), touched));
			/* a growing filter that grew has a new length: a whole-value write */
			if (bf_adder_grew(&adder))
				nulls[2] = 'n';
		}
		values[1] = PointerGetDatum(f.vl);
		run_plan(plan_update, values, nulls, SPI_OK_UPDATE);
	}
	bf_spi_end(cx);
}

/* TRUNCATE of the tracked table: an empty filter of the same size */
static void
clear_filter(FunctionCallInfo fcinfo, BfSpiContext *cx, int64 id)
{
	Datum		values[2];
	bool		isnull;

	bf_spi_begin(cx, fcinfo->flinfo->fn_oid, true);
	prepare_plans(cx->ext);
	values[0] = Int64GetDatum(id);
	run_plan(plan_lock, values, NULL, SPI_OK_SELECT);
	if (SPI_processed > 0)
	{
		values[1] = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (!isnull)
		{
			values[1] = DirectFunctionCall1(bf_clear, values[1]);
			run_plan(plan_truncate, values, NULL, SPI_OK_UPDATE);
		}
	}
	bf_spi_end(cx);
}

/* the suffix of the trigger bf_track installs for this event */
static int
event_suffix(TriggerData *td)
{
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		return 0;
	if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		return 1;
	if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		return 2;
	return 3;
}

PG_FUNCTION_INFO_V1(bf_track_sync);
Datum
bf_track_sync(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	Trigger    *tg;
	int64		id;
	int64		name_id;
	int			suffix;
	RegRow		r;
	BfSpiContext cx;
	Datum		values[2];

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_track_sync must be called as a trigger")));
	td = (TriggerData *) fcinfo->context;
	tg = td->tg_trigger;
	check_statement_trigger(td, "bf_track_sync");

	/*
	 * Only the triggers bf_track installs act: named after their registry
	 * row and event, with the row's id as argument.  Anyone may attach this
	 * function to a table of their own, and its argument is visible in
	 * pg_trigger, so the name alone is no proof: the firing table must
	 * also be the row's table or one of its partitions, where only the
	 * table's owner can have put it.
	 */
	if (tg->tgnargs != 1 ||
		!bf_parse_trigger_name(tg->tgname, &name_id, &suffix) ||
		suffix != event_suffix(td))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" was not created by bf_track", tg->tgname),
				 errhint("Create tracked filters with bf_track, not by hand.")));
	id = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(tg->tgargs[0])));
	if (id != name_id)
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("trigger \"%s\" was not created by bf_track", tg->tgname),
				 errhint("Create tracked filters with bf_track, not by hand.")));

	/* no registry row (e.g. a schema-only restore): nothing to keep in sync */
	if (!bf_registry_fetch(bf_ext(fcinfo->flinfo->fn_oid, false), id,
						   InvalidOid, NULL, true, &r) ||
		r.use_index)
		return PointerGetDatum(NULL);
	/* not the tracked table (e.g. a partition detached since): not its filter */
	if (!bf_in_tree(RelationGetRelid(td->tg_relation), r.tbl))
		return PointerGetDatum(NULL);

	if (TRIGGER_FIRED_BY_INSERT(td->tg_event) || TRIGGER_FIRED_BY_UPDATE(td->tg_event))
	{
		if (td->tg_newtable == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("bf_track_sync needs REFERENCING NEW TABLE")));
		if (r.filter_raw != NULL && tuplestore_tuple_count(td->tg_newtable) > 0)
			sync_new_rows(fcinfo, td, &cx, &r, td->tg_newtable);
	}
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
	{
		int64		n;

		if (td->tg_oldtable == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
					 errmsg("bf_track_sync needs REFERENCING OLD TABLE for DELETE")));
		n = tuplestore_tuple_count(td->tg_oldtable);
		if (n > 0)
		{
			bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);
			prepare_plans(cx.ext);
			values[0] = Int64GetDatum(id);
			values[1] = Int64GetDatum(n);
			run_plan(plan_deleted, values, NULL, SPI_OK_UPDATE);
			bf_spi_end(&cx);
		}
	}
	else if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
	{
		/*
		 * Only a TRUNCATE of the tracked table itself empties the filter; a
		 * partition's leaves the other partitions' values in place.
		 */
		if (r.tbl == RelationGetRelid(td->tg_relation))
			clear_filter(fcinfo, &cx, id);
	}
	return PointerGetDatum(NULL);
}

/* ---- bf_sync_into ---- */

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
	p->plan = keep(sql, 4, types);
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
	TransitionScan scan;
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
	check_statement_trigger(td, "bf_sync_into");
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
	transition_begin(&scan, td->tg_newtable, RelationGetDescr(src));
	while (transition_next(&scan) && i < n)
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
	transition_end(&scan);
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
