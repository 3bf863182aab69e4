/*-------------------------------------------------------------------------
 *
 * bf_stats_store.h
 *	  Where per-filter statistics are kept between backends, behind one
 *	  interface for bf_stats.c, which counts:
 *
 *	- PostgreSQL 18 and later: a kind of PostgreSQL's own cumulative
 *	  statistics (bf_stats_pgstat.c): flushed by PostgreSQL, written to
 *	  pg_stat/ at a clean shutdown, discarded after a crash, dropped with
 *	  the relation or database;
 *	- 15 to 17, which have no custom kinds: a shared hash of the
 *	  extension's own (bf_stats_shmem.c), written to pg_stat/ by the
 *	  postmaster at shutdown and read back at startup when the server was
 *	  shut down cleanly, as 18's are.
 *
 * Only one of the two files has code for a given server; the functions
 * below are those of whichever it is.  The others are called only where
 * bf_stats_store_ready() is true (the library was preloaded), and
 * bf_stats_store_preload() by _PG_init while preloading.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_STATS_STORE_H
#define BF_STATS_STORE_H

#include "postgres.h"

#include "access/attnum.h"

/* a filter's counts; also the pending counts of 18's statistics kind */
typedef struct BfStatsCounts
{
	int64		lookups;
	int64		absent;
	int64		skipped;
} BfStatsCounts;

/* one row of bf_stat_filters_raw() */
typedef struct BfStatsRow
{
	Oid			relid;
	AttrNumber	attnum;
	BfStatsCounts n;
} BfStatsRow;

/* _PG_init while preloading: register the kind, or ask for shared memory */
extern void bf_stats_store_preload(void);

/* whether there is somewhere to count: the library was preloaded */
extern bool bf_stats_store_ready(void);

/*
 * Where this backend adds its counts of filter (relid, attnum) of this
 * database: valid until the transaction ends or bf_stats_store_flush()
 * runs, whichever comes first.  prev: what this returned last time for
 * the same filter, or NULL (15-17 hand out the same place again without a
 * lookup).
 */
extern BfStatsCounts *bf_stats_store_counts(Oid relid, AttrNumber attnum,
											BfStatsCounts *prev);

/*
 * Make this backend's counts visible to others now where the store can
 * (15-17; 18's are flushed by PostgreSQL between transactions, when the
 * backend goes idle and when it exits).  Called at the end of every
 * transaction and in between for long ones.
 */
extern void bf_stats_store_flush(void);

/*
 * The transaction dropped relation relid, of attribute numbers 1..natts:
 * its filters' counts go when it commits.  dbid: a dropped database, all
 * of whose counts go (relid invalid).
 */
extern void bf_stats_store_drop(Oid dbid, Oid relid, AttrNumber natts);

/* the end of a transaction: apply (commit) or forget its drops */
extern void bf_stats_store_xact_end(bool commit);

/*
 * the end of the savepoint at nesting level level: its drops become its
 * parent's (commit) or are forgotten
 */
extern void bf_stats_store_subxact_end(bool commit, int level);

/* every filter of this database with counts; *nrows rows, palloc'd */
extern BfStatsRow *bf_stats_store_rows(int *nrows);

/* zero the counts of this database's filters */
extern void bf_stats_store_reset(void);

#endif							/* BF_STATS_STORE_H */
