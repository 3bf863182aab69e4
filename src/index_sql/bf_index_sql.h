/*-------------------------------------------------------------------------
 *
 * bf_index_sql.h
 *	  The SQL functions that read a bloomfilter index (src/index_sql/):
 *	  what they share with tracked filters, which answer a column tracked
 *	  by an index through them.  An index of a distributed table is
 *	  answered by the Citus code (bf_dist.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_INDEX_SQL_H
#define BF_INDEX_SQL_H

#include "bf_index.h"

#include "access/xlogdefs.h"

/* bf_index_funcs.c: the SQL-callable functions reading an index */
extern Relation bf_index_open_checked(Oid indexoid, BfIndexState *st,
									  const char *what);
extern void bf_index_growing_header(const BfIndexLayers *layers, uint8 *dst);
extern void bf_index_value_header(const BfIndexMeta *meta, uint64 ones,
								  uint8 *dst);
extern struct varlena *bf_index_value(Oid indexoid, const char *what);

/* bf_index_changes.c */
extern Datum bf_index_changes_of(FunctionCallInfo fcinfo, Oid indexoid,
								 bool since_null, XLogRecPtr since);

#endif							/* BF_INDEX_SQL_H */
