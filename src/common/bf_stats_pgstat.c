/*-------------------------------------------------------------------------
 *
 * bf_stats_pgstat.c
 *	  The store of per-filter statistics on PostgreSQL 18 and later
 *	  (bf_stats_store.h): a custom kind of PostgreSQL's cumulative
 *	  statistics, the native place for them.
 *
 * One variable-numbered entry per filter, keyed by (database, objid) with
 * objid the relation's OID and the attribute number packed into 64 bits
 * (BF_STATS_OBJID).  A backend adds to the entry's pending counts, which
 * PostgreSQL flushes into shared memory (stats_flush_pending) as it
 * flushes its own: between transactions, at most once a second while the
 * backend is busy, within seconds once it is idle, and when it exits.
 * PostgreSQL writes the entries to pg_stat/ at a clean shutdown, reads
 * them back at startup and discards them after a crash (write_to_file),
 * drops those of a dropped database, and with the relation's drop
 * (pgstat_drop_transactional) those of a dropped relation when the drop
 * commits.  pg_upgrade carries no cumulative statistics.
 *
 * Registering a kind needs shared_preload_libraries: without it
 * bf_stats_store_ready() is false and nothing is counted.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#if PG_VERSION_NUM >= 180000

#include "bf_stats_store.h"

#include "lib/dshash.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/dsa.h"
#include "utils/pgstat_internal.h"
#include "utils/timestamp.h"

/*
 * The kind's ID, unique across the extensions a server loads.  18 and 19
 * give custom kinds 24 to 32 (PGSTAT_KIND_CUSTOM_MIN..MAX); PostgreSQL
 * takes 24 itself (PGSTAT_KIND_EXPERIMENTAL, shared by every extension
 * still in development, so two of them collide) and its injection_points
 * test module 25 and 26.  30 is none of those and leaves the low free IDs
 * to extensions that reserve them in order; the wiki page
 * CustomCumulativeStats, where extensions reserve theirs, is to be checked
 * and 30 reserved there before release.  Another extension registering 30
 * stops the server at startup (pgstat_register_kind); changing the ID
 * discards the counts a server kept.
 */
#define BF_STATS_KIND ((PgStat_Kind) 30)

/* the relation and attribute number of a filter, as one entry's objid */
#define BF_STATS_OBJID(relid, attnum) \
	(((uint64) (relid) << 32) | (uint64) (uint16) (attnum))
#define BF_STATS_RELID(objid) ((Oid) ((objid) >> 32))
#define BF_STATS_ATTNUM(objid) ((AttrNumber) (int16) ((objid) & 0xFFFF))

typedef struct BfStatsShared
{
	PgStatShared_Common header;
	BfStatsCounts n;
} BfStatsShared;

static bool stats_flush_pending(PgStat_EntryRef *entry_ref, bool nowait);

static const PgStat_KindInfo bf_stats_kind = {
	.name = "bloomfilter",
	.fixed_amount = false,
	/* counts of a database's filters, read in that database only */
	.accessed_across_databases = false,
	.write_to_file = true,
	.shared_size = sizeof(BfStatsShared),
	.shared_data_off = offsetof(BfStatsShared, n),
	.shared_data_len = sizeof(((BfStatsShared *) 0)->n),
	.pending_size = sizeof(BfStatsCounts),
	.flush_pending_cb = stats_flush_pending,
};

static bool registered = false;

/* add a backend's pending counts to the shared entry */
static bool
stats_flush_pending(PgStat_EntryRef *entry_ref, bool nowait)
{
	BfStatsCounts *p = (BfStatsCounts *) entry_ref->pending;
	BfStatsShared *s = (BfStatsShared *) entry_ref->shared_stats;

	if (!pgstat_lock_entry(entry_ref, nowait))
		return false;
	s->n.lookups += p->lookups;
	s->n.absent += p->absent;
	s->n.skipped += p->skipped;
	pgstat_unlock_entry(entry_ref);
	return true;
}

void
bf_stats_store_preload(void)
{
	pgstat_register_kind(BF_STATS_KIND, &bf_stats_kind);
	registered = true;
}

bool
bf_stats_store_ready(void)
{
	return registered;
}

/*
 * The entry's pending counts: PostgreSQL frees them once flushed, which
 * it does only between transactions, so they are good until this one
 * ends (bf_stats.c asks again then) and prev is of no use.
 */
BfStatsCounts *
bf_stats_store_counts(Oid relid, AttrNumber attnum, BfStatsCounts *prev)
{
	PgStat_EntryRef *ref = pgstat_prep_pending_entry(BF_STATS_KIND, MyDatabaseId,
													 BF_STATS_OBJID(relid, attnum),
													 NULL);

	return (BfStatsCounts *) ref->pending;
}

/* PostgreSQL flushes pending counts itself, never inside a transaction */
void
bf_stats_store_flush(void)
{
}

/*
 * A relation's drop: its filters' entries are dropped when the drop
 * commits, and on standbys when they replay it (the commit record lists
 * them), as PostgreSQL drops a table's statistics.  Only entries that
 * exist are listed, so that dropping a table without filters costs a
 * lookup per column and writes nothing.  A database's entries go with its
 * own (pgstat_drop_database).
 */
void
bf_stats_store_drop(Oid dbid, Oid relid, AttrNumber natts)
{
	if (!OidIsValid(relid))
		return;
	for (AttrNumber a = 0; a <= natts; a++)
	{
		uint64		objid = BF_STATS_OBJID(relid, a);

		if (pgstat_get_entry_ref(BF_STATS_KIND, dbid, objid, false, NULL) != NULL)
			pgstat_drop_transactional(BF_STATS_KIND, dbid, objid);
	}
}

/* PostgreSQL applies or forgets transactional drops itself */
void
bf_stats_store_xact_end(bool commit)
{
	(void) commit;
}

void
bf_stats_store_subxact_end(bool commit, int level)
{
	(void) commit;
	(void) level;
}

/*
 * Read live, like bf_stats_shmem.c's rows (no snapshot): every entry of
 * this database, each under its own lock as PostgreSQL's snapshots read
 * them.
 */
BfStatsRow *
bf_stats_store_rows(int *nrows)
{
	dshash_seq_status hstat;
	PgStatShared_HashEntry *p;
	int			n = 0;
	int			max = 64;
	BfStatsRow *rows = palloc(sizeof(BfStatsRow) * max);

	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((p = dshash_seq_next(&hstat)) != NULL)
	{
		BfStatsShared *s;

		if (p->key.kind != BF_STATS_KIND || p->key.dboid != MyDatabaseId || p->dropped)
			continue;
		if (n == max)
		{
			max *= 2;
			rows = repalloc(rows, sizeof(BfStatsRow) * max);
		}
		s = dsa_get_address(pgStatLocal.dsa, p->body);
		rows[n].relid = BF_STATS_RELID(p->key.objid);
		rows[n].attnum = BF_STATS_ATTNUM(p->key.objid);
		LWLockAcquire(&s->header.lock, LW_SHARED);
		rows[n].n = s->n;
		LWLockRelease(&s->header.lock);
		n++;
	}
	dshash_seq_term(&hstat);
	*nrows = n;
	return rows;
}

static bool
match_this_database(PgStatShared_HashEntry *entry, Datum match_data)
{
	return entry->key.kind == BF_STATS_KIND &&
		entry->key.dboid == DatumGetObjectId(match_data);
}

/*
 * Zero the counts, as pg_stat_reset() zeroes PostgreSQL's (which zeroes
 * these too): the entries stay, and bf_stat_filters_raw() leaves out
 * those without counts.
 */
void
bf_stats_store_reset(void)
{
	pgstat_reset_matching_entries(match_this_database, ObjectIdGetDatum(MyDatabaseId),
								  GetCurrentTimestamp());
}

#endif							/* PG_VERSION_NUM >= 180000 */
