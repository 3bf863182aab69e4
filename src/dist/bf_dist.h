/*-------------------------------------------------------------------------
 *
 * bf_dist.h
 *	  The Citus code (src/dist/): bloomfilter indexes and tracked filters
 *	  of distributed tables, answered by asking the shards' indexes.  It
 *	  reads local indexes through the access method (bf_index.h); the
 *	  index's SQL functions (bf_index_sql.h) and tracked filters call it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_DIST_H
#define BF_DIST_H

#include "bf_index.h"

#include "access/xlogdefs.h"

/* bf_index_dist.c: lookups in the index of a Citus-distributed table */
extern bool bf_dist_might_contain(Oid relid, Oid indexoid, Oid keytype,
								  Datum value, const char *nsp);
extern bool bf_dist_index_contains(FunctionCallInfo fcinfo, Oid indexoid,
								   Oid keytype, Datum value, bool *found);
extern void bf_dist_shard_sizing(Oid relid, int64 *capacity, double *fpr);
extern int64 bf_dist_shard_count(Oid relid);
extern int	bf_dist_spi_begin(void);
extern void bf_dist_spi_end(int save_nestlevel);
extern Oid	bf_dist_index_table(Oid indexoid);
extern char *bf_dist_schema(FunctionCallInfo fcinfo);
extern ArrayType *bf_dist_index_columns(Oid relid, Relation index,
										List **colnames, MemoryContext mcxt);

/* bf_index_dist_shards.c: one statement to each shard's index */
typedef struct BfShard
{
	int64		shardid;
	int64		placementid;	/* the placement asked */
	char	   *name;			/* shard_name(): qualified, quoted */
	char	   *node;
	int			port;
} BfShard;

extern List *bf_dist_shards(Oid heapoid);
extern char *bf_dist_shard_from(const BfShard *s, List *colnames, const char *nsp);
extern char **bf_dist_run(Oid heapoid, List *shards, char **commands);
extern List *bf_dist_index_colnames(Oid heapoid, Oid indexoid);

/* bf_index_dist_filter.c: the union of the shards' filters, and patches */
extern bool bf_dist_index_value(Oid indexoid, struct varlena **out);
extern bool bf_dist_index_changes(FunctionCallInfo fcinfo, Oid indexoid,
								  bool since_null, XLogRecPtr since);

/* bf_index_dist_info.c: bf_index_info of a distributed table's index */
extern bool bf_dist_index_info(FunctionCallInfo fcinfo, Oid indexoid,
							   Datum *values, bool *nulls, int64 *bytes);

#endif							/* BF_DIST_H */
