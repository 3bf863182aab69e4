/*-------------------------------------------------------------------------
 *
 * bf_index_dist_info.c
 *	  bf_index_info of the bloomfilter index of a table of Citus's: the
 *	  estimates of its shards' indexes, and the rate of a lookup that asks
 *	  them all.
 *
 * The coordinator's table is an empty shell; each shard's index holds the
 * keys of the shard's rows.  Citus's run_command_on_shards asks every
 * shard, in parallel over connections of its own, for bf_index_info of the
 * shard's index (found by its key columns: bf_shard_index), as the current
 * user.  Those connections are outside the caller's transaction, which is
 * no matter here: an index's bits are not versioned, so they are the same
 * for every transaction.  Every shard must answer, or the call fails:
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
#include "bf_index.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
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

/* append s to buf with each '%' doubled (the command is a format() string) */
static void
append_escaped(StringInfo buf, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '%')
			appendStringInfoChar(buf, '%');
		appendStringInfoChar(buf, *s);
	}
}

/*
 * The command every shard runs, "%s" standing for the shard's name: its
 * index's bf_index_info and size as one float8[] in the order above.
 */
static char *
shard_command(List *colnames, const char *nsp)
{
	StringInfoData cmd;
	StringInfoData cols;
	ListCell   *lc;

	initStringInfo(&cols);
	foreach(lc, colnames)
		appendStringInfo(&cols, "%s%s", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_literal_cstr((char *) lfirst(lc)));
	initStringInfo(&cmd);
	appendStringInfoString(&cmd,
						   "SELECT ARRAY[i.capacity, i.fpr, i.estimated_cardinality, i.fill, "
						   "i.estimated_fpr, i.saturated::pg_catalog.int4, i.nbits, i.nhashes, "
						   "pg_catalog.pg_relation_size(x.ix)]::pg_catalog.float8[] FROM ");
	append_escaped(&cmd, nsp);
	appendStringInfoString(&cmd, ".bf_shard_index('%s'::pg_catalog.regclass, ARRAY[");
	append_escaped(&cmd, cols.data);
	appendStringInfoString(&cmd, "]::pg_catalog.name[]) x(ix), ");
	append_escaped(&cmd, nsp);
	appendStringInfoString(&cmd, ".bf_index_info(x.ix) i");
	return cmd.data;
}

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
	Relation	index;
	List	   *colnames = NIL;
	Oid			types[2] = {REGCLASSOID, TEXTOID};
	Datum		args[2];
	int			save_nestlevel;
	int64		shards;
	double		capacity = 0,
				card = 0,
				ones = 0,
				nbits = 0,
				pass_target = 1,
				pass_estimate = 1,
				size = 0;
	bool		isnull;
	int			nhashes = -1;

	if (!OidIsValid(heapoid))
		return false;
	index = index_open(indexoid, AccessShareLock);
	(void) bf_dist_index_columns(heapoid, index, &colnames, CurrentMemoryContext);
	index_close(index, NoLock);

	save_nestlevel = bf_dist_spi_begin();
	shards = bf_dist_shard_count(heapoid);
	args[0] = ObjectIdGetDatum(heapoid);
	args[1] = CStringGetTextDatum(shard_command(colnames, bf_dist_schema(fcinfo)));
	if (SPI_execute_with_args("SELECT s.shardid, s.success, s.result, "
							  "CASE WHEN s.success THEN s.result::pg_catalog.float8[] END "
							  "FROM pg_catalog.run_command_on_shards($1, $2) s",
							  2, types, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not ask the shards of relation %u", heapoid);
	if ((int64) SPI_processed != shards)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("not every shard of table \"%s\" could be asked", get_rel_name(heapoid)),
				 errdetail("%lld of its %lld shards have an active placement.",
						   (long long) SPI_processed, (long long) shards)));
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum	   *f;
		bool	   *fnull;
		int			n;

		if (!DatumGetBool(SPI_getbinval(tup, desc, 2, &isnull)))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_EXCEPTION),
					 errmsg("shard %s of table \"%s\" could not answer",
							SPI_getvalue(tup, desc, 1), get_rel_name(heapoid)),
					 errdetail("The shard's node said: %s", SPI_getvalue(tup, desc, 3))));
		deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(tup, desc, 4, &isnull)),
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
