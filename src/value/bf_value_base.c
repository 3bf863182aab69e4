/*-------------------------------------------------------------------------
 *
 * bf_value_base.c
 *	  The base of the bloomfilter type's C code: reading and validating a
 *	  value of either form (plain, or growing: docs/FORMAT.md section 9),
 *	  making a new plain value, sizing for a capacity and rate with its
 *	  errors, and the per-call-site lookup of how to hash an argument.
 *	  Everything else of the type builds on this file.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "utils/lsyscache.h"

/* ---- reading and validating ---- */

/*
 * Error out, naming the first differing parameter, unless the two filters
 * can be combined bit by bit.
 */
void
bf_check_compatible(const BloomHeader *a, const BloomHeader *b)
{
	const char *field;
	unsigned long long va,
				vb;

	switch (bloom_compare_params(a, b))
	{
		case BLOOM_SAME:
			return;
		case BLOOM_DIFF_NBLOCKS:
			field = "nbits";
			va = a->nblocks * BLOOM_BLOCK_BITS;
			vb = b->nblocks * BLOOM_BLOCK_BITS;
			break;
		case BLOOM_DIFF_NHASHES:
			field = "nhashes";
			va = a->nhashes;
			vb = b->nhashes;
			break;
		case BLOOM_DIFF_SEED:
			/* seeds are signed bigints in SQL */
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("cannot combine bloomfilters with different parameters"),
					 errdetail("The first filter has seed " INT64_FORMAT ", the second has seed " INT64_FORMAT ".",
							   a->seed, b->seed),
					 errhint("Only filters with the same nbits, nhashes and seed can be combined; build them with the same bf_create arguments.")));
			return;
		case BLOOM_DIFF_LAYOUT:
			field = "layout";
			va = a->layout;
			vb = b->layout;
			break;
		case BLOOM_DIFF_HASHFN:
			field = "hash function";
			va = a->hashfn;
			vb = b->hashfn;
			break;
		case BLOOM_DIFF_VERSION:
			field = "format version";
			va = a->version;
			vb = b->version;
			break;
		case BLOOM_DIFF_FAMILY:
		default:
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("cannot combine bloomfilters of different element families"),
					 errdetail("The first filter holds values of family %s, the second of family %s.",
							   bf_family_text(a->family, a->detail),
							   bf_family_text(b->family, b->detail)),
					 errhint("Values of different families hash differently, so the combined filter would give false negatives.")));
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("cannot combine bloomfilters with different parameters"),
			 errdetail("The first filter has %s %llu, the second has %s %llu.",
					   field, va, field, vb),
			 errhint("Only filters with the same nbits, nhashes and seed can be combined; build them with the same bf_create arguments.")));
}

/* the error of a value that fails validation */
void
bf_report_error(BloomError err, int sqlstate)
{
	ereport(ERROR,
			(errcode(sqlstate),
			 errmsg("invalid bloomfilter value"),
			 errdetail_internal("%s", bloom_error_message(err))));
}

/* validate the bytes of a growing value, erroring out with sqlstate */
void
bf_grow_check(const uint8 *data, size_t len, BloomGrowHeader *gh, int sqlstate)
{
	BloomError	layer_err = BLOOM_OK;
	BloomGrowError err = bloom_grow_read(data, len, gh, &layer_err);

	if (err == BLOOM_GROW_ERR_LAYER)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloomfilter value"),
				 errdetail_internal("%s %s", bloom_grow_error_message(err),
									bloom_error_message(layer_err))));
	if (err != BLOOM_GROW_OK)
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloomfilter value"),
				 errdetail_internal("%s", bloom_grow_error_message(err))));
}

/* the error of every function that takes only a plain filter */
void
bf_grow_refuse(const uint8 *payload)
{
	if (memcmp(payload, BLOOM_UNION_MAGIC, 4) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("this function does not take a union of bloomfilters"),
				 errdetail("The filter is a union of filters of their own sizes (docs/FORMAT.md section 10), such as the filter of a table's shards."),
				 errhint("A union can be tested, compared, printed and inspected (bf_info, bf_layers, bf_cardinality, bf_fpr); it cannot be added to or combined.")));
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("this function does not take a growing bloomfilter"),
			 errdetail("The filter was made by bf_create_growing and holds layers of different sizes."),
			 errhint("Growing filters can be added to, tested, cleared, compared, printed and inspected (bf_info, bf_layers, bf_cardinality, bf_fpr, bf_saturated); combining them is not supported.")));
}

/* validate the header of a detoasted plain filter */
void
bf_read_header(struct varlena *vl, BloomHeader *hdr)
{
	BloomError	err = bloom_header_read(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), hdr);

	if (err != BLOOM_OK)
	{
		if (bloom_is_layered(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
			bf_grow_refuse(BF_PAYLOAD(vl));
		bf_report_error(err, ERRCODE_DATA_CORRUPTED);
	}
}

/*
 * Validate a detoasted filter of any form.  A layered filter's (growing or
 * union) hdr is its first layer's with family BF_FAMILY_GROWING.
 */
void
bf_read_any_header(struct varlena *vl, BloomHeader *hdr)
{
	if (bloom_is_layered(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
	{
		BloomGrowHeader gh;

		bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
		*hdr = gh.first;
		hdr->family = BF_FAMILY_GROWING;
		return;
	}
	bf_read_header(vl, hdr);
}

/* a filter argument of either form, detoasted (not copied) and validated */
BfFilter
bf_fetch_any(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM(d);
	bf_read_any_header(f.vl, &f.hdr);
	return f;
}

/* a plain filter argument, detoasted and validated (a growing one is refused) */
BfFilter
bf_fetch(Datum d)
{
	BfFilter	f;

	f.vl = PG_DETOAST_DATUM(d);
	bf_read_header(f.vl, &f.hdr);
	return f;
}

/* ---- sizing and making ---- */

static void
too_large(double bytes, const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bloomfilter too large"),
			 errdetail("%s needs %.0f bytes of bits; the largest bloomfilter has %llu bytes of bits (%llu bits).",
					   what, bytes,
					   (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BYTES),
					   (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BITS)),
			 errhint("Ask for a larger false-positive rate or a smaller capacity, or split the keys over several filters.")));
}

/* a false-positive rate must be in (0, 1) */
void
bf_check_fpr(double fpr)
{
	if (isnan(fpr) || fpr <= 0.0 || fpr >= 1.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter false-positive rate must be between 0 and 1"),
				 errdetail("The rate given was %g.", fpr),
				 errhint("Give a rate such as 0.01 for 1 %%.")));
}

static void
check_capacity_fpr(int64 capacity, double fpr)
{
	if (capacity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter capacity must be positive"),
				 errdetail("The capacity given was " INT64_FORMAT ".", capacity)));
	bf_check_fpr(fpr);
}

/* size for (capacity, fpr), erroring out when it cannot be built */
void
bf_size_or_error(int64 capacity, double fpr, uint64 *nblocks, int *nhashes)
{
	bool		ok;

	check_capacity_fpr(capacity, fpr);
	ok = bloom_size_for((double) capacity, fpr, nblocks, nhashes);
	if (!ok || *nblocks > BLOOM_MAX_BLOCKS)
	{
		char		what[128];

		snprintf(what, sizeof(what),
				 "A filter for " INT64_FORMAT " elements at a false-positive rate of %g",
				 capacity, fpr);
		/* !ok: even 2^62 blocks would not do */
		too_large(ok ? (double) *nblocks * BLOOM_BLOCK_BYTES : 0x1p68, what);
	}
}

/* the number of blocks of a filter of nbits bits and nhashes, or an error */
uint64
bf_blocks_or_error(int64 nbits, int32 nhashes)
{
	uint64		nblocks;

	if (nbits <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter size must be positive"),
				 errdetail("The number of bits given was " INT64_FORMAT ".", nbits)));
	if (nhashes < 1 || nhashes > BLOOM_MAX_HASHES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bloomfilter nhashes must be between 1 and %d", BLOOM_MAX_HASHES),
				 errdetail("The number given was %d.", nhashes)));
	nblocks = ((uint64) nbits + BLOOM_BLOCK_BITS - 1) / BLOOM_BLOCK_BITS;
	if (nblocks > BLOOM_MAX_BLOCKS)
	{
		char		what[96];

		snprintf(what, sizeof(what), "A filter of " INT64_FORMAT " bits", nbits);
		too_large((double) nblocks * BLOOM_BLOCK_BYTES, what);
	}
	return nblocks;
}

/* an empty plain filter for capacity elements at rate fpr */
struct varlena *
bf_new_for(int64 capacity, double fpr, int64 seed)
{
	uint64		nblocks;
	int			nhashes;

	bf_size_or_error(capacity, fpr, &nblocks, &nhashes);
	return bf_new(nblocks, nhashes, seed, capacity, fpr);
}

/* an empty plain filter of nblocks blocks */
struct varlena *
bf_new(uint64 nblocks, int nhashes, int64 seed, int64 capacity, double fpr)
{
	size_t		size = BF_DATUM_SIZE(nblocks);
	struct varlena *vl = palloc_extended(size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	BloomHeader hdr;

	SET_VARSIZE(vl, size);
	bloom_header_init(&hdr, nblocks, nhashes, seed, capacity, fpr);
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	return vl;
}

/* write the header's "inserted" count back into the value */
void
bf_store_inserted(BfFilter *f)
{
	bloom_store_u64(BF_PAYLOAD(f->vl) + BLOOM_INSERTED_OFFSET, f->hdr.inserted);
}

/* ---- hashing an argument ---- */

/*
 * The type function fn_oid declares for argument argno, unless it is
 * polymorphic (InvalidOid then): what a caller that passes no expression
 * (fn_expr), such as Citus's worker-side aggregate wrapper calling a
 * transition function, still lets a function know.
 */
static Oid
declared_argtype(Oid fn_oid, int argno)
{
	Oid		   *types;
	int			nargs;
	Oid			type = InvalidOid;

	if (!OidIsValid(fn_oid))
		return InvalidOid;
	(void) get_func_signature(fn_oid, &types, &nargs);
	if (argno < nargs && !IsPolymorphicType(types[argno]))
		type = types[argno];
	pfree(types);
	return type;
}

/*
 * The type info for argument argno of this call site (for arrays, of their
 * elements), built on first use.  A call site's argument type and collation
 * never change, so later calls return at once.
 */
BfTypeInfo *
bf_typecache_lookup(BfTypeCache *tc, FunctionCallInfo fcinfo, int argno, bool element)
{
	Oid			argtype;
	Oid			typid;

	if (likely(tc->valid))
		return &tc->ti;

	argtype = get_fn_expr_argtype(fcinfo->flinfo, argno);
	if (!OidIsValid(argtype))
		argtype = declared_argtype(fcinfo->flinfo->fn_oid, argno);
	if (!OidIsValid(argtype))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not determine the type of the value to hash")));
	typid = argtype;
	if (element)
	{
		typid = get_element_type(getBaseType(argtype));
		if (!OidIsValid(typid))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("argument is not an array")));
	}
	bf_typeinfo_init(&tc->ti, typid, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
	tc->argtype = argtype;
	tc->collation = PG_GET_COLLATION();
	tc->valid = true;
	return &tc->ti;
}
