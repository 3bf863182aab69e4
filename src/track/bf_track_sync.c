/*-------------------------------------------------------------------------
 *
 * bf_track_sync.c
 *	  bf_track_sync, the statement-level AFTER trigger bf_track installs
 *	  for method 'trigger': hashes the tracked column of every row of the
 *	  transition table and writes the filter once per statement (INSERT,
 *	  UPDATE): the chunks whose bits change (bf_track_chunks.c; a growing
 *	  filter's may get a layer, bf_track_grow.c), or the whole value in a
 *	  registry not yet updated to 1.2; counts deleted rows (DELETE), clears
 *	  the filter (TRUNCATE).
 *
 * It is executable by PUBLIC (CREATE TRIGGER needs EXECUTE on it, also in
 * a restore by a table's owner), so it checks where it may act.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

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
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/tuplestore.h"

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
		plans_registry = InvalidOid;
	}
	plan_lock = bf_spi_keep(psprintf("SELECT filter%s FROM %s WHERE id = $1 FOR UPDATE",
							  stamps ? ", version, changes" : "", ext->registry),
					 1, types);
	types[1] = ext->bftype;
	plan_update = bf_spi_keep(stamps ?
					   psprintf("UPDATE %s SET filter = $2, version = DEFAULT, changes = $3 "
								"WHERE id = $1", ext->registry) :
					   psprintf("UPDATE %s SET filter = $2%s WHERE id = $1",
								ext->registry, bf_registry_new_value_sql(ext)),
					   stamps ? 3 : 2, types);
	types[1] = INT8OID;
	plan_deleted = bf_spi_keep(psprintf("UPDATE %s SET deleted_since_rebuild = deleted_since_rebuild + $2 "
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
all_present(BfTransitionScan *scan, AttrNumber attnum, BfTypeInfo *ti, BfFilter *f)
{
	if (f->hdr.family == BF_FAMILY_NONE)
		return false;
	while (bf_transition_next(scan))
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

/*
 * The first values ever added to a chunked filter set its family, in the
 * header that the registry row holds: under that row's lock, against its
 * latest header (another writer may have set it meanwhile).
 */
static void
set_chunked_family(FunctionCallInfo fcinfo, BfSpiContext *cx, RegRow *r,
				   BfTransitionScan *scan, Tuplestorestate *ts, TupleDesc desc,
				   AttrNumber attnum, BfTypeInfo *ti)
{
	bool		isnull;
	RegRow		now;
	uint8		scratch[BLOOM_HEADER_SIZE];

	bf_spi_begin(cx, fcinfo->flinfo->fn_oid, true);
	bf_registry_relock(cx, r, &now);
	if (now.hdr.family == BF_FAMILY_NONE)
	{
		bf_transition_begin(scan, ts, desc);
		while (bf_transition_next(scan))
		{
			Datum		v = slot_getattr(scan->slot, attnum, &isnull);

			if (isnull)
				continue;
			bf_prepare_value(ti, v);
			bf_check_family(&now.hdr, scratch, ti, true);
		}
		bf_transition_end(scan);
		bf_registry_write_header(cx, &now);
	}
	bf_spi_end(cx);
	*r = now;
}

/*
 * A chunked filter: hash the values and OR them into the chunks they fall
 * in (bf_track_chunks.c); a growing filter may get a new layer on the way
 * (bf_track_grow.c).
 */
static void
sync_chunked(FunctionCallInfo fcinfo, TriggerData *td, BfSpiContext *cx,
			 RegRow *r, Tuplestorestate *ts, AttrNumber attnum, BfTypeInfo *ti,
			 bool reader)
{
	TupleDesc	desc = RelationGetDescr(td->tg_relation);
	int64		ntuples = tuplestore_tuple_count(ts);
	uint64	   *hashes = palloc_extended(sizeof(uint64) * Max(ntuples, 1), MCXT_ALLOC_HUGE);
	BloomHeader hdr = r->hdr;
	bool		family_set = false;
	BfTransitionScan scan;
	uint32		n = 0;
	bool		isnull;

	bf_transition_begin(&scan, ts, desc);
	while (bf_transition_next(&scan))
	{
		Datum		v = slot_getattr(scan.slot, attnum, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (isnull)
			continue;
		bf_prepare_value(ti, v);
		/* a mismatched family errors out here, before anything is written */
		if (hdr.family == BF_FAMILY_NONE)
			family_set = true;
		else if (hdr.family != ti->family || hdr.detail != ti->detail)
			bf_check_family(&hdr, NULL, ti, false);
		hashes[n++] = bf_hash_datum(ti, v, hdr.seed);
	}
	bf_transition_end(&scan);
	if (n == 0)
		return;
	if (family_set)
		set_chunked_family(fcinfo, cx, r, &scan, ts, desc, attnum, ti);
	bf_rebuild_note_writes(fcinfo->flinfo->fn_oid, r, hashes, (int) n);
	if (r->growing)
	{
		bf_spi_begin(cx, fcinfo->flinfo->fn_oid, true);
		bf_grow_chunks_add(cx, r, ti, hashes, (int) n, reader);
		bf_spi_end(cx);
	}
	else
		bf_chunks_add(bf_ext(fcinfo->flinfo->fn_oid, false), r, hashes, (int) n, !reader);
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
	BfTransitionScan scan;
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
	if (r->chunk_bytes > 0)
	{
		sync_chunked(fcinfo, td, cx, r, ts, attnum, &ti, reader);
		return;
	}

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

		bf_transition_begin(&scan, ts, RelationGetDescr(rel));
		present = all_present(&scan, attnum, &ti, &f);
		bf_transition_end(&scan);
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
		RegRow		now;
		const BfExt *ext;

		/*
		 * No value: none to keep, or stored in chunks since we looked (an
		 * ALTER EXTENSION UPDATE committed while we waited for the lock).
		 */
		bf_spi_end(cx);
		AcceptInvalidationMessages();
		ext = bf_ext(fcinfo->flinfo->fn_oid, false);
		if (ext->att_chunk_bytes &&
			bf_registry_fetch(ext, r->id, InvalidOid, NULL, true, &now) &&
			now.chunk_bytes > 0)
			sync_chunked(fcinfo, td, cx, &now, ts, attnum, &ti, reader);
		return;
	}
	f = bf_detoast_copy(values[1]);
	bf_adder_init(&adder, &f, &ti);
	if (cx->ext->att_changes)
		adder.touched = touched = bf_track_touched(VARSIZE_ANY_EXHDR(f.vl));
	bf_transition_begin(&scan, ts, RelationGetDescr(rel));
	while (bf_transition_next(&scan))
	{
		Datum		v = slot_getattr(scan.slot, attnum, &isnull);

		CHECK_FOR_INTERRUPTS();
		if (!isnull)
			bf_adder_add(&adder, v);
	}
	bf_transition_end(&scan);
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
	RegRow		r;
	struct varlena *vl;

	bf_spi_begin(cx, fcinfo->flinfo->fn_oid, true);
	prepare_plans(cx->ext);
	values[0] = Int64GetDatum(id);
	run_plan(plan_lock, values, NULL, SPI_OK_SELECT);
	if (SPI_processed > 0 && bf_registry_fetch(cx->ext, id, InvalidOid, NULL, true, &r) &&
		(vl = bf_registry_value(cx->ext, &r, GetActiveSnapshot())) != NULL)
	{
		/* the table is locked against writers: no chunk changes meanwhile */
		values[1] = PointerGetDatum(bf_filter_clear(PointerGetDatum(vl)));
		bf_registry_set_value(cx, id, (struct varlena *) DatumGetPointer(values[1]),
							  ", deleted_since_rebuild = 0", 0, NULL, NULL);
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
	bf_check_statement_trigger(td, "bf_track_sync");

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
		if ((r.filter_raw != NULL || r.chunk_bytes > 0) &&
			tuplestore_tuple_count(td->tg_newtable) > 0)
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
