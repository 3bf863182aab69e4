/*-------------------------------------------------------------------------
 *
 * bf_track_view.c
 *	  The helpers of the bf_tracked view: the index that serves a column,
 *	  a tracked filter's estimates (the core's, as bf_info's), and the rows
 *	  a table holds now, which a rebuilt filter would hold.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"

#include "bf_relcheck.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "utils/fmgrprotos.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

/*
 * bf_live_rows(tbl): the live rows of a tracked tree (the table, or its
 * partitions: bf_tree_members) by the cumulative statistics (n_live_tup),
 * which follow every committed insert and delete; NULL for a table whose
 * rows live elsewhere (a table of Citus's: its shards on other nodes).
 * The statistics are no secret (pg_stat_all_tables).
 */
PG_FUNCTION_INFO_V1(bf_live_rows);
Datum
bf_live_rows(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	List	   *rels;
	ListCell   *lc;
	int64		rows = 0;

	if (get_rel_relkind(relid) == '\0' || bf_citus_table(relid))
		PG_RETURN_NULL();
	rels = bf_tree_members(relid);
	foreach(lc, rels)
		if (RELKIND_HAS_STORAGE(get_rel_relkind(lfirst_oid(lc))))
			rows += DatumGetInt64(DirectFunctionCall1(pg_stat_get_live_tuples,
													  ObjectIdGetDatum(lfirst_oid(lc))));
	PG_RETURN_INT64(rows);
}

/*
 * bf_track_index(tbl, col): the usable bloomfilter index on the column
 * (NULL if there is none).  Which indexes exist is no secret (pg_index).
 */
PG_FUNCTION_INFO_V1(bf_track_index);
Datum
bf_track_index(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	AttrNumber	attnum;
	char		relkind = get_rel_relkind(relid);
	Oid			idx;

	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		PG_RETURN_NULL();
	attnum = get_attnum(relid, colname);
	if (attnum <= 0)
		PG_RETURN_NULL();
	idx = bf_find_bloom_index(relid, attnum, NULL);
	if (!OidIsValid(idx))
		PG_RETURN_NULL();
	PG_RETURN_OID(idx);
}

/*
 * The estimated cardinality, the fill and the estimated false-positive
 * rate of a tracked filter, as bf_info computes them (a growing filter's
 * summed over its layers), then its bytes and its number of layers if the
 * result has a 4th and a 5th column.
 */
static Datum
stats_row(FunctionCallInfo fcinfo, BfFilter f)
{
	double		nbits = (double) f.hdr.nblocks * BLOOM_BLOCK_BITS;
	uint64		bits_set;
	double		fpr;
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	int			layers = 1;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (f.hdr.family == BF_FAMILY_GROWING)
	{
		BfGrowSummary sum = bf_grow_summary(&f);

		values[0] = Float8GetDatum(sum.cardinality);
		values[1] = Float8GetDatum((double) sum.bits_set / (double) sum.nbits);
		values[2] = Float8GetDatum(sum.fpr);
		layers = bloom_load_u16(BF_PAYLOAD(f.vl) + BLOOM_GROW_NLAYERS_OFFSET);
	}
	else
	{
		fpr = bloom_fill_fpr(BF_BITS(f.vl), f.hdr.nblocks, f.hdr.nhashes, &bits_set);
		values[0] = Float8GetDatum(bloom_estimate_cardinality(bits_set, f.hdr.nblocks,
															  f.hdr.nhashes));
		values[1] = Float8GetDatum((double) bits_set / nbits);
		values[2] = Float8GetDatum(fpr);
	}
	values[3] = Int64GetDatum((int64) VARSIZE_ANY_EXHDR(f.vl));
	values[4] = Int32GetDatum(layers);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/* bf_track_stats(filter): the estimates of a filter value (1.0's helper) */
PG_FUNCTION_INFO_V1(bf_track_stats);
Datum
bf_track_stats(PG_FUNCTION_ARGS)
{
	return stats_row(fcinfo, bf_fetch_any(PG_GETARG_DATUM(0)));
}

/*
 * bf_track_stats(id): the estimates and bytes of the filter of registry
 * row id, whichever way it is stored; NULL for a row that is not there,
 * is tracked by an index, or whose column the user may not read (the
 * same answer, so that nothing is learnt of others' rows).
 */
PG_FUNCTION_INFO_V1(bf_track_stats_of);
Datum
bf_track_stats_of(PG_FUNCTION_ARGS)
{
	const BfExt *ext = bf_ext(fcinfo->flinfo->fn_oid, false);
	RegRow		r;
	AttrNumber	attnum;
	struct varlena *vl;

	if (!bf_registry_fetch(ext, PG_GETARG_INT64(0), InvalidOid, NULL, false, &r) ||
		r.use_index)
		PG_RETURN_NULL();
	attnum = get_attnum(r.tbl, NameStr(r.col));
	if (pg_class_aclcheck(r.tbl, GetUserId(), ACL_SELECT) != ACLCHECK_OK &&
		(attnum <= 0 ||
		 pg_attribute_aclcheck(r.tbl, attnum, GetUserId(), ACL_SELECT) != ACLCHECK_OK))
		PG_RETURN_NULL();
	vl = bf_registry_value(ext, &r, GetActiveSnapshot());
	if (vl == NULL)
		PG_RETURN_NULL();
	return stats_row(fcinfo, bf_fetch_any(PointerGetDatum(vl)));
}
