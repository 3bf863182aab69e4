/*-------------------------------------------------------------------------
 *
 * bf_stats_shmem.c
 *	  The store of per-filter statistics on PostgreSQL 15 to 17
 *	  (bf_stats_store.h), which have no custom kinds of cumulative
 *	  statistics: a shared hash of the extension's own, kept across a
 *	  clean restart in a file of pg_stat/, as 18's statistics are.
 *
 * A backend keeps its counts in a local hash and adds them to the shared
 * hash at the end of each transaction, committed or not, as PostgreSQL's
 * own statistics do, and in between for long transactions.  Adding is
 * cheap: each pending entry keeps its shared entry, whose counters are
 * atomic, so a flush takes the lock shared and adds; only a filter new to
 * the shared hash takes it exclusive.  A reset or a drop, which removes
 * entries, bumps a generation that makes every backend look its entries
 * up again.  The shared hash holds BF_STATS_MAX filters; counts of filters
 * beyond that are dropped.
 *
 * Across restarts, as pg_stat_statements keeps its counts on these
 * versions: the postmaster writes the hash to BF_STATS_FILE when it exits
 * normally (an on_shmem_exit callback), and reads it back when it creates
 * shared memory, then removes it.  The counts are read back only when the
 * control file says the server was shut down cleanly, the test PostgreSQL
 * applies to its own statistics: after a crash or an immediate stop they
 * start from zero, and a crash-restart finds no file.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if PG_VERSION_NUM < 180000

#include "bf_stats_store.h"

#include "bf_compat.h"

#include "access/xact.h"
#include "catalog/pg_control.h"
#include "common/controldata_utils.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#define BF_STATS_MAX 4096
#define BF_STATS_FILE PGSTAT_STAT_PERMANENT_DIRECTORY "/bloomfilter.stat"
#define BF_STATS_FILE_MAGIC 0x42665301	/* "BfS" and the format's version */

typedef struct BfStatsKey
{
	Oid			dbid;
	Oid			relid;
	AttrNumber	attnum;
} BfStatsKey;

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

/*
 * a relation (or database: relid invalid) whose drop is not committed yet,
 * and the (sub)transaction nesting level that dropped it
 */
typedef struct BfStatsDrop
{
	Oid			dbid;
	Oid			relid;
	int			level;
} BfStatsDrop;

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

/* this backend's counts not yet added, and drops not yet committed */
static HTAB *pending = NULL;
static BfStatsEntry *dirty = NULL;
static BfStatsDrop *drops = NULL;
static int	ndrops = 0;
static int	maxdrops = 0;

/* ---- shared memory, and the file that keeps it across restarts ---- */

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

/* whether the last shutdown was clean (so its counts are to be kept) */
static bool
stats_shut_down_cleanly(void)
{
	bool		crc_ok;
	ControlFileData *cf = get_controlfile(DataDir, &crc_ok);
	bool		clean = crc_ok && (cf->state == DB_SHUTDOWNED ||
								   cf->state == DB_SHUTDOWNED_IN_RECOVERY);

	pfree(cf);
	return clean;
}

/*
 * Read back the counts the postmaster wrote at its last exit, if the
 * server was shut down cleanly, and remove the file either way.  A file
 * that cannot be read is left out with a LOG message: these are counts,
 * never a reason not to start.
 */
static void
stats_load(void)
{
	FILE	   *f;
	uint32		magic;
	int32		n;

	f = AllocateFile(BF_STATS_FILE, PG_BINARY_R);
	if (f == NULL)
	{
		if (errno != ENOENT)
			ereport(LOG,
					(errcode_for_file_access(),
					 errmsg("could not read file \"%s\": %m", BF_STATS_FILE)));
		return;
	}
	if (stats_shut_down_cleanly() &&
		fread(&magic, sizeof(magic), 1, f) == 1 && magic == BF_STATS_FILE_MAGIC &&
		fread(&n, sizeof(n), 1, f) == 1)
	{
		for (int i = 0; i < n && i < BF_STATS_MAX; i++)
		{
			BfStatsKey	key;
			uint64		c[3];
			BfStatsShared *s;
			bool		found;

			if (fread(&key, sizeof(key), 1, f) != 1 || fread(c, sizeof(c), 1, f) != 1)
			{
				ereport(LOG,
						(errmsg("bloomfilter statistics file \"%s\" is truncated",
								BF_STATS_FILE)));
				break;
			}
			s = hash_search(shared_stats, &key, HASH_ENTER_NULL, &found);
			if (s == NULL)
				break;
			pg_atomic_init_u64(&s->lookups, c[0]);
			pg_atomic_init_u64(&s->absent, c[1]);
			pg_atomic_init_u64(&s->skipped, c[2]);
		}
	}
	FreeFile(f);
	unlink(BF_STATS_FILE);
}

/*
 * The postmaster's exit: write the counts, unless it is exiting for a
 * crash-restart (code nonzero).  Whether they are read back is decided at
 * the next start (stats_load).
 */
static void
stats_save(int code, Datum arg)
{
	FILE	   *f;
	HASH_SEQ_STATUS seq;
	BfStatsShared *s;
	int32		n;
	uint32		magic = BF_STATS_FILE_MAGIC;

	if (code != 0 || shared_stats == NULL)
		return;
	f = AllocateFile(BF_STATS_FILE ".tmp", PG_BINARY_W);
	if (f == NULL)
		goto error;
	n = (int32) hash_get_num_entries(shared_stats);
	if (fwrite(&magic, sizeof(magic), 1, f) != 1 || fwrite(&n, sizeof(n), 1, f) != 1)
		goto error;
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		uint64		c[3];

		c[0] = pg_atomic_read_u64(&s->lookups);
		c[1] = pg_atomic_read_u64(&s->absent);
		c[2] = pg_atomic_read_u64(&s->skipped);
		if (fwrite(&s->key, sizeof(s->key), 1, f) != 1 || fwrite(c, sizeof(c), 1, f) != 1)
		{
			hash_seq_term(&seq);
			goto error;
		}
	}
	if (FreeFile(f))
	{
		f = NULL;
		goto error;
	}
	(void) durable_rename(BF_STATS_FILE ".tmp", BF_STATS_FILE, LOG);
	return;

error:
	ereport(LOG,
			(errcode_for_file_access(),
			 errmsg("could not write file \"%s\": %m", BF_STATS_FILE ".tmp")));
	if (f)
		FreeFile(f);
	unlink(BF_STATS_FILE ".tmp");
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

	/* the postmaster (or a single-user backend) keeps them across restarts */
	if (!IsUnderPostmaster)
	{
		on_shmem_exit(stats_save, (Datum) 0);
		if (!found)
			stats_load();
	}
}

void
bf_stats_store_preload(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = stats_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = stats_shmem_startup;
}

bool
bf_stats_store_ready(void)
{
	return shared_stats != NULL;
}

/* ---- counting ---- */

/*
 * The local entry of the filter, marked for the next flush.  The local
 * hash never removes an entry, so prev, the counts of an entry handed out
 * before, names its entry without a lookup.
 */
BfStatsCounts *
bf_stats_store_counts(Oid relid, AttrNumber attnum, BfStatsCounts *prev)
{
	BfStatsEntry *e;

	if (prev != NULL)
		e = (BfStatsEntry *) ((char *) prev - offsetof(BfStatsEntry, n));
	else
	{
		BfStatsKey	key;
		bool		found;

		if (pending == NULL)
		{
			HASHCTL		ctl;

			ctl.keysize = sizeof(BfStatsKey);
			ctl.entrysize = sizeof(BfStatsEntry);
			ctl.hcxt = TopMemoryContext;
			pending = hash_create("bloomfilter pending statistics", 16, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		}
		memset(&key, 0, sizeof(key));
		key.dbid = MyDatabaseId;
		key.relid = relid;
		key.attnum = attnum;
		e = hash_search(pending, &key, HASH_ENTER, &found);
		if (!found)
		{
			memset(&e->n, 0, sizeof(e->n));
			e->shared = NULL;
			e->dirty = false;
		}
	}
	/* what is counted until the next flush is added by it */
	if (!e->dirty)
	{
		e->dirty = true;
		e->next_dirty = dirty;
		dirty = e;
	}
	return &e->n;
}

/*
 * The shared entry of p's filter, with the lock held shared (released and
 * taken again to add a new filter: *genp is then read again); NULL when
 * the shared hash is full or a reset or drop ran in between.
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

void
bf_stats_store_flush(void)
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
}

/* ---- drops and resets ---- */

static int
drop_cmp(const void *a, const void *b)
{
	const BfStatsDrop *x = a;
	const BfStatsDrop *y = b;

	if (x->dbid != y->dbid)
		return x->dbid < y->dbid ? -1 : 1;
	if (x->relid != y->relid)
		return x->relid < y->relid ? -1 : 1;
	return 0;
}

/*
 * Remove the entries of the relations and databases in d[0..n-1] (relid
 * invalid: the whole database), in one pass over the shared hash.
 */
static void
remove_entries(BfStatsDrop *d, int n)
{
	HASH_SEQ_STATUS seq;
	BfStatsShared *s;
	bool		removed = false;

	qsort(d, n, sizeof(BfStatsDrop), drop_cmp);
	LWLockAcquire(shared_lock, LW_EXCLUSIVE);
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		BfStatsDrop rel = {s->key.dbid, s->key.relid, 0};
		BfStatsDrop db = {s->key.dbid, InvalidOid, 0};

		if (bsearch(&rel, d, n, sizeof(BfStatsDrop), drop_cmp) ||
			bsearch(&db, d, n, sizeof(BfStatsDrop), drop_cmp))
		{
			hash_search(shared_stats, &s->key, HASH_REMOVE, NULL);
			removed = true;
		}
	}
	/* backends keeping a removed entry look theirs up again */
	if (removed)
		pg_atomic_fetch_add_u64(shared_gen, 1);
	LWLockRelease(shared_lock);
}

/*
 * Kept in the transaction's memory, allocated here so that applying them
 * at commit allocates nothing; with the nesting level of the savepoint
 * that dropped it, so that a rollback to it keeps the counts.
 */
void
bf_stats_store_drop(Oid dbid, Oid relid, AttrNumber natts)
{
	(void) natts;				/* every column's counts are the relation's */
	if (ndrops == maxdrops)
	{
		maxdrops = Max(8, maxdrops * 2);
		drops = drops == NULL
			? MemoryContextAlloc(TopTransactionContext, sizeof(BfStatsDrop) * maxdrops)
			: repalloc(drops, sizeof(BfStatsDrop) * maxdrops);
	}
	drops[ndrops].dbid = dbid;
	drops[ndrops].relid = relid;
	drops[ndrops].level = GetCurrentTransactionNestLevel();
	ndrops++;
}

void
bf_stats_store_subxact_end(bool commit, int level)
{
	int			kept = 0;

	for (int i = 0; i < ndrops; i++)
	{
		if (drops[i].level < level)
			drops[kept++] = drops[i];
		else if (commit)
		{
			/* the parent's now, undone if the parent rolls back */
			drops[kept] = drops[i];
			drops[kept++].level = level - 1;
		}
	}
	ndrops = kept;
}

void
bf_stats_store_xact_end(bool commit)
{
	/* a rolled-back drop keeps the counts */
	if (commit && ndrops > 0)
		remove_entries(drops, ndrops);
	/* the array lives in the transaction's memory, freed after this */
	drops = NULL;
	ndrops = maxdrops = 0;
}

BfStatsRow *
bf_stats_store_rows(int *nrows)
{
	HASH_SEQ_STATUS seq;
	BfStatsShared *s;
	BfStatsRow *rows = palloc(sizeof(BfStatsRow) * BF_STATS_MAX);
	int			n = 0;

	LWLockAcquire(shared_lock, LW_SHARED);
	hash_seq_init(&seq, shared_stats);
	while ((s = hash_seq_search(&seq)) != NULL)
	{
		if (s->key.dbid != MyDatabaseId || n >= BF_STATS_MAX)
			continue;
		rows[n].relid = s->key.relid;
		rows[n].attnum = s->key.attnum;
		rows[n].n.lookups = (int64) pg_atomic_read_u64(&s->lookups);
		rows[n].n.absent = (int64) pg_atomic_read_u64(&s->absent);
		rows[n].n.skipped = (int64) pg_atomic_read_u64(&s->skipped);
		n++;
	}
	LWLockRelease(shared_lock);
	*nrows = n;
	return rows;
}

void
bf_stats_store_reset(void)
{
	BfStatsDrop db = {MyDatabaseId, InvalidOid, 0};

	remove_entries(&db, 1);
}

#endif							/* PG_VERSION_NUM < 180000 */
