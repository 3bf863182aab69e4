/*-------------------------------------------------------------------------
 *
 * bf_track_worker.c
 *	  The opt-in background worker that rebuilds drifted tracked filters
 *	  online: every tracked column that bf_tracked shows as due for a
 *	  rebuild (its rate over twice the target because of keys that are
 *	  gone, or a growing filter of 4 layers or more) gets a REINDEX INDEX
 *	  CONCURRENTLY of its bloomfilter index, or for the trigger method
 *	  bf_rebuild(..., concurrently => true), run as the table's owner.
 *
 * Started only when the library is in shared_preload_libraries, and idle
 * unless bloomfilter.auto_rebuild is on.  It connects to one database
 * (bloomfilter.auto_rebuild_database; the settings are reloadable, since a
 * library loaded later cannot define postmaster-only ones), and every
 * bloomfilter.auto_rebuild_naptime seconds reads bf_tracked there as the
 * bootstrap superuser.  REINDEX CONCURRENTLY commits as it goes, so it runs
 * at the top level of a transaction of the worker's own, as a client's
 * command would (no function may run it).  A failed
 * rebuild is logged and the worker goes on; the invalid index such a
 * rebuild leaves behind (also after a crash) is dropped at the next look.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

static bool auto_rebuild = false;
static int	auto_rebuild_naptime = 60;
static char *auto_rebuild_database = NULL;

PGDLLEXPORT void bf_track_worker_main(Datum arg);

/*
 * The settings, defined whenever the library loads (so that they are known
 * in postgresql.conf), and the worker, registered when it is preloaded.
 */
void
bf_track_worker_init(void)
{
	BackgroundWorker worker;

	DefineCustomBoolVariable("bloomfilter.auto_rebuild",
							 "Rebuilds online the bloomfilter indexes of tracked columns that are due for a rebuild.",
							 "Needs bloomfilter in shared_preload_libraries; see bf_tracked.rebuild_due.",
							 &auto_rebuild, false, PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("bloomfilter.auto_rebuild_naptime",
							"Seconds between two looks of the rebuild worker at bf_tracked.",
							NULL, &auto_rebuild_naptime, 60, 1, 86400, PGC_SIGHUP,
							GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomStringVariable("bloomfilter.auto_rebuild_database",
							   "The database whose tracked columns the rebuild worker looks after.",
							   "On a change, the worker restarts connected to the new one.",
							   &auto_rebuild_database, "postgres", PGC_SIGHUP, 0,
							   NULL, NULL, NULL);
	/*
	 * None in a server that pg_upgrade runs: its connection would make the
	 * restore's DROP DATABASE fail
	 */
	if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
		return;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 10;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "bloomfilter");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "bf_track_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "bloomfilter rebuild worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "bloomfilter rebuild worker");
	RegisterBackgroundWorker(&worker);
}

/*
 * Drops the invalid bloomfilter indexes that a concurrent rebuild left
 * behind when it failed or the server crashed (PostgreSQL leaves its new
 * index, "..._ccnew", invalid; lookups skip it, but every insert still
 * updates it).  A rebuild in progress holds a lock on its table that
 * conflicts with ours for its whole length: a table we cannot lock at once
 * is left for the next look.
 */
static void
drop_leftovers(const char *nsp)
{
	List	   *names = NIL;
	ListCell   *lc;

	if (SPI_execute(psprintf("SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' "
							 "OPERATOR(pg_catalog.||) pg_catalog.quote_ident(c.relname), i.indrelid "
							 "FROM pg_catalog.pg_index i, pg_catalog.pg_class c, pg_catalog.pg_namespace n, "
							 "pg_catalog.pg_am a "
							 "WHERE NOT i.indisvalid AND c.oid OPERATOR(pg_catalog.=) i.indexrelid "
							 "AND n.oid OPERATOR(pg_catalog.=) c.relnamespace "
							 "AND a.oid OPERATOR(pg_catalog.=) c.relam "
							 "AND a.amname OPERATOR(pg_catalog.=) 'bloomfilter' "
							 "AND c.relname OPERATOR(pg_catalog.~) '_ccnew[0-9]*$' "
							 "AND EXISTS (SELECT FROM %s.bf_registry r "
							 "WHERE r.tbl OPERATOR(pg_catalog.=) i.indrelid)", nsp),
					true, 0) != SPI_OK_SELECT)
		return;
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Oid			table = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[i],
														   SPI_tuptable->tupdesc, 2, &isnull));

		/* held until commit; a rebuild in progress holds a conflicting one */
		if (ConditionalLockRelationOid(table, ShareUpdateExclusiveLock))
			names = lappend(names, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
	}
	foreach(lc, names)
	{
		ereport(LOG,
				(errmsg("bloomfilter: dropping index %s, left invalid by a concurrent rebuild that did not finish",
						(char *) lfirst(lc))));
		if (SPI_execute(psprintf("DROP INDEX %s", (char *) lfirst(lc)), false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "could not drop index %s", (char *) lfirst(lc));
	}
}

/* a tracked column due for a rebuild */
typedef struct DueColumn
{
	bool		use_index;
	char	   *index;			/* method 'index': the index, "schema.name" */
	Oid			tbl;			/* method 'trigger': the table, its owner and */
	Oid			owner;
	char	   *col;			/* column */
	char	   *nsp;			/* the extension's schema, quoted */
} DueColumn;

/*
 * The tracked columns due for a rebuild that can be rebuilt online (an
 * index, or a trigger-tracked filter that does not grow), in mcxt; none
 * when the extension is not installed in this database.  First drops the
 * leftovers of rebuilds that did not finish.  *nsp is the extension's
 * schema, quoted, in mcxt.
 */
static List *
due_columns(MemoryContext mcxt, char **nsp)
{
	List	   *result = NIL;

	*nsp = NULL;
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname) "
					"FROM pg_catalog.pg_extension e, pg_catalog.pg_namespace n "
					"WHERE e.extname OPERATOR(pg_catalog.=) 'bloomfilter' "
					"AND n.oid OPERATOR(pg_catalog.=) e.extnamespace", true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
		*nsp = MemoryContextStrdup(mcxt, SPI_getvalue(SPI_tuptable->vals[0],
													  SPI_tuptable->tupdesc, 1));
	if (*nsp != NULL)
	{
		pgstat_report_activity(STATE_RUNNING, "bloomfilter: looking for drifted filters");
		drop_leftovers(*nsp);
		if (SPI_execute(psprintf("SELECT t.method OPERATOR(pg_catalog.=) 'index', "
								 "(SELECT pg_catalog.quote_ident(n.nspname) OPERATOR(pg_catalog.||) '.' "
								 "OPERATOR(pg_catalog.||) pg_catalog.quote_ident(c.relname) "
								 "FROM pg_catalog.pg_class c, pg_catalog.pg_namespace n "
								 "WHERE c.oid OPERATOR(pg_catalog.=) %s.bf_track_index(t.tbl, t.col) "
								 "AND n.oid OPERATOR(pg_catalog.=) c.relnamespace), "
								 "t.tbl::pg_catalog.oid, c.relowner, t.col, t.estimated_fpr, t.target_fpr "
								 "FROM %s.bf_tracked t, pg_catalog.pg_class c "
								 "WHERE t.rebuild_due AND NOT t.stale AND c.oid OPERATOR(pg_catalog.=) t.tbl",
								 *nsp, *nsp), true, 0) == SPI_OK_SELECT)
		{
			for (uint64 i = 0; i < SPI_processed; i++)
			{
				HeapTuple	tup = SPI_tuptable->vals[i];
				TupleDesc	desc = SPI_tuptable->tupdesc;
				bool		isnull;
				MemoryContext old = MemoryContextSwitchTo(mcxt);
				DueColumn  *d = palloc0(sizeof(DueColumn));

				d->use_index = DatumGetBool(SPI_getbinval(tup, desc, 1, &isnull));
				d->index = SPI_getvalue(tup, desc, 2);
				d->tbl = DatumGetObjectId(SPI_getbinval(tup, desc, 3, &isnull));
				d->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 4, &isnull));
				d->col = SPI_getvalue(tup, desc, 5);
				d->nsp = *nsp;
				if (d->use_index && d->index == NULL)
				{
					MemoryContextSwitchTo(old);
					continue;	/* no usable index now */
				}
				result = lappend(result, d);	/* in mcxt too */
				MemoryContextSwitchTo(old);
				ereport(LOG,
						(errmsg("bloomfilter: rebuilding %s online",
								d->use_index ? psprintf("index %s", d->index) :
								psprintf("the filter of %s.%s", get_rel_name(d->tbl), d->col)),
						 errdetail("Its estimated false-positive rate is %s against a target of %s (keys that are no longer in the table), or it is a growing filter of 4 layers or more, which the rebuild compacts into one.",
								   SPI_getvalue(tup, desc, 6), SPI_getvalue(tup, desc, 7))));
			}
		}
	}
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	return result;
}

/*
 * fn(arg) in a transaction of its own with a snapshot set, as a client's
 * command runs (fn may commit and start transactions itself, as REINDEX
 * CONCURRENTLY does); an error is logged and the worker goes on, as
 * autovacuum does
 */
static void
run_command(void (*fn) (void *), void *arg)
{
	MemoryContext mcxt = CurrentMemoryContext;

	StartTransactionCommand();
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		fn(arg);
		if (ActiveSnapshotSet())
			PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(mcxt);
		EmitErrorReport();
		FlushErrorState();
		AbortCurrentTransaction();
	}
	PG_END_TRY();
}

/*
 * REINDEX INDEX CONCURRENTLY of d's index, at the top level: the rebuild
 * pops the snapshot before its first commit (and does not set one again)
 */
static void
reindex_concurrently(void *arg)
{
	DueColumn  *d = (DueColumn *) arg;
	ReindexStmt *stmt = makeNode(ReindexStmt);

	stmt->kind = REINDEX_OBJECT_INDEX;
	stmt->relation = makeRangeVarFromNameList(bf_qualified_name_list(d->index));
	stmt->params = list_make1(makeDefElem("concurrently", NULL, -1));
	ExecReindex(NULL, stmt, true);
}

/*
 * bf_rebuild(tbl, col, concurrently => true) of d's trigger-tracked column,
 * as the table's owner in a security-restricted operation (as PostgreSQL
 * builds an index): the column's type may run the owner's code.  An error
 * restores the user with the transaction.
 */
static void
rebuild_filter(void *arg)
{
	DueColumn  *d = (DueColumn *) arg;
	Oid			save_userid;
	int			save_sec_context;
	Oid			types[2] = {REGCLASSOID, NAMEOID};
	Datum		values[2];
	NameData	nd;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(d->owner, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	namestrcpy(&nd, d->col);
	values[0] = ObjectIdGetDatum(d->tbl);
	values[1] = NameGetDatum(&nd);
	(void) SPI_execute_with_args(psprintf("SELECT %s.bf_rebuild($1, $2, concurrently => true)",
										  d->nsp),
								 2, types, values, NULL, false, 0);
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec_context);
}

void
bf_track_worker_main(Datum arg)
{
	MemoryContext loop_cxt;
	char	   *connected_to;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(auto_rebuild_database, NULL, 0);
	connected_to = MemoryContextStrdup(TopMemoryContext, auto_rebuild_database);
	loop_cxt = AllocSetContextCreate(TopMemoryContext, "bloomfilter rebuild worker",
									 ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		ListCell   *lc;
		List	   *due;
		char	   *nsp;

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 auto_rebuild_naptime * 1000L, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			/* another database: start again there (bgw_restart_time) */
			if (strcmp(auto_rebuild_database, connected_to) != 0)
				proc_exit(1);
		}
		if (!auto_rebuild)
			continue;
		MemoryContextReset(loop_cxt);
		due = due_columns(loop_cxt, &nsp);
		foreach(lc, due)
		{
			DueColumn  *d = (DueColumn *) lfirst(lc);

			CHECK_FOR_INTERRUPTS();
			pgstat_report_activity(STATE_RUNNING, d->use_index ?
								   psprintf("REINDEX INDEX CONCURRENTLY %s", d->index) :
								   "bloomfilter: bf_rebuild concurrently");
			run_command(d->use_index ? reindex_concurrently : rebuild_filter, d);
		}
		pgstat_report_activity(STATE_IDLE, NULL);
	}
}
