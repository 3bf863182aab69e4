/*-------------------------------------------------------------------------
 *
 * bf_index_dist_shards.c
 *	  Asking every shard's bloomfilter index of a table of Citus's one
 *	  question, in parallel: the base of bf_index_info, bf_index_filter
 *	  and bf_index_changes on the coordinator (bf_index_dist_info.c,
 *	  bf_index_dist_filter.c).
 *
 * The shards and their placements come from Citus's catalog, one active
 * placement per shard (the first by placement id: a reference table has
 * one on every node), in shard id order.  Each shard gets a statement of
 * its own, sent with Citus's master_run_on_worker (what
 * run_command_on_shards does, over connections of Citus's, as the current
 * user); building them here rather than by format() on the worker lets
 * each carry the shard's name as a quoted literal (a table's name cannot
 * break out of it) and arguments of its own (bf_index_changes' position).
 * Those connections are outside the caller's transaction, which is no
 * matter: an index's bits are not versioned.  Every shard must answer, or
 * the call fails: an answer from some shards only would be wrong.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_dist.h"

#include "access/relation.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/*
 * The shards of Citus table heapoid with one active placement each, in
 * shard id order; inside SPI (bf_dist_spi_begin).  An error when a shard
 * has none.
 */
List *
bf_dist_shards(Oid heapoid)
{
	Oid			types[1] = {REGCLASSOID};
	Datum		args[1] = {ObjectIdGetDatum(heapoid)};
	List	   *shards = NIL;
	int64		last = -1;

	if (SPI_execute_with_args("SELECT s.shardid, p.placementid, "
							  "pg_catalog.shard_name(s.logicalrelid, s.shardid), "
							  "p.nodename, p.nodeport "
							  "FROM pg_catalog.pg_dist_shard s "
							  "LEFT JOIN pg_catalog.pg_dist_shard_placement p "
							  "ON p.shardid = s.shardid AND p.shardstate = 1 "
							  "WHERE s.logicalrelid = $1 "
							  "ORDER BY s.shardid, p.placementid",
							  1, types, args, NULL, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not list the shards of relation %u", heapoid);
	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int64		shardid = DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));
		BfShard    *s;

		if (shardid == last)
			continue;			/* a further placement of the same shard */
		last = shardid;
		(void) SPI_getbinval(tup, desc, 2, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("shard " INT64_FORMAT " of table \"%s\" has no active placement",
							shardid, get_rel_name(heapoid)),
					 errdetail("Without it the keys of the shard's rows cannot be asked.")));
		s = palloc(sizeof(BfShard));
		s->shardid = shardid;
		s->placementid = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		s->name = SPI_getvalue(tup, desc, 3);
		s->node = SPI_getvalue(tup, desc, 4);
		s->port = DatumGetInt32(SPI_getbinval(tup, desc, 5, &isnull));
		shards = lappend(shards, s);
	}
	return shards;
}

/*
 * The FROM clause of a shard's statement: its index on the columns
 * (quoted literals, as bf_dist_index_columns names them) as x(ix);
 * nsp is the extension's schema, quoted.
 */
char *
bf_dist_shard_from(const BfShard *s, List *colnames, const char *nsp)
{
	StringInfoData buf;
	ListCell   *lc;

	initStringInfo(&buf);
	appendStringInfo(&buf, "%s.bf_shard_index(%s::pg_catalog.regclass, ARRAY[",
					 nsp, quote_literal_cstr(s->name));
	foreach(lc, colnames)
		appendStringInfo(&buf, "%s%s", foreach_current_index(lc) > 0 ? ", " : "",
						 quote_literal_cstr((char *) lfirst(lc)));
	appendStringInfoString(&buf, "]::pg_catalog.name[]) x(ix)");
	return buf.data;
}

/*
 * Run commands[i] on shard i's placement (shards as bf_dist_shards gave
 * them), all at once; the results, a text each, in the same order.
 * Inside SPI; the results live until bf_dist_spi_end.
 */
char	  **
bf_dist_run(Oid heapoid, List *shards, char **commands)
{
	int			n = list_length(shards);
	Datum	   *nodes = palloc(sizeof(Datum) * n);
	Datum	   *ports = palloc(sizeof(Datum) * n);
	Datum	   *cmds = palloc(sizeof(Datum) * n);
	char	  **results = palloc(sizeof(char *) * n);
	Oid			types[3] = {TEXTARRAYOID, INT4ARRAYOID, TEXTARRAYOID};
	Datum		args[3];
	ListCell   *lc;

	foreach(lc, shards)
	{
		const BfShard *s = lfirst(lc);
		int			i = foreach_current_index(lc);

		nodes[i] = CStringGetTextDatum(s->node);
		ports[i] = Int32GetDatum(s->port);
		cmds[i] = CStringGetTextDatum(commands[i]);
	}
	args[0] = PointerGetDatum(construct_array(nodes, n, TEXTOID, -1, false, TYPALIGN_INT));
	args[1] = PointerGetDatum(construct_array(ports, n, INT4OID, 4, true, TYPALIGN_INT));
	args[2] = PointerGetDatum(construct_array(cmds, n, TEXTOID, -1, false, TYPALIGN_INT));
	if (SPI_execute_with_args("SELECT r.success, r.result "
							  "FROM pg_catalog.master_run_on_worker($1, $2, $3, true) "
							  "WITH ORDINALITY r ORDER BY r.ordinality",
							  3, types, args, NULL, true, 0) != SPI_OK_SELECT ||
		(int) SPI_processed != n)
		elog(ERROR, "could not ask the shards of relation %u", heapoid);
	foreach(lc, shards)
	{
		const BfShard *s = lfirst(lc);
		int			i = foreach_current_index(lc);
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;

		if (!DatumGetBool(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull)))
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_EXCEPTION),
					 errmsg("shard " INT64_FORMAT " of table \"%s\" could not answer",
							s->shardid, get_rel_name(heapoid)),
					 errdetail("The shard's node said: %s",
							   SPI_getvalue(tup, SPI_tuptable->tupdesc, 2))));
		results[i] = SPI_getvalue(tup, SPI_tuptable->tupdesc, 2);
	}
	return results;
}

/*
 * The columns of indexoid (of Citus table heapoid), as the shards' indexes
 * are found by them
 */
List *
bf_dist_index_colnames(Oid heapoid, Oid indexoid)
{
	Relation	index = index_open(indexoid, AccessShareLock);
	List	   *colnames = NIL;

	(void) bf_dist_index_columns(heapoid, index, &colnames, CurrentMemoryContext);
	index_close(index, NoLock);
	return colnames;
}
