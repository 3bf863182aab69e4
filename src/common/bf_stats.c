/*-------------------------------------------------------------------------
 *
 * bf_stats.c
 *	  Per-filter statistics (bf_stats.h): lookups, "absent" answers and
 *	  guarded scans skipped, per database and filter, in a shared hash of
 *	  the extension's own when the library is preloaded.
 *
 * A backend counts in a local hash (the last filter counted kept at hand,
 * so a run of lookups of one filter costs an add) and adds its counts to
 * the shared hash at the end of each transaction, committed or not, as
 * PostgreSQL's own statistics do, and every BF_STATS_FLUSH_EVERY counts
 * in between for long transactions.  The shared hash holds BF_STATS_MAX
 * filters; counts of filters beyond that are dropped.  It lives in shared
 * memory only: a restart starts from zero (PostgreSQL's cumulative
 * statistics of 18 and later, which a restart keeps, are not used yet).
 * Without preloading the library there is no shared memory to count in:
 * nothing is counted and bf_stat_available() says so.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_stats.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#define BF_STATS_MAX 4096
#define BF_STATS_FLUSH_EVERY 4096

typedef struct BfStatsKey
{
	Oid			dbid;
	Oid			relid;
	AttrNumber	attnum;
} BfStatsKey;

typedef struct BfStatsCounts
{
	int64		lookups;
	int64		absent;
	int64		skipped;
} BfStatsCounts;

typedef struct BfStatsEntry
{
	BfStatsKey	key;
	BfStatsCounts n;
} BfStatsEntry;

static bool track_stats = true;

/* shared: the hash and the lock guarding it (NULL without preloading) */
static HTAB *shared_stats = NULL;
static LWLock *shared_lock = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* this backend's counts not yet added */
static HTAB *pending = NULL;
static BfStatsEntry *last = NULL;
static int64 pending_counts = 0;

/* ---- shared memory ---- */

static Size
stats_shmem_size(void)
{
	return hash_estimate_size(BF_STATS_MAX, sizeof(BfStatsEntry));
}

static void
stats_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(stats_shmem_size());
	RequestNamedLWLockTranche("bloomfilter_stats", 1);
}

static void
stats_shmem_startup(void)
{
	HASHCTL		ctl;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	ctl.keysize = sizeof(BfStatsKey);
	ctl.entrysize = sizeof(BfStatsEntry);
	shared_stats = ShmemInitHash("bloomfilter statistics", BF_STATS_MAX, BF_STATS_MAX,
								 &ctl, HASH_ELEM | HASH_BLOBS);
	shared_lock = &(GetNamedLWLockTranche("bloomfilter_stats"))->lock;
	LWLockRelease(AddinShmemInitLock);
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
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

/* ---- counting ---- */

/* add the pending counts to the shared hash */
static void
stats_flush(void)
{
	HASH_SEQ_STATUS seq;
	BfStatsEntry *p;

	if (pending_counts == 0)
		return;
	LWLockAcquire(shared_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, pending);
	while ((p = hash_seq_search(&seq)) != NULL)
	{
		bool		found;
		BfStatsEntry *s = hash_search(shared_stats, &p->key, HASH_ENTER_NULL, &found);

		if (s == NULL)
			continue;			/* full: dropped */
		if (!found)
			memset(&s->n, 0, sizeof(s->n));
		s->n.lookups += p->n.lookups;
		s->n.absent += p->n.absent;
		s->n.skipped += p->n.skipped;
		memset(&p->n, 0, sizeof(p->n));
	}
	LWLockRelease(shared_lock);
	pending_counts = 0;
}

static void
stats_xact_callback(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_PREPARE)
		stats_flush();
}

/* the pending entry of (relid, attnum), NULL when not counting */
static BfStatsEntry *
stats_entry(Oid relid, AttrNumber attnum)
{
	BfStatsKey	key;
	bool		found;

	if (shared_stats == NULL || !track_stats || !OidIsValid(relid))
		return NULL;
	if (last && last->key.relid == relid && last->key.attnum == attnum &&
		last->key.dbid == MyDatabaseId)
		return last;
	if (pending == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(BfStatsKey);
		ctl.entrysize = sizeof(BfStatsEntry);
		ctl.hcxt = TopMemoryContext;
		pending = hash_create("bloomfilter pending statistics", 16, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		RegisterXactCallback(stats_xact_callback, NULL);
	}
	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.relid = relid;
	key.attnum = attnum;
	last = hash_search(pending, &key, HASH_ENTER, &found);
	if (!found)
		memset(&last->n, 0, sizeof(last->n));
	return last;
}

static void
stats_counted(int64 n)
{
	pending_counts += n;
	if (pending_counts >= BF_STATS_FLUSH_EVERY)
		stats_flush();
}

void
bf_stats_count(Oid relid, AttrNumber attnum, bool absent)
{
	BfStatsEntry *e = stats_entry(relid, attnum);

	if (e == NULL)
		return;
	e->n.lookups++;
	e->n.absent += absent;
	stats_counted(1);
}

void
bf_stats_count_skip(Oid relid, AttrNumber attnum)
{
	BfStatsEntry *e = stats_entry(relid, attnum);

	if (e == NULL)
		return;
	e->n.skipped++;
	stats_counted(1);
}

/* ---- SQL ---- */

PG_FUNCTION_INFO_V1(bf_stat_available);
Datum
bf_stat_available(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(shared_stats != NULL);
}

/* bf_stat_filters_raw(): this database's counts, one row per filter */
PG_FUNCTION_INFO_V1(bf_stat_filters_raw);
Datum
bf_stat_filters_raw(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS seq;
	BfStatsEntry *s;

	InitMaterializedSRF(fcinfo, 0);
	if (shared_stats == NULL)
		return (Datum) 0;
	LWLockAcquire(shared_lock, LW_SHARED);
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		Datum		values[5];
		bool		nulls[5] = {false};

		if (s->key.dbid != MyDatabaseId)
			continue;
		values[0] = ObjectIdGetDatum(s->key.relid);
		values[1] = Int16GetDatum(s->key.attnum);
		values[2] = Int64GetDatum(s->n.lookups);
		values[3] = Int64GetDatum(s->n.absent);
		values[4] = Int64GetDatum(s->n.skipped);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	LWLockRelease(shared_lock);
	return (Datum) 0;
}

/* bf_stat_reset(): forget this database's counts */
PG_FUNCTION_INFO_V1(bf_stat_reset);
Datum
bf_stat_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS seq;
	BfStatsEntry *s;

	if (shared_stats == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(shared_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->key.dbid == MyDatabaseId)
			hash_search(shared_stats, &s->key, HASH_REMOVE, NULL);
	LWLockRelease(shared_lock);
	PG_RETURN_VOID();
}
