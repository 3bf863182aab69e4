/*-------------------------------------------------------------------------
 *
 * bf_track_ddl.c
 *	  The DDL event trigger of tracked filters (bf_track_ddl): after a
 *	  schema change, follow renamed columns, forget dropped tables and
 *	  columns, rebuild a 'trigger' filter whose column changed type, give
 *	  new or attached partitions their sync triggers (and add their rows),
 *	  take them off detached ones.
 *
 * It runs on every matching command in the database, whoever runs it, so
 * it must never make a command fail for a reason that command has nothing
 * to do with.  Each registry row is repaired in a subtransaction; when the
 * repair fails, the command is refused if it concerns that row's table
 * (it names the table or one of its partitions: the user asked for the
 * change the filter cannot follow), and otherwise the filter is marked
 * stale, with a WARNING: lookups then refuse to answer until bf_rebuild,
 * so the failure never shows as a false negative.  A command that drops,
 * renames or disables a sync trigger marks its filter stale too: writes
 * may go unseen from then on.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "bf_relcheck.h"

/* bf_value_funcs.c */

/* what the command did, as far as tracked filters care */
typedef struct DdlCommand
{
	List	   *named;			/* relations it names */
	List	   *attached;		/* relations it created or attached as partitions */
	bool		detached;		/* it detached a partition */
	List	   *trig_rels;		/* relations whose triggers it dropped or disabled */
	List	   *trig_names;		/* ... the trigger's name, or NULL for all */
	List	   *trig_verbs;		/* ... "dropped", "renamed" or "disabled" */
} DdlCommand;

static Oid
resolve(RangeVar *rv)
{
	return rv ? RangeVarGetRelid(rv, NoLock, true) : InvalidOid;
}

static void
add_named(List **l, Oid relid)
{
	if (OidIsValid(relid))
		*l = list_append_unique_oid(*l, relid);
}

static void
trigger_change(DdlCommand *cmd, Oid relid, const char *name, const char *verb)
{
	if (!OidIsValid(relid))
		return;
	cmd->trig_rels = lappend_oid(cmd->trig_rels, relid);
	cmd->trig_names = lappend(cmd->trig_names, name ? pstrdup(name) : NULL);
	cmd->trig_verbs = lappend(cmd->trig_verbs, (char *) verb);
}

/* read the command off its parse tree */
static void
read_command(Node *parsetree, DdlCommand *cmd)
{
	memset(cmd, 0, sizeof(DdlCommand));
	if (parsetree == NULL)
		return;
	if (IsA(parsetree, AlterTableStmt))
	{
		AlterTableStmt *stmt = (AlterTableStmt *) parsetree;
		Oid			relid = resolve(stmt->relation);
		ListCell   *lc;

		add_named(&cmd->named, relid);
		foreach(lc, stmt->cmds)
		{
			AlterTableCmd *c = lfirst_node(AlterTableCmd, lc);

			switch (c->subtype)
			{
				case AT_AttachPartition:
					{
						Oid			part = resolve(((PartitionCmd *) c->def)->name);

						add_named(&cmd->named, part);
						add_named(&cmd->attached, part);
						break;
					}
				case AT_DetachPartition:
				case AT_DetachPartitionFinalize:
					add_named(&cmd->named, resolve(((PartitionCmd *) c->def)->name));
					cmd->detached = true;
					break;
				case AT_AddInherit:
					add_named(&cmd->named, resolve((RangeVar *) c->def));
					break;
				case AT_DisableTrig:
				case AT_EnableReplicaTrig:
					trigger_change(cmd, relid, c->name, "disabled");
					break;
				case AT_DisableTrigAll:
				case AT_DisableTrigUser:
					trigger_change(cmd, relid, NULL, "disabled");
					break;
				default:
					break;
			}
		}
	}
	else if (IsA(parsetree, CreateStmt) || IsA(parsetree, CreateForeignTableStmt))
	{
		CreateStmt *stmt = (CreateStmt *) parsetree;
		Oid			relid = resolve(stmt->relation);
		ListCell   *lc;

		add_named(&cmd->named, relid);
		if (stmt->partbound)
			add_named(&cmd->attached, relid);
		foreach(lc, stmt->inhRelations)
			add_named(&cmd->named, resolve(lfirst_node(RangeVar, lc)));
	}
	else if (IsA(parsetree, DropStmt) &&
			 ((DropStmt *) parsetree)->removeType == OBJECT_TRIGGER)
	{
		ListCell   *lc;

		foreach(lc, ((DropStmt *) parsetree)->objects)
		{
			List	   *names = lfirst(lc);
			Oid			relid;

			if (list_length(names) < 2)
				continue;
			relid = resolve(makeRangeVarFromNameList(list_truncate(list_copy(names),
																   list_length(names) - 1)));
			add_named(&cmd->named, relid);
			trigger_change(cmd, relid, strVal(llast(names)), "dropped");
		}
	}
	else if (IsA(parsetree, RenameStmt) &&
			 ((RenameStmt *) parsetree)->renameType == OBJECT_TRIGGER)
	{
		RenameStmt *stmt = (RenameStmt *) parsetree;
		Oid			relid = resolve(stmt->relation);

		add_named(&cmd->named, relid);
		trigger_change(cmd, relid, stmt->subname, "renamed");
	}
}

/* does the command name root's table or one of its partitions? */
static bool
concerns(DdlCommand *cmd, Oid root)
{
	ListCell   *lc;

	foreach(lc, cmd->named)
		if (bf_in_tree(lfirst_oid(lc), root))
			return true;
	return false;
}

/* ---- running a step in a subtransaction ---- */

typedef void (*DdlStep) (BfSpiContext *cx, DdlCommand *cmd, int64 id);

/* run step; on error roll it back and return the error (NULL if none) */
static ErrorData *
try_step(DdlStep step, BfSpiContext *cx, DdlCommand *cmd, int64 id)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		step(cx, cmd, id);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;

	/* a cancel or a shutdown is never turned into a stale filter */
	if (edata && (edata->sqlerrcode == ERRCODE_QUERY_CANCELED ||
				  edata->sqlerrcode == ERRCODE_ADMIN_SHUTDOWN))
		ReThrowError(edata);
	return edata;
}

/* ---- marking a filter stale ---- */

typedef struct StaleNote
{
	const char *why;
} StaleNote;

static StaleNote stale_note;

static void
mark_stale_step(BfSpiContext *cx, DdlCommand *cmd, int64 id)
{
	bf_registry_mark_stale(cx, id, stale_note.why);
}

static void
mark_stale(BfSpiContext *cx, RegRow *r, const char *why)
{
	ErrorData  *edata;

	stale_note.why = why;
	edata = try_step(mark_stale_step, cx, NULL, r->id);
	ereport(WARNING,
			(errmsg("the filter of column \"%s\" of table \"%s\" is now stale",
					NameStr(r->col), get_rel_name(r->tbl)),
			 errdetail("%s", why),
			 edata ? errhint("It could not be marked stale (%s); call bf_rebuild('%s', '%s') now.",
							 edata->message, bf_qualified_rel(r->tbl), NameStr(r->col)) :
			 errhint("Lookups fail until bf_rebuild('%s', '%s') rebuilds it.",
					 bf_qualified_rel(r->tbl), NameStr(r->col))));
}

/* ---- the repair of one registry row ---- */

/* rebuild a 'trigger' filter from its rows: the values may hash differently */
static void
rebuild_after_type_change(BfSpiContext *cx, RegRow *r)
{
	/* of the same form: a growing filter stays growing */
	BfFilter	f = bf_new_tracked_filter(r->capacity, r->fpr,
										  r->growing || (r->filter_raw != NULL &&
														 bf_datum_is_growing(r->filter_raw)),
										  0);

	bf_fill_from_rel(&f, r->tbl, NameStr(r->col),
					 get_rel_relkind(r->tbl) != RELKIND_PARTITIONED_TABLE, "bf_track");
	bf_registry_set_value(cx, r->id, f.vl, NULL, 0, NULL, NULL);
}

/*
 * The rows of a new partition into a chunked filter: read into an empty
 * filter of its size, whose bits are then ORed into the chunks (and whose
 * family, if the filter had none yet, into the header; the caller holds
 * the registry row's lock).
 */
static void
add_partition_chunked(BfSpiContext *cx, RegRow *now, Oid part)
{
	BfFilter	f;

	if (now->growing)
	{
		bf_grow_chunks_fill(cx, now, part);
		return;
	}
	f.vl = bf_chunks_empty(now);
	bf_read_header(f.vl, &f.hdr);
	bf_fill_from_rel(&f, part, NameStr(now->col), true, "bf_track");
	if (now->hdr.family == BF_FAMILY_NONE && f.hdr.family != BF_FAMILY_NONE)
	{
		bloom_adopt_family(&now->hdr, &f.hdr);
		bf_registry_write_header(cx, now);
	}
	bf_chunks_or(cx->ext, now, f.vl);
}

/* partitions this command created or attached: triggers, and their rows */
static void
cover_new_partitions(BfSpiContext *cx, DdlCommand *cmd, RegRow *r)
{
	ListCell   *lc;

	foreach(lc, cmd->attached)
	{
		List	   *members;
		ListCell   *lm;

		if (!bf_in_tree(lfirst_oid(lc), r->tbl))
			continue;
		members = bf_tree_members(lfirst_oid(lc));
		foreach(lm, members)
		{
			Oid			part = lfirst_oid(lm);
			char		kind = get_rel_relkind(part);

			if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE)
				continue;
			bf_install_triggers(cx, r->id, part);
			if (kind == RELKIND_RELATION && (r->filter_raw || r->chunk_bytes > 0))
			{
				BfFilter	f;
				RegRow		now;

				if (!bf_registry_lock(cx, r->id, &now))
					continue;
				if (now.chunk_bytes > 0)
				{
					/* writers of the other partitions go on: merge as they do */
					add_partition_chunked(cx, &now, part);
					continue;
				}
				if (now.filter_raw == NULL)
					continue;
				f = bf_detoast_copy(PointerGetDatum(now.filter_raw));
				bf_fill_from_rel(&f, part, NameStr(r->col), true, "bf_track");
				bf_registry_set_value(cx, r->id, f.vl, NULL, 0, NULL, NULL);
			}
		}
	}
}

/* a sync trigger of r this command dropped, renamed or disabled, or NULL */
static char *
trigger_lost(DdlCommand *cmd, RegRow *r)
{
	ListCell   *lr,
			   *ln,
			   *lv;

	forthree(lr, cmd->trig_rels, ln, cmd->trig_names, lv, cmd->trig_verbs)
	{
		char	   *name = lfirst(ln);
		int64		id;
		int			suffix;

		if (!bf_in_tree(lfirst_oid(lr), r->tbl))
			continue;
		if (name == NULL)
			return psprintf("The triggers of table %s, its sync triggers among them, were %s.",
							get_rel_name(lfirst_oid(lr)), (char *) lfirst(lv));
		if (bf_parse_trigger_name(name, &id, &suffix) && id == r->id)
			return psprintf("The sync trigger %s on table %s was %s.",
							name, get_rel_name(lfirst_oid(lr)), (char *) lfirst(lv));
	}
	return NULL;
}

static void
repair_row(BfSpiContext *cx, DdlCommand *cmd, int64 id)
{
	RegRow		r;
	AttrNumber	attnum;
	Oid			typid,
				collid,
				now_typid,
				now_collid;
	int32		typmod;
	HeapTuple	atttup;
	bool		dropped;

	bf_as_owner(cx);
	if (!bf_registry_fetch(cx->ext, id, InvalidOid, NULL, true, &r) ||
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(r.tbl)))
		return;

	/* a dropped column: untrack (its index, if any, went with it) */
	if (bf_registry_attnum(cx->ext, id, &attnum, &typid, &collid))
	{
		atttup = SearchSysCacheAttNum(r.tbl, attnum);
		dropped = !HeapTupleIsValid(atttup);
		if (HeapTupleIsValid(atttup))
			ReleaseSysCache(atttup);
		if (dropped)
		{
			bf_drop_triggers(cx, id, false);
			bf_registry_delete(cx, id);
			return;
		}
	}
	else
		attnum = InvalidAttrNumber;

	/*
	 * A tracked table that became a partition misses the rows routed to it
	 * through its new parent: statement triggers fire on the named table
	 * only.  (An index is maintained either way.)
	 */
	if (!r.use_index && get_rel_relispartition(r.tbl))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table %s has a tracked column and cannot become a partition",
						bf_qualified_rel(r.tbl)),
				 errdetail("Rows inserted through the partitioned table would not reach its filter."),
				 errhint("Call bf_untrack('%s', '%s') first, and track the partitioned table instead.",
						 bf_qualified_rel(r.tbl), NameStr(r.col))));
	/*
	 * A foreign or distributed partition would hide its rows from the
	 * filter.  A table Citus distributes keeps its index on every shard,
	 * which its lookups ask; its triggers would see no row.
	 */
	if (r.use_index && bf_citus_table(r.tbl))
		;
	else if (bf_citus_table(r.tbl))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("table %s has a column tracked by triggers and cannot be distributed",
						bf_qualified_rel(r.tbl)),
				 errdetail("The sync triggers would see no row of its shards."),
				 errhint("Call bf_untrack('%s', '%s') first, and track it with method 'index'.",
						 bf_qualified_rel(r.tbl), NameStr(r.col))));
	else
	{
		bf_check_local_rows(r.tbl, "bf_track");
		bf_check_no_children(r.tbl, "bf_track");
	}

	/* a stale filter is rebuilt, triggers and all, by bf_rebuild */
	if (r.stale)
	{
		if (!r.use_index && cmd->detached)
			bf_drop_triggers(cx, id, true);
		return;
	}
	if (AttributeNumberIsValid(attnum) && OidIsValid(typid))
	{
		get_atttypetypmodcoll(r.tbl, attnum, &now_typid, &typmod, &now_collid);
		if (now_typid != typid || now_collid != collid)
		{
			Oid			types[3] = {INT8OID, OIDOID, OIDOID};
			Datum		values[3];

			/* method 'index': ALTER COLUMN TYPE rebuilt the index itself */
			if (!r.use_index)
				rebuild_after_type_change(cx, &r);
			values[0] = Int64GetDatum(id);
			values[1] = ObjectIdGetDatum(now_typid);
			values[2] = ObjectIdGetDatum(now_collid);
			bf_spi_exec(psprintf("UPDATE %s SET atttypid = $2, attcollation = $3 WHERE id = $1",
								 cx->ext->registry_attnum),
						3, types, values, SPI_OK_UPDATE);
		}
	}
	if (r.use_index)
		return;
	if (cmd->detached)
		bf_drop_triggers(cx, id, true);
	cover_new_partitions(cx, cmd, &r);
	{
		char	   *lost = trigger_lost(cmd, &r);

		if (lost)
		{
			bf_registry_mark_stale(cx, id, lost);
			ereport(WARNING,
					(errmsg("the filter of column \"%s\" of table \"%s\" is now stale",
							NameStr(r.col), get_rel_name(r.tbl)),
					 errdetail("%s", lost),
					 errhint("Lookups fail until bf_rebuild('%s', '%s') rebuilds it.",
							 bf_qualified_rel(r.tbl), NameStr(r.col))));
		}
	}
}

/* ---- bookkeeping of the whole registry ---- */

/* derive the missing attribute numbers from the column names */
static void
fill_attnums(BfSpiContext *cx, DdlCommand *cmd, int64 unused)
{
	bf_as_owner(cx);
	bf_spi_exec(psprintf("INSERT INTO %s (id, attnum, atttypid, attcollation) "
						 "SELECT r.id, a.attnum, a.atttypid, a.attcollation FROM %s r "
						 "JOIN pg_catalog.pg_attribute a ON a.attrelid = r.tbl AND a.attname = r.col "
						 "AND a.attnum > 0 AND NOT a.attisdropped "
						 "WHERE NOT EXISTS (SELECT 1 FROM %s x WHERE x.id = r.id)",
						 cx->ext->registry_attnum, cx->ext->registry, cx->ext->registry_attnum),
				0, NULL, NULL, SPI_OK_INSERT);
}

/* forget dropped tables, follow renamed columns */
static void
bookkeeping(BfSpiContext *cx, DdlCommand *cmd, int64 unused)
{
	uint64		changed;

	bf_as_owner(cx);
	bf_spi_exec(psprintf("DELETE FROM %s r WHERE NOT EXISTS "
						 "(SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = r.tbl)",
						 cx->ext->registry),
				0, NULL, NULL, SPI_OK_DELETE);
	changed = SPI_processed;
	bf_spi_exec(psprintf("DELETE FROM %s a WHERE NOT EXISTS (SELECT 1 FROM %s r WHERE r.id = a.id)",
						 cx->ext->registry_attnum, cx->ext->registry),
				0, NULL, NULL, SPI_OK_DELETE);
	fill_attnums(cx, cmd, 0);
	bf_spi_exec(psprintf("UPDATE %s r SET col = a.attname FROM %s l, pg_catalog.pg_attribute a "
						 "WHERE l.id = r.id AND a.attrelid = r.tbl AND a.attnum = l.attnum "
						 "AND NOT a.attisdropped AND a.attname <> r.col",
						 cx->ext->registry, cx->ext->registry_attnum),
				0, NULL, NULL, SPI_OK_UPDATE);
	changed += SPI_processed;
	if (changed > 0)
		bf_registry_changed(cx->ext);
}

static void
bookkeeping_failed(ErrorData *edata)
{
	ereport(WARNING,
			(errmsg("bloomfilter: the registry of tracked filters could not follow this command: %s",
					edata->message),
			 errhint("Renamed or dropped tracked columns are followed at the next schema change.")));
}

/* is the registry empty?  (the common case: answer it without SPI) */
static bool
registry_empty(const BfExt *ext)
{
	Relation	rel = table_open(ext->registry_relid, AccessShareLock);
	Snapshot	snap = RegisterSnapshot(GetLatestSnapshot());
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, snap, 0, NULL);
	bool		empty = !HeapTupleIsValid(systable_getnext(scan));

	systable_endscan(scan);
	UnregisterSnapshot(snap);
	table_close(rel, AccessShareLock);
	return empty;
}

PG_FUNCTION_INFO_V1(bf_track_ddl);
Datum
bf_track_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	const BfExt *ext;
	BfSpiContext cx;
	DdlCommand	cmd;
	ErrorData  *edata;
	int64	   *ids;
	uint64		n;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("bf_track_ddl must be called as an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;
	/* the extension's own DDL (and its scripts) keep the registry consistent */
	if (bf_in_own_ddl() ||
		(creating_extension &&
		 CurrentExtensionObject == getExtensionOfObject(ProcedureRelationId,
														fcinfo->flinfo->fn_oid)))
		PG_RETURN_VOID();
	ext = bf_ext(fcinfo->flinfo->fn_oid, true);
	if (ext == NULL || registry_empty(ext))
		PG_RETURN_VOID();

	/* names in the command resolve along the user's search_path */
	memset(&cmd, 0, sizeof(cmd));
	if (strcmp(trigdata->event, "ddl_command_end") == 0)
		read_command(trigdata->parsetree, &cmd);
	bf_spi_begin(&cx, fcinfo->flinfo->fn_oid, true);

	/*
	 * At ddl_command_start only the attribute numbers are derived: a restored
	 * database has none yet, and a RENAME COLUMN about to run needs them.
	 */
	if (strcmp(trigdata->event, "ddl_command_start") == 0)
	{
		edata = try_step(fill_attnums, &cx, &cmd, 0);
		if (edata)
			bookkeeping_failed(edata);
		bf_spi_end(&cx);
		PG_RETURN_VOID();
	}

	edata = try_step(bookkeeping, &cx, &cmd, 0);
	if (edata)
		bookkeeping_failed(edata);

	n = bf_spi_ids(psprintf("SELECT id FROM %s ORDER BY id", ext->registry),
				   0, NULL, NULL, &ids, NULL);
	for (uint64 i = 0; i < n; i++)
	{
		RegRow		r;

		CHECK_FOR_INTERRUPTS();
		edata = try_step(repair_row, &cx, &cmd, ids[i]);
		if (edata == NULL)
			continue;
		if (!bf_registry_fetch(ext, ids[i], InvalidOid, NULL, true, &r))
			continue;
		/* the user asked for a change the filter cannot follow: refuse it */
		if (concerns(&cmd, r.tbl))
			ReThrowError(edata);
		if (r.stale)
			continue;
		mark_stale(&cx, &r, psprintf("A schema change could not be followed: %s.%s%s",
									 edata->message,
									 edata->detail ? " " : "",
									 edata->detail ? edata->detail : ""));
	}
	bf_spi_end(&cx);
	PG_RETURN_VOID();
}
