/*-------------------------------------------------------------------------
 *
 * bf_relcheck.h
 *	  Which tables a filter can describe: only tables whose rows live in
 *	  their own heap, so that a scan or an index of the table sees them all.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_RELCHECK_H
#define BF_RELCHECK_H

#include "bf_compat.h"

extern bool bf_rel_is_distributed(Oid relid);
extern bool bf_citus_table(Oid relid);
extern bool bf_citus_catalog(void);
extern bool bf_citus_worker(void);
extern void bf_check_local_rows(Oid relid, const char *what);
extern void bf_check_no_rls(Oid relid);

#endif							/* BF_RELCHECK_H */
