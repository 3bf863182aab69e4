/*-------------------------------------------------------------------------
 *
 * bf_stats.c
 *	  Per-filter statistics (bf_stats.h): lookups, "absent" answers and
 *	  guarded scans skipped, per database and filter, counted when the
 *	  library is preloaded; the SQL functions that read and reset them.
 *
 * Counting is the same on every version: the store (bf_stats_store.h:
 * PostgreSQL's cumulative statistics on 18 and later, a shared hash of
 * the extension's own before) hands out where this backend adds a
 * filter's counts, and the last filter counted is kept at hand, so a run
 * of lookups of one filter costs an add.  That place is good until the
 * transaction ends or the store flushes, when it is asked again.
 *
 * Counts of a dropped relation are dropped with it when its transaction
 * commits (an object access hook, so that a reused OID starts from zero),
 * and those of a dropped database with the database.
 * Without preloading the library there is nowhere to count: nothing is
 * counted and bf_stat_available() says so.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_stats.h"

#include "bf_stats_store.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#define BF_STATS_FLUSH_EVERY 4096

static bool track_stats = true;
static object_access_hook_type prev_object_access_hook = NULL;

/*
 * the filter counted last and where its counts went (prev), and go until
 * the transaction ends or the store flushes (n; NULL: ask the store)
 */
static struct
{
	Oid			dbid;
	Oid			relid;
	AttrNumber	attnum;
	BfStatsCounts *n;
	BfStatsCounts *prev;
} last;

static int64 pending_counts = 0;
static bool xact_callback_registered = false;

static void
stats_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			last.n = NULL;
			pending_counts = 0;
			bf_stats_store_flush();
			bf_stats_store_xact_end(event == XACT_EVENT_COMMIT ||
									event == XACT_EVENT_PARALLEL_COMMIT);
			break;
		default:
			break;
	}
}

/* a savepoint's drops go to its parent, or are forgotten with it */
static void
stats_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_COMMIT_SUB || event == SUBXACT_EVENT_ABORT_SUB)
		bf_stats_store_subxact_end(event == SUBXACT_EVENT_COMMIT_SUB,
								   GetCurrentTransactionNestLevel());
}

static void
register_xact_callback(void)
{
	if (!xact_callback_registered)
	{
		RegisterXactCallback(stats_xact_callback, NULL);
		RegisterSubXactCallback(stats_subxact_callback, NULL);
		xact_callback_registered = true;
	}
}

/* where to count filter (relid, attnum), NULL when not counting */
static inline BfStatsCounts *
stats_counts(Oid relid, AttrNumber attnum)
{
	if (!track_stats)
		return NULL;
	/* a place handed out (last.prev) means the store is ready */
	if (likely(last.relid == relid && last.attnum == attnum &&
			   last.dbid == MyDatabaseId && last.prev != NULL))
	{
		if (likely(last.n != NULL))
			return last.n;
		/* the same filter as before, in a new transaction or after a flush */
		last.n = bf_stats_store_counts(relid, attnum, last.prev);
	}
	else if (!OidIsValid(relid) || !bf_stats_store_ready())
		return NULL;
	else
	{
		register_xact_callback();
		last.n = bf_stats_store_counts(relid, attnum, NULL);
		last.dbid = MyDatabaseId;
		last.relid = relid;
		last.attnum = attnum;
	}
	last.prev = last.n;
	return last.n;
}

/* n more counted: long transactions flush every BF_STATS_FLUSH_EVERY */
static inline void
stats_counted(void)
{
	if (++pending_counts >= BF_STATS_FLUSH_EVERY)
	{
		last.n = NULL;
		pending_counts = 0;
		bf_stats_store_flush();
	}
}

void
bf_stats_count(Oid relid, AttrNumber attnum, bool absent)
{
	BfStatsCounts *n = stats_counts(relid, attnum);

	if (n == NULL)
		return;
	n->lookups++;
	n->absent += absent;
	stats_counted();
}

void
bf_stats_count_skip(Oid relid, AttrNumber attnum)
{
	BfStatsCounts *n = stats_counts(relid, attnum);

	if (n == NULL)
		return;
	n->skipped++;
	stats_counted();
}

/*
 * A relation or a column dropped: its filters' counts go with it.  The
 * relation is still in the catalogs when its drop is announced.
 */
static void
stats_object_access(ObjectAccessType access, Oid classId, Oid objectId,
					int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || !bf_stats_store_ready())
		return;
	if (classId == DatabaseRelationId)
	{
		register_xact_callback();
		bf_stats_store_drop(objectId, InvalidOid, 0);
	}
	else if (classId == RelationRelationId && subId == 0)
	{
		HeapTuple	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(objectId));
		AttrNumber	natts = 0;

		if (!HeapTupleIsValid(tup))
			return;
		if (((Form_pg_class) GETSTRUCT(tup))->relkind != RELKIND_INDEX)
			natts = ((Form_pg_class) GETSTRUCT(tup))->relnatts;
		ReleaseSysCache(tup);
		register_xact_callback();
		bf_stats_store_drop(MyDatabaseId, objectId, natts);
	}
}

void
bf_stats_init(void)
{
	DefineCustomBoolVariable("bloomfilter.track_stats",
							 "Counts lookups, \"absent\" answers and skipped scans per filter.",
							 "Needs the library in shared_preload_libraries.",
							 &track_stats, true, PGC_SUSET, 0, NULL, NULL, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	bf_stats_store_preload();
	prev_object_access_hook = object_access_hook;
	object_access_hook = stats_object_access;
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(bf_stat_available);
Datum
bf_stat_available(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(bf_stats_store_ready());
}

/* bf_stat_filters_raw(): this database's counts, one row per filter */
PG_FUNCTION_INFO_V1(bf_stat_filters_raw);
Datum
bf_stat_filters_raw(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BfStatsRow *rows;
	int			nrows;

	InitMaterializedSRF(fcinfo, 0);
	if (!bf_stats_store_ready())
		return (Datum) 0;
	rows = bf_stats_store_rows(&nrows);
	for (int i = 0; i < nrows; i++)
	{
		BfStatsRow *r = &rows[i];
		Datum		values[5];
		bool		nulls[5] = {false};

		/* zeroed by a reset (18 keeps the entries): as if never counted */
		if (r->n.lookups == 0 && r->n.absent == 0 && r->n.skipped == 0)
			continue;
		values[0] = ObjectIdGetDatum(r->relid);
		values[1] = Int16GetDatum(r->attnum);
		values[2] = Int64GetDatum(r->n.lookups);
		values[3] = Int64GetDatum(r->n.absent);
		values[4] = Int64GetDatum(r->n.skipped);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* bf_stat_reset(): forget this database's counts */
PG_FUNCTION_INFO_V1(bf_stat_reset);
Datum
bf_stat_reset(PG_FUNCTION_ARGS)
{
	if (bf_stats_store_ready())
		bf_stats_store_reset();
	PG_RETURN_VOID();
}
