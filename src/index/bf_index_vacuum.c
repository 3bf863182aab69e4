/*-------------------------------------------------------------------------
 *
 * bf_index_vacuum.c
 *	  VACUUM of a bloomfilter index: a filter's bits only ever turn on, so
 *	  there is nothing to remove; the statistics report the table's rows.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/genam.h"
#include "storage/bufmgr.h"

/* nothing is ever removed: bits of deleted keys go away at REINDEX */
IndexBulkDeleteResult *
bfbulkdelete(IndexVacuumInfo *info, IndexBulkDeleteResult *stats,
			 IndexBulkDeleteCallback callback, void *callback_state)
{
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	return stats;
}

IndexBulkDeleteResult *
bfvacuumcleanup(IndexVacuumInfo *info, IndexBulkDeleteResult *stats)
{
	if (info->analyze_only)
		return stats;
	if (stats == NULL)
		stats = (IndexBulkDeleteResult *) palloc0(sizeof(IndexBulkDeleteResult));
	stats->num_pages = RelationGetNumberOfBlocks(info->index);
	/* the filter does not count keys; report the table's rows, as estimated */
	stats->num_index_tuples = info->num_heap_tuples;
	stats->estimated_count = true;
	return stats;
}

