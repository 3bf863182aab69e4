/*-------------------------------------------------------------------------
 *
 * bloomfilter.c
 *	  The library's entry point: the module magic, and _PG_init, which
 *	  registers each area's settings when the library loads (and, when it
 *	  is preloaded, the rebuild worker), the planner hook of join
 *	  pre-filters, the custom node of run-time join filters, and the
 *	  planner hook and node of scan guards; plans cached before it loaded
 *	  are made again.  Nothing else calls into this file.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "miscadmin.h"
#include "utils/guc.h"
#include "utils/plancache.h"

#include "bf_cache.h"
#include "bf_guard.h"
#include "bf_join.h"
#include "bf_stats.h"
#include "bf_track.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	bf_agg_define_gucs();
	bf_filter_cache_define_gucs();
	bf_join_define_gucs();
	bf_join_runtime_init();
	bf_guard_init();
	bf_track_worker_init();
	bf_stats_init();
	MarkGUCPrefixReserved("bloomfilter");

	/*
	 * The library loads when a statement first needs it, often while that
	 * statement is being planned: plans cached until then have none of the
	 * planner hooks' filters and guards, so they are made again at their
	 * next use.
	 */
	if (IsUnderPostmaster && !process_shared_preload_libraries_in_progress)
		ResetPlanCache();
}
