/*-------------------------------------------------------------------------
 *
 * bf_trigger.h
 *	  Helpers of the statement-level trigger functions (bf_trigger.c),
 *	  used by bf_track_sync.c (tracked filters) and bf_sync_into.c (the
 *	  trigger helper for users' own tables).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_TRIGGER_H
#define BF_TRIGGER_H

#include "commands/trigger.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/tuplestore.h"

/* bf_trigger.c */
extern void bf_check_statement_trigger(TriggerData *td, const char *fname);

/*
 * Walk the rows of a transition table with a private read pointer (other
 * triggers of the statement read the same tuplestore).
 */
typedef struct BfTransitionScan
{
	Tuplestorestate *ts;
	TupleTableSlot *slot;
} BfTransitionScan;

extern void bf_transition_begin(BfTransitionScan *scan, Tuplestorestate *ts,
								TupleDesc desc);
extern bool bf_transition_next(BfTransitionScan *scan);
extern void bf_transition_end(BfTransitionScan *scan);
extern SPIPlanPtr bf_spi_keep(const char *sql, int nargs, Oid *types);

#endif							/* BF_TRIGGER_H */
