/*-------------------------------------------------------------------------
 *
 * bf_index.c
 *	  SQL-callable functions reading a bloomfilter index (bf_am.c):
 *	  bf_index_contains, bf_index_filter and bf_index_info, and the C entry
 *	  point bf_index_might_contain() for callers that probe an index
 *	  directly (tracked filters served by an index).
 *
 * They require SELECT on every column the index reads (key columns and
 * the columns of its expressions and predicate): the filter reveals which
 * keys are present.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_am.h"

#include <math.h>

#include "access/genam.h"
#include "access/relation.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "catalog/pg_inherits.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/bitmapset.h"
#include "optimizer/optimizer.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/*
 * Open a bloomfilter index, locking its table first (the usual order) and
 * then the index, both AccessShareLock until the end of the transaction.
 * Partitioned indexes are accepted when allow_partitioned.
 */
static Relation
bf_index_open(Oid indexoid, bool allow_partitioned)
{
	Oid			heapoid = IndexGetRelation(indexoid, true);
	Relation	index;

	if (!OidIsValid(heapoid))
	{
		char	   *name = get_rel_name(indexoid);

		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("index with OID %u does not exist", indexoid)));
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not an index", name),
				 errhint("Pass a bloomfilter index, e.g. 'users_email_bf'::regclass.")));
	}
	LockRelationOid(heapoid, AccessShareLock);
	index = index_open(indexoid, AccessShareLock);
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		if (!allow_partitioned)
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is a partitioned index", RelationGetRelationName(index)),
					 errdetail("Each partition has a filter of its own, possibly of another size."),
					 errhint("Call the function on the index of each partition.")));
		if (index->rd_rel->relam != get_index_am_oid("bloomfilter", false))
			ereport(ERROR,
					(errcode(ERRCODE_WRONG_OBJECT_TYPE),
					 errmsg("\"%s\" is not a bloomfilter index", RelationGetRelationName(index))));
	}
	else if (!bf_is_bloomfilter_index(index))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a bloomfilter index", RelationGetRelationName(index)),
				 errhint("Create one with CREATE INDEX ... USING bloomfilter (column).")));
	return index;
}

/*
 * SELECT on every column the index reads: its key columns and the columns
 * of its expressions and predicate (a whole-row reference needs SELECT on
 * the table).  Table-level SELECT covers all of them.
 */
void
bf_index_check_access(Relation index)
{
	Oid			heapoid = index->rd_index->indrelid;
	Oid			userid = GetUserId();
	Bitmapset  *cols = NULL;
	List	   *exprs;
	int			x;

	if (pg_class_aclcheck(heapoid, userid, ACL_SELECT) == ACLCHECK_OK)
		return;

	for (int i = 0; i < index->rd_index->indnatts; i++)
	{
		AttrNumber	attnum = index->rd_index->indkey.values[i];

		if (attnum != 0)
			cols = bms_add_member(cols, attnum - FirstLowInvalidHeapAttributeNumber);
	}
	exprs = RelationGetIndexExpressions(index);
	if (exprs)
		pull_varattnos((Node *) exprs, 1, &cols);
	exprs = RelationGetIndexPredicate(index);
	if (exprs)
		pull_varattnos((Node *) exprs, 1, &cols);

	x = -1;
	while ((x = bms_next_member(cols, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;
		AclResult	aclresult;

		if (attnum == InvalidAttrNumber)
			aclresult = ACLCHECK_NO_PRIV;	/* whole row: table-level only */
		else
			aclresult = pg_attribute_aclcheck(heapoid, attnum, userid, ACL_SELECT);
		if (aclresult != ACLCHECK_OK)
		{
			if (attnum == InvalidAttrNumber)
				aclcheck_error(aclresult, OBJECT_TABLE, get_rel_name(heapoid));
			aclcheck_error_col(aclresult, OBJECT_TABLE, get_rel_name(heapoid),
							   get_attname(heapoid, attnum, false));
		}
	}
	bms_free(cols);
}

/* the same for callers holding only the index's OID (bf_might_contain) */
void
bf_index_check_access_oid(Oid indexoid)
{
	Relation	index = bf_index_open(indexoid, true);

	bf_index_check_access(index);
	index_close(index, NoLock);
}

/* a probe value must have the family of the index's key */
static void
bf_check_probe(Relation index, const BfIndexMeta *meta, BfTypeInfo *ti, Datum value)
{
	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
	if (ti->family != meta->family || ti->detail != meta->detail)
	{
		char	   *have = bf_family_text(meta->family, meta->detail);
		char	   *got = bf_family_text(ti->family, ti->detail);

		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("bloomfilter index \"%s\" holds keys of family %s, not %s (type %s)",
						RelationGetRelationName(index), have, got,
						format_type_be(ti->typid)),
				 errdetail("Values of different families hash differently, so the answer would be meaningless."),
				 meta->ncols > 1 ?
				 errhint("Pass ROW(...) with one value per key column, in the index's column order.") :
				 errhint("Cast the value to the indexed column's type.")));
	}
}

/*
 * Buffers last used for the pages of one index, for ReadRecentBuffer:
 * kept per call site; validated by ReadRecentBuffer itself, so a stale
 * entry (another index, a REINDEX) only costs the normal lookup.
 */
typedef struct BfRecent
{
	Oid			indexoid;
	uint32		npages;
	Buffer	   *buffers;
} BfRecent;

static Buffer *
bf_recent_for(BfRecent *recent, Relation index, const BfIndexMeta *meta,
			  MemoryContext mcxt)
{
	uint32		npages = (uint32) bloom_paged_npages(meta->nblocks, BF_BLOCKS_PER_PAGE);

	if (recent == NULL)
		return NULL;
	if (recent->indexoid != RelationGetRelid(index) || recent->npages != npages)
	{
		if (recent->buffers)
			pfree(recent->buffers);
		recent->buffers = MemoryContextAllocZero(mcxt, sizeof(Buffer) * npages);
		recent->npages = npages;
		recent->indexoid = RelationGetRelid(index);
	}
	return recent->buffers;
}

/* one leaf index: check the probe's family, hash, read one page */
static bool
bf_leaf_contains(Relation index, BfTypeInfo *ti, Datum value,
				 BfRecent *recent, MemoryContext mcxt)
{
	BfIndexMeta meta;

	bf_index_meta(index, &meta);
	bf_check_probe(index, &meta, ti, value);
	return bf_index_test_hash(index, &meta, bf_hash_datum(ti, value, meta.seed),
							  bf_recent_for(recent, index, &meta, mcxt));
}

static bool
bf_index_might_contain_internal(Oid indexoid, BfTypeInfo *ti, Datum value,
								BfRecent *recent, MemoryContext mcxt)
{
	Relation	index = bf_index_open(indexoid, true);
	bool		found = false;

	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		List	   *children = find_all_inheritors(indexoid, AccessShareLock, NULL);
		ListCell   *lc;

		foreach(lc, children)
		{
			Relation	child;

			if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_INDEX)
				continue;
			child = index_open(lfirst_oid(lc), NoLock);
			found = bf_is_bloomfilter_index(child) &&
				bf_leaf_contains(child, ti, value, NULL, NULL);
			index_close(child, NoLock);
			if (found)
				break;
		}
		list_free(children);
	}
	else
		found = bf_leaf_contains(index, ti, value, recent, mcxt);
	index_close(index, NoLock);
	return found;
}

/*
 * Might the index (or, for a partitioned index, the index of some
 * partition) contain the key value?  ti describes value's type (a record
 * for a multi-column index) and may be kept by the caller across calls.
 * The caller checks privileges (bf_index_check_access).
 */
bool
bf_index_might_contain(Oid indexoid, BfTypeInfo *ti, Datum value)
{
	return bf_index_might_contain_internal(indexoid, ti, value, NULL, NULL);
}

/* per call site: the probe's type, and whose access was checked for which index */
typedef struct BfIndexCallCache
{
	bool		ti_valid;
	BfTypeInfo	ti;
	Oid			checked_index;
	Oid			checked_user;
	BfRecent	recent;
} BfIndexCallCache;

PG_FUNCTION_INFO_V1(bf_index_contains);

/* bf_index_contains(regclass, anyelement) and (regclass, text) */
Datum
bf_index_contains(PG_FUNCTION_ARGS)
{
	Oid			indexoid = PG_GETARG_OID(0);
	Datum		value = PG_GETARG_DATUM(1);
	BfIndexCallCache *cache = (BfIndexCallCache *) fcinfo->flinfo->fn_extra;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(BfIndexCallCache));
		fcinfo->flinfo->fn_extra = cache;
	}
	if (!cache->ti_valid)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 1);

		if (!OidIsValid(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the type of the value to look up")));
		bf_typeinfo_init(&cache->ti, argtype, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
		cache->ti_valid = true;
	}
	if (cache->checked_index != indexoid || cache->checked_user != GetUserId())
	{
		bf_index_check_access_oid(indexoid);
		cache->checked_index = indexoid;
		cache->checked_user = GetUserId();
	}
	PG_RETURN_BOOL(bf_index_might_contain_internal(indexoid, &cache->ti, value,
												   &cache->recent,
												   fcinfo->flinfo->fn_mcxt));
}

/*
 * Read the whole bit array of a leaf index into dst (nblocks * 64 bytes),
 * one page at a time under its share lock, with a bulk-read strategy so a
 * large filter does not evict shared buffers.
 */
static void
bf_read_bits(Relation index, const BfIndexState *st, uint8 *dst)
{
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	uint64		npages = bloom_paged_npages(st->meta.nblocks, BF_BLOCKS_PER_PAGE);

	for (uint64 p = 0; p < npages; p++)
	{
		uint64		first = p * BF_BLOCKS_PER_PAGE;
		uint64		n = Min((uint64) BF_BLOCKS_PER_PAGE, st->meta.nblocks - first);
		Buffer		buf;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(index, MAIN_FORKNUM, (BlockNumber) (1 + p),
								 RBM_NORMAL, strategy);
		LockBuffer(buf, BUFFER_LOCK_SHARE);
		memcpy(dst + first * BLOOM_BLOCK_BYTES,
			   (const uint8 *) BufferGetPage(buf) + BF_PAGE_BITS_OFFSET,
			   n * BLOOM_BLOCK_BYTES);
		UnlockReleaseBuffer(buf);
	}
	FreeAccessStrategy(strategy);
}

static Relation
bf_index_open_checked(Oid indexoid, BfIndexState *st)
{
	Relation	index = bf_index_open(indexoid, false);

	bf_index_check_access(index);
	bf_index_state(index, st);
	return index;
}

PG_FUNCTION_INFO_V1(bf_index_filter);

/*
 * The index's filter as a bloomfilter value: same bits, parameters and
 * family, so bf_contains on it answers as bf_index_contains.  "inserted"
 * is estimated from the set bits (the index counts no inserts).
 */
Datum
bf_index_filter(PG_FUNCTION_ARGS)
{
	BfIndexState st;
	Relation	index = bf_index_open_checked(PG_GETARG_OID(0), &st);
	struct varlena *vl;
	BloomHeader hdr;

	vl = bf_new(st.meta.nblocks, (int) st.meta.nhashes, st.meta.seed,
				st.meta.capacity, st.meta.fpr);
	bf_read_bits(index, &st, BF_BITS(vl));
	index_close(index, NoLock);

	(void) bloom_header_read(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), &hdr);
	hdr.family = st.meta.family;
	hdr.detail = st.meta.detail;
	hdr.flags = 0;
	/* the index counts no inserts: derive the count as for computed filters */
	hdr.inserted = bloom_estimate_inserted(bloom_popcount(BF_BITS(vl), st.meta.nblocks * BLOOM_BLOCK_BYTES),
										   st.meta.nblocks, (int) st.meta.nhashes);
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	PG_RETURN_POINTER(vl);
}

PG_FUNCTION_INFO_V1(bf_index_info);

/*
 * bf_index_info(regclass) -> (capacity, fpr, estimated_cardinality, fill,
 * estimated_fpr, saturated, nbits, nhashes).  saturated: the estimated
 * false-positive rate exceeds the one the filter was sized for, i.e. it
 * holds more keys than its capacity; REINDEX with a larger capacity.
 */
Datum
bf_index_info(PG_FUNCTION_ARGS)
{
	BfIndexState st;
	Relation	index = bf_index_open_checked(PG_GETARG_OID(0), &st);
	TupleDesc	tupdesc;
	Datum		values[8];
	bool		nulls[8] = {false};
	uint8	   *bits;
	uint64		ones;
	double		nbits = (double) st.meta.nblocks * BLOOM_BLOCK_BITS;
	double		card;
	double		efpr;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	bits = palloc_extended(st.meta.nblocks * BLOOM_BLOCK_BYTES, MCXT_ALLOC_HUGE);
	bf_read_bits(index, &st, bits);
	index_close(index, NoLock);
	/* the same estimates as bf_info of the type (docs/FORMAT.md section 6) */
	efpr = bloom_fill_fpr(bits, st.meta.nblocks, (int) st.meta.nhashes, &ones);
	card = bloom_estimate_cardinality(ones, st.meta.nblocks, (int) st.meta.nhashes);
	pfree(bits);

	values[0] = Int64GetDatum(st.meta.capacity);
	values[1] = Float8GetDatum(st.meta.fpr);
	values[2] = Float8GetDatum(card);	/* Infinity when every bit is set */
	values[3] = Float8GetDatum((double) ones / nbits);
	values[4] = Float8GetDatum(efpr);
	values[5] = BoolGetDatum(efpr > st.meta.fpr);
	values[6] = Int64GetDatum((int64) nbits);
	values[7] = Int32GetDatum((int32) st.meta.nhashes);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
