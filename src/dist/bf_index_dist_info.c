/*-------------------------------------------------------------------------
 *
 * bf_index_dist_info.c
 *	  bf_index_info of the bloomfilter index of a table of Citus's: the
 *	  estimates of its shards' indexes, and the rate of a lookup that asks
 *	  them all.
 *
 * The coordinator's table is an empty shell; each shard's index holds the
 * keys of the shard's rows.  Every shard is asked for bf_index_info of
 * its index (found by its key columns: bf_shard_index), in parallel
 * (bf_index_dist_shards.c).  Every shard must answer, or the call fails:
 * estimates from some shards only would understate the rate.
 *
 * A lookup of a key of another column than the distribution column asks
 * every shard, and says "maybe" when any does: its rate is 1 - prod(1 -
 * p_s) over the shards' rates p_s, the rate shown as estimated_fpr (and
 * the same rule over the shards' targets as fpr; saturated when the first
 * exceeds the second: a shard a little over its share of the capacity
 * does not make the table's filter miss its rate).  A key of the
 * distribution column asks one shard, at that shard's rate.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_dist.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

/* the fields of bf_index_info, in order, as the shards send them */
enum
{
	INFO_CAPACITY,
	INFO_FPR,
	INFO_CARDINALITY,
	INFO_FILL,
	INFO_ESTIMATED_FPR,
	INFO_SATURATED,
	INFO_NBITS,
	INFO_NHASHES,
	INFO_FIELDS,				/* bf_index_info's; then the index's size */
	INFO_BYTES = INFO_FIELDS
};

/*
 * bf_index_info for an index of a table of Citus's: false when indexoid is
 * not one; else values and nulls hold bf_index_info's fields for the
 * table as a whole, and *bytes the size of the shards' indexes.
 */
bool
bf_dist_index_info(FunctionCallInfo fcinfo, Oid indexoid, Datum *values,
				   bool *nulls, int64 *bytes)
{
	Oid			heapoid = bf_dist_index_table(indexoid);
	List	   *colnames;
	List	   *shards;
	char	  **commands;
	char	  **results;
	const char *nsp;
	int			save_nestlevel;
	ListCell   *lc;
	double		capacity = 0,
				card = 0,
				ones = 0,
				nbits = 0,
				pass_target = 1,
				pass_estimate = 1,
				size = 0;
	int			nhashes = -1;

	if (!OidIsValid(heapoid))
		return false;
	colnames = bf_dist_index_colnames(heapoid, indexoid);
	nsp = bf_dist_schema(fcinfo);

	save_nestlevel = bf_dist_spi_begin();
	shards = bf_dist_shards(heapoid);
	commands = palloc(sizeof(char *) * Max(list_length(shards), 1));
	foreach(lc, shards)
		commands[foreach_current_index(lc)] =
			psprintf("SELECT ARRAY[i.capacity, i.fpr, i.estimated_cardinality, i.fill, "
					 "i.estimated_fpr, i.saturated::pg_catalog.int4, i.nbits, i.nhashes, "
					 "pg_catalog.pg_relation_size(x.ix)]::pg_catalog.float8[] "
					 "FROM %s, %s.bf_index_info(x.ix) i",
					 bf_dist_shard_from(lfirst(lc), colnames, nsp), nsp);
	results = bf_dist_run(heapoid, shards, commands);
	foreach(lc, shards)
	{
		Datum	   *f;
		bool	   *fnull;
		int			n;

		deconstruct_array(DatumGetArrayTypeP(OidInputFunctionCall(F_ARRAY_IN,
																  results[foreach_current_index(lc)],
																  FLOAT8OID, -1)),
						  FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
						  &f, &fnull, &n);
		if (n != INFO_FIELDS + 1)
			elog(ERROR, "a shard of relation %u sent %d fields", heapoid, n);
		capacity += DatumGetFloat8(f[INFO_CAPACITY]);
		size += DatumGetFloat8(f[INFO_BYTES]);
		card += DatumGetFloat8(f[INFO_CARDINALITY]);
		ones += DatumGetFloat8(f[INFO_FILL]) * DatumGetFloat8(f[INFO_NBITS]);
		nbits += DatumGetFloat8(f[INFO_NBITS]);
		pass_target *= 1.0 - DatumGetFloat8(f[INFO_FPR]);
		pass_estimate *= 1.0 - DatumGetFloat8(f[INFO_ESTIMATED_FPR]);
		if (fnull[INFO_NHASHES] ||
			(nhashes >= 0 && nhashes != (int) DatumGetFloat8(f[INFO_NHASHES])))
			nhashes = 0;		/* the shards differ: none to show */
		else if (nhashes < 0)
			nhashes = (int) DatumGetFloat8(f[INFO_NHASHES]);
	}
	bf_dist_spi_end(save_nestlevel);

	memset(nulls, 0, sizeof(bool) * INFO_FIELDS);
	values[INFO_CAPACITY] = Int64GetDatum((int64) capacity);
	values[INFO_FPR] = Float8GetDatum(1.0 - pass_target);
	values[INFO_CARDINALITY] = Float8GetDatum(card);
	values[INFO_FILL] = Float8GetDatum(nbits > 0 ? ones / nbits : 0);
	values[INFO_ESTIMATED_FPR] = Float8GetDatum(1.0 - pass_estimate);
	values[INFO_SATURATED] = BoolGetDatum(1.0 - pass_estimate > 1.0 - pass_target);
	values[INFO_NBITS] = Int64GetDatum((int64) nbits);
	values[INFO_NHASHES] = Int32GetDatum(nhashes);
	nulls[INFO_NHASHES] = nhashes <= 0;
	*bytes = (int64) size;
	return true;
}
