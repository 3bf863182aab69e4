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
 * in between for long transactions.  Adding is cheap: each pending entry
 * keeps its shared entry, whose counters are atomic, so a flush takes the
 * lock shared and adds; only a filter new to the shared hash takes it
 * exclusive.  A reset, which removes entries, bumps a generation that
 * makes every backend look its entries up again.  The shared hash holds BF_STATS_MAX
 * filters; counts of filters beyond that are dropped.  It lives in shared
 * memory only: a restart starts from zero (PostgreSQL's cumulative
 * statistics of 18 and later, which a restart keeps, are not used yet).
 * Without preloading the library there is no shared memory to count in:
 * nothing is counted and bf_stat_available() says so.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_stats.h"

#include "bf_compat.h"

#include "access/xact.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

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

/* a filter's counts in shared memory */
typedef struct BfStatsShared
{
	BfStatsKey	key;
	pg_atomic_uint64 lookups;
	pg_atomic_uint64 absent;
	pg_atomic_uint64 skipped;
} BfStatsShared;

/* a filter's counts not yet added, and where to add them */
typedef struct BfStatsEntry
{
	BfStatsKey	key;
	BfStatsCounts n;
	BfStatsShared *shared;		/* valid while generation is shared_gen's */
	uint64		generation;
	struct BfStatsEntry *next_dirty;
	bool		dirty;
} BfStatsEntry;

static bool track_stats = true;

/*
 * shared: the hash, the lock guarding its entries (shared to add to
 * counters, exclusive to add or remove entries) and the generation of
 * its removals (NULL without preloading)
 */
static HTAB *shared_stats = NULL;
static LWLock *shared_lock = NULL;
static pg_atomic_uint64 *shared_gen = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* this backend's counts not yet added */
static HTAB *pending = NULL;
static BfStatsEntry *last = NULL;
static BfStatsEntry *dirty = NULL;
static int64 pending_counts = 0;

/* ---- shared memory ---- */

static Size
stats_shmem_size(void)
{
	return add_size(hash_estimate_size(BF_STATS_MAX, sizeof(BfStatsShared)),
					sizeof(pg_atomic_uint64));
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
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared_gen = ShmemInitStruct("bloomfilter statistics generation",
								 sizeof(pg_atomic_uint64), &found);
	if (!found)
		pg_atomic_init_u64(shared_gen, 0);
	ctl.keysize = sizeof(BfStatsKey);
	ctl.entrysize = sizeof(BfStatsShared);
	shared_stats = bf_shmem_init_hash("bloomfilter statistics", BF_STATS_MAX, &ctl,
									  HASH_ELEM | HASH_BLOBS);
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

/*
 * The shared entry of p's filter, with the lock held shared (released and
 * taken again to add a new filter: *genp is then read again); NULL when
 * the shared hash is full or a reset ran in between.
 */
static BfStatsShared *
shared_entry(BfStatsEntry *p, uint64 *genp)
{
	uint64		gen = *genp;
	BfStatsShared *s;
	bool		found;

	if (p->shared != NULL && p->generation == gen)
		return p->shared;
	s = hash_search(shared_stats, &p->key, HASH_FIND, NULL);
	if (s == NULL)
	{
		/* a new filter: the lock exclusive to add it */
		LWLockRelease(shared_lock);
		LWLockAcquire(shared_lock, LW_EXCLUSIVE);
		s = hash_search(shared_stats, &p->key, HASH_ENTER_NULL, &found);
		if (s != NULL && !found)
		{
			pg_atomic_init_u64(&s->lookups, 0);
			pg_atomic_init_u64(&s->absent, 0);
			pg_atomic_init_u64(&s->skipped, 0);
		}
		LWLockRelease(shared_lock);
		LWLockAcquire(shared_lock, LW_SHARED);
		/* a reset in between removed what was added: drop what was counted before it */
		*genp = pg_atomic_read_u64(shared_gen);
		if (*genp != gen)
			return NULL;
	}
	p->shared = s;
	p->generation = gen;
	return s;
}

/* add the pending counts to the shared hash */
static void
stats_flush(void)
{
	uint64		gen;

	if (dirty == NULL)
		return;
	LWLockAcquire(shared_lock, LW_SHARED);
	gen = pg_atomic_read_u64(shared_gen);
	while (dirty != NULL)
	{
		BfStatsEntry *p = dirty;
		BfStatsShared *s = shared_entry(p, &gen);

		/* full: dropped */
		if (s != NULL)
		{
			if (p->n.lookups)
				pg_atomic_fetch_add_u64(&s->lookups, p->n.lookups);
			if (p->n.absent)
				pg_atomic_fetch_add_u64(&s->absent, p->n.absent);
			if (p->n.skipped)
				pg_atomic_fetch_add_u64(&s->skipped, p->n.skipped);
		}
		memset(&p->n, 0, sizeof(p->n));
		p->dirty = false;
		dirty = p->next_dirty;
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
	{
		memset(&last->n, 0, sizeof(last->n));
		last->shared = NULL;
		last->dirty = false;
	}
	return last;
}

/* e counted n more */
static void
stats_counted(BfStatsEntry *e, int64 n)
{
	if (!e->dirty)
	{
		e->dirty = true;
		e->next_dirty = dirty;
		dirty = e;
	}
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
	stats_counted(e, 1);
}

void
bf_stats_count_skip(Oid relid, AttrNumber attnum)
{
	BfStatsEntry *e = stats_entry(relid, attnum);

	if (e == NULL)
		return;
	e->n.skipped++;
	stats_counted(e, 1);
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
	BfStatsShared *s;

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
		values[2] = Int64GetDatum((int64) pg_atomic_read_u64(&s->lookups));
		values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&s->absent));
		values[4] = Int64GetDatum((int64) pg_atomic_read_u64(&s->skipped));
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
	BfStatsShared *s;

	if (shared_stats == NULL)
		PG_RETURN_VOID();
	LWLockAcquire(shared_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
		if (s->key.dbid == MyDatabaseId)
			hash_search(shared_stats, &s->key, HASH_REMOVE, NULL);
	/* backends keeping a removed entry look theirs up again */
	pg_atomic_fetch_add_u64(shared_gen, 1);
	LWLockRelease(shared_lock);
	PG_RETURN_VOID();
}
