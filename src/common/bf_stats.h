/*-------------------------------------------------------------------------
 *
 * bf_stats.h
 *	  Per-filter statistics: how often a filter was asked, how often it
 *	  answered "absent", and how many guarded scans it let a query skip
 *	  (the bf_stat_filters view).
 *
 * A filter is named by a relation and a column number:
 *
 *	- a bloomfilter index: (the index's OID, 0);
 *	- a tracked filter: (the table's OID, the column's attnum), whichever
 *	  its method (an index-method filter asked through bf_might_contain is
 *	  counted as the tracked filter, the index asked by name as the index).
 *
 * Counting is cheap (a backend-local counter, added to the shared counts
 * between transactions: bf_stats_store.h) and does nothing when the
 * library was not preloaded (shared_preload_libraries), when
 * bloomfilter.track_stats is off, or for an invalid relid.  Any backend
 * code may call these, inside a transaction, at any point of a lookup;
 * they fail only when memory runs out.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_STATS_H
#define BF_STATS_H

#include "postgres.h"

#include "access/attnum.h"

/* one lookup of filter (relid, attnum), and whether it answered "absent" */
extern void bf_stats_count(Oid relid, AttrNumber attnum, bool absent);

/* a guarded scan skipped because filter (relid, attnum) answered "absent" */
extern void bf_stats_count_skip(Oid relid, AttrNumber attnum);

/* _PG_init: the setting, and when preloaded the shared memory */
extern void bf_stats_init(void);

#endif							/* BF_STATS_H */
