/*-------------------------------------------------------------------------
 *
 * bf_trigger.c
 *	  What the extension's statement-level trigger functions share
 *	  (bf_track_sync.c, bf_sync_into.c): the check of how they were fired,
 *	  reading a transition table, and plans kept for the backend.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/executor.h"
#include "executor/spi.h"
#include "utils/tuplestore.h"

#include "bf_trigger.h"

void
bf_check_statement_trigger(TriggerData *td, const char *fname)
{
	if (!TRIGGER_FIRED_AFTER(td->tg_event) || !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("%s must be fired AFTER ... FOR EACH STATEMENT", fname)));
}

void
bf_transition_begin(BfTransitionScan *scan, Tuplestorestate *ts, TupleDesc desc)
{
	int			ptr = tuplestore_alloc_read_pointer(ts, EXEC_FLAG_REWIND);

	tuplestore_select_read_pointer(ts, ptr);
	tuplestore_rescan(ts);
	scan->ts = ts;
	scan->slot = MakeSingleTupleTableSlot(desc, &TTSOpsMinimalTuple);
}

bool
bf_transition_next(BfTransitionScan *scan)
{
	return tuplestore_gettupleslot(scan->ts, true, false, scan->slot);
}

void
bf_transition_end(BfTransitionScan *scan)
{
	tuplestore_select_read_pointer(scan->ts, 0);
	ExecDropSingleTupleTableSlot(scan->slot);
}

/* a plan prepared once and kept for the backend */
SPIPlanPtr
bf_spi_keep(const char *sql, int nargs, Oid *types)
{
	SPIPlanPtr	plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL || SPI_keepplan(plan) != 0)
		elog(ERROR, "SPI_prepare failed: %s", sql);
	return plan;
}
