/*-------------------------------------------------------------------------
 *
 * bf_patch.h
 *	  Writing change sets (docs/FORMAT.md, "Change sets"): patches that take
 *	  a client's copy of a filter's bytes to their current state, and the
 *	  one-row result of bf_index_changes and bf_tracked_changes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_PATCH_H
#define BF_PATCH_H

#include "postgres.h"

#include "fmgr.h"

/* a patch being written */
typedef struct BfPatch
{
	uint8	   *data;
	Size		len;
	Size		cap;
	uint32		nruns;
	Size		run_at;			/* where the last run's header is in data */
	uint64		run_end;		/* value offset where the last run ends */
	Size		head_len;		/* bytes of the header run's data */
	bool		changed;		/* a range other than the header run was added */
} BfPatch;

extern void bf_patch_begin(BfPatch *pb, Size head_len);
extern uint8 *bf_patch_head(BfPatch *pb);
extern Size bf_patch_range(BfPatch *pb, uint64 off, const uint8 *src, uint32 n);

/* bytes added by bf_patch_range, returned at (valid until the next add) */
static inline uint8 *
bf_patch_at(BfPatch *pb, Size at)
{
	return pb->data + at;
}
extern bytea *bf_patch_finish(BfPatch *pb, bool full, bool header_changed,
							  uint64 total);

/* the one row (next_lsn, full_refresh, patch) of a *_changes function */
extern Datum bf_changes_result(FunctionCallInfo fcinfo, uint64 next, bool full,
							   bytea *patch);

#endif							/* BF_PATCH_H */
