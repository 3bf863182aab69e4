/*-------------------------------------------------------------------------
 *
 * bf_value_agg_auto.c
 *	  The auto-sized bf_agg(value [, fpr]), which sizes the filter for the
 *	  number of distinct values it saw.
 *
 * The transition state, BfAggHashes, holds the distinct 64-bit hashes
 * (seed 0, the seed of the result) of the values seen, as a sorted
 * deduplicated prefix followed by an unsorted tail that is merged in when
 * the buffer is full.  About 8 bytes per distinct value (at most 16 while
 * the tail fills), capped at BF_AGG_MAX_DISTINCT.  The final function
 * sizes the filter for the number of distinct hashes and adds them.
 *
 * In the 1.2 catalog the state's SQL type is bytea: it is not a filter but
 * a set of hashes, which no user stores, so it gets no type of its own.
 * Between rows it is a read-write expanded object in a child of the
 * aggregate context (see bf_agg_states); its flat form, which parallel workers and
 * Citus's workers send, is the sorted set (BF_HASHES_MAGIC below).  A
 * flat value reaching these functions is validated as the deserialize
 * function of 1.0 validated it, and copied, never modified.  The 1.0 and
 * 1.1 entry points (bf_value_agg_internal.c) keep the same state as
 * `internal`.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_agg.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/guc.h"

/*
 * Most distinct values the auto-sized bf_agg keeps: 2^24, i.e. 128 MiB of
 * hashes, at most 256 MiB with the merge buffer, per process.  The setting
 * bloomfilter.agg_max_distinct can only lower it (less memory per query).
 */
#define BF_AGG_MAX_DISTINCT ((size_t) 1 << 24)
#define BF_AGG_MIN_BUFFER	1024
#define BF_AGG_DEFAULT_FPR	0.01

static int	bf_agg_max_distinct = (int) BF_AGG_MAX_DISTINCT;

void
bf_agg_define_gucs(void)
{
	DefineCustomIntVariable("bloomfilter.agg_max_distinct",
							"Most distinct values bf_agg without a capacity keeps.",
							"It keeps 8 bytes per distinct value to size the filter; "
							"past this many it stops with an error.",
							&bf_agg_max_distinct,
							(int) BF_AGG_MAX_DISTINCT, BF_AGG_MIN_BUFFER,
							(int) BF_AGG_MAX_DISTINCT,
							PGC_USERSET, 0, NULL, NULL, NULL);
}

#define ST_SORT bf_sort_uint64
#define ST_ELEMENT_TYPE uint64
#define ST_COMPARE(a, b) (*(a) < *(b) ? -1 : *(a) > *(b) ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

struct BfAggHashes
{
	double		fpr;
	uint8		family;			/* of the values; 0 until the first one */
	uint8		flags;
	uint32		detail;
	uint64	   *h;
	size_t		nsorted;		/* h[0 .. nsorted) sorted, distinct */
	size_t		nused;			/* h[nsorted .. nused) not yet merged */
	size_t		cap;
	ExpandedObjectHeader *eoh;	/* the expanded object (1.2), or NULL */
};

/* a state as an expanded object: the header first, as expandeddatum.h asks */
typedef struct BfAggHashesObject
{
	ExpandedObjectHeader eoh;
	BfAggHashes st;
} BfAggHashesObject;

static Size hashes_flat_size(ExpandedObjectHeader *eoh);
static void hashes_flatten(ExpandedObjectHeader *eoh, void *result, Size size);

static const ExpandedObjectMethods hashes_methods = {
	hashes_flat_size,
	hashes_flatten
};

static void
too_many_distinct(size_t n)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("bf_agg without a capacity saw more than %zu distinct values",
					(size_t) bf_agg_max_distinct),
			 errdetail("To size the filter for the values it saw, bf_agg keeps 8 bytes per distinct value; it stops at %zu values (%zu seen so far) rather than use more memory.",
					   (size_t) bf_agg_max_distinct, n),
			 errhint("Pass a capacity: bf_agg(col, capacity, fpr), e.g. with capacity = count(DISTINCT col).")));
}

/*
 * A new empty state with room for cap hashes, in cxt: an expanded object
 * (cxt from bf_agg_states), or an `internal` state.
 */
static BfAggHashes *
hashes_make(MemoryContext cxt, double fpr, size_t cap, bool expanded)
{
	BfAggHashes *st;

	if (expanded)
	{
		BfAggHashesObject *obj;

		obj = MemoryContextAllocZero(cxt, sizeof(BfAggHashesObject));
		EOH_init_header(&obj->eoh, &hashes_methods, cxt);
		st = &obj->st;
		st->eoh = &obj->eoh;
	}
	else
		st = MemoryContextAllocZero(cxt, sizeof(BfAggHashes));
	st->fpr = fpr;
	st->cap = Max(cap, BF_AGG_MIN_BUFFER);
	st->h = MemoryContextAllocExtended(cxt, st->cap * sizeof(uint64), MCXT_ALLOC_HUGE);
	return st;
}

/*
 * Sort 64-bit hashes in place: MSD radix sort on one byte at a time
 * (American flag sort), which suits uniformly distributed keys, down to
 * buckets small enough for the comparison sort.
 */
static void
radix_sort_uint64(uint64 *a, size_t n, int shift)
{
	size_t		count[256];
	size_t		next[256];
	size_t		end[256];
	size_t		pos = 0;

	if (n <= 64 || shift < 0)
	{
		bf_sort_uint64(a, n);
		return;
	}
	CHECK_FOR_INTERRUPTS();		/* per bucket of at least 65 keys */
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		count[(a[i] >> shift) & 0xFF]++;
	for (int b = 0; b < 256; b++)
	{
		next[b] = pos;
		pos += count[b];
		end[b] = pos;
	}
	/* move every key to its bucket by following cycles */
	for (int b = 0; b < 256; b++)
	{
		while (next[b] < end[b])
		{
			uint64		v = a[next[b]];
			int			d = (int) ((v >> shift) & 0xFF);

			while (d != b)
			{
				uint64		t = a[next[d]];

				a[next[d]++] = v;
				v = t;
				d = (int) ((v >> shift) & 0xFF);
			}
			a[next[b]++] = v;
		}
	}
	pos = 0;
	for (int b = 0; b < 256; b++)
	{
		radix_sort_uint64(a + pos, count[b], shift - 8);
		pos += count[b];
	}
}

/* sort and deduplicate everything; the set is unchanged */
static void
hashes_compact(BfAggHashes *st)
{
	size_t		out;

	if (st->nused == st->nsorted)
		return;
	radix_sort_uint64(st->h, st->nused, 56);
	out = 0;
	for (size_t i = 0; i < st->nused; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (out == 0 || st->h[i] != st->h[out - 1])
			st->h[out++] = st->h[i];
	}
	st->nsorted = st->nused = out;
	if (out > (size_t) bf_agg_max_distinct)
		too_many_distinct(out);
}

/* make room for `extra` more hashes: merge first, grow if still short */
static void
hashes_reserve(BfAggHashes *st, size_t extra)
{
	size_t		want;

	if (st->cap - st->nused >= extra)
		return;
	hashes_compact(st);
	/* keep the tail at least as long as the sorted part: amortized sorting */
	want = Max(st->nused + extra, 2 * st->nsorted);
	if (want > st->cap)
	{
		want = Max(want, BF_AGG_MIN_BUFFER);
		st->h = repalloc_huge(st->h, want * sizeof(uint64));
		st->cap = want;
	}
}

static void
hashes_check_params(BfAggHashes *a, const BfAggHashes *b)
{
	if (a->fpr != b->fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg fpr must be the same for every row"),
				 errdetail("One part of the input asked for fpr %g, another for %g.",
						   a->fpr, b->fpr)));
	if (a->family == BF_FAMILY_NONE)
	{
		a->family = b->family;
		a->detail = b->detail;
		a->flags = b->flags;
	}
	else if (b->family != BF_FAMILY_NONE &&
			 (a->family != b->family || a->detail != b->detail))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("cannot combine bloomfilters of different element families"),
				 errdetail("The first part holds values of family %s, the second of family %s.",
						   bf_family_text(a->family, a->detail),
						   bf_family_text(b->family, b->detail))));
}

/*
 * One row of bf_agg(value) or bf_agg(value, fpr): NULL values are skipped
 * (the state is made all the same, to check fpr).
 */
BfAggHashes *
bf_aggh_step(FunctionCallInfo fcinfo, BfAggHashes *st, MemoryContext cxt,
			 bool expanded)
{
	double		fpr = BF_AGG_DEFAULT_FPR;
	BfTypeInfo *ti;
	Datum		value;

	if (PG_NARGS() > 2)
	{
		if (PG_ARGISNULL(2))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("bf_agg fpr must not be NULL")));
		fpr = PG_GETARG_FLOAT8(2);
	}
	if (st == NULL)
	{
		bf_check_fpr(fpr);
		st = hashes_make(cxt ? cxt : bf_agg_states(fcinfo), fpr,
						 BF_AGG_MIN_BUFFER, expanded);
	}
	else if (fpr != st->fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg fpr must be the same for every row"),
				 errdetail("The first row asked for fpr %g, a later one for %g.",
						   st->fpr, fpr)));

	if (PG_ARGISNULL(1))
		return st;
	ti = bf_agg_typeinfo(fcinfo);
	value = PG_GETARG_DATUM(1);
	if (st->family == BF_FAMILY_NONE)
	{
		/* take the family (and non-portable flag) as an empty filter would */
		uint8		scratch[BLOOM_HEADER_SIZE];
		BloomHeader hdr;

		if (ti->family == BF_FAMILY_RECORD)
			bf_record_prepare(ti, value);
		bloom_header_init(&hdr, 1, 1, 0, 0, 0.0);
		bf_check_family(&hdr, scratch, ti, true);
		st->family = hdr.family;
		st->detail = hdr.detail;
		st->flags = hdr.flags;
	}
	if (st->nused == st->cap)
		hashes_reserve(st, 1);
	/* seed 0: the seed of the filter the final function builds */
	st->h[st->nused++] = bf_hash_datum(ti, value, 0);
	return st;
}

/*
 * s1 := s1 UNION s2; s2 is only read.  A NULL s1 becomes a copy of s2 (a
 * new state in cxt), a NULL s2 changes nothing.
 */
BfAggHashes *
bf_aggh_merge(BfAggHashes *s1, BfAggHashes *s2, MemoryContext cxt,
			  bool expanded)
{
	if (s2 == NULL)
		return s1;
	if (s1 == NULL)
	{
		s1 = hashes_make(cxt, s2->fpr, 2 * s2->nused, expanded);
		s1->family = s2->family;
		s1->detail = s2->detail;
		s1->flags = s2->flags;
	}
	else
		hashes_check_params(s1, s2);
	hashes_reserve(s1, s2->nused);
	memcpy(s1->h + s1->nused, s2->h, s2->nused * sizeof(uint64));
	s1->nused += s2->nused;
	hashes_compact(s1);
	return s1;
}

/*
 * The filter: sized for the number of distinct hashes.  NULL when there
 * is none (only NULL values): there is no count to size a filter for.
 */
struct varlena *
bf_aggh_result(BfAggHashes *st)
{
	uint64		nblocks;
	int			k;
	struct varlena *vl;
	BloomHeader hdr;
	uint8	   *bits;

	hashes_compact(st);
	if (st->nsorted == 0)
		return NULL;

	bf_size_or_error((int64) st->nsorted, st->fpr, &nblocks, &k);
	vl = bf_new(nblocks, k, 0, (int64) st->nsorted, st->fpr);
	bf_read_header(vl, &hdr);
	hdr.family = st->family;
	hdr.detail = st->detail;
	hdr.flags = st->flags;
	bits = BF_BITS(vl);
	/* sorted hashes visit the blocks in order: sequential memory access */
	for (size_t i = 0; i < st->nsorted; i++)
	{
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (bloom_set_hash(bits, nblocks, k, st->h[i]))
			hdr.inserted++;
	}
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	return vl;
}

/*
 * The flat form of a state (a bytea), little-endian: "BFAH", family u8,
 * flags u8, 2 zero bytes, detail u32, 4 zero bytes, fpr f64, count u64,
 * then count strictly increasing u64 hashes.  Parallel workers send it to
 * the leader and Citus's workers to the coordinator, as the serialized
 * state of 1.0 and 1.1, which had the host's byte order (the same bytes on
 * little-endian hosts).
 */
#define BF_HASHES_MAGIC "BFAH"
#define BF_HASHES_HEADER 32

static Size
hashes_flat_bytes(BfAggHashes *st)
{
	hashes_compact(st);
	return VARHDRSZ + BF_HASHES_HEADER + st->nsorted * sizeof(uint64);
}

static void
hashes_write_flat(BfAggHashes *st, bytea *out)
{
	uint8	   *p = (uint8 *) VARDATA(out);
	uint64		fpr_bits;

	hashes_compact(st);
	SET_VARSIZE(out, VARHDRSZ + BF_HASHES_HEADER + st->nsorted * sizeof(uint64));
	memset(p, 0, BF_HASHES_HEADER);
	memcpy(p, BF_HASHES_MAGIC, 4);
	p[4] = st->family;
	p[5] = st->flags;
	bloom_store_u32(p + 8, st->detail);
	memcpy(&fpr_bits, &st->fpr, 8);
	bloom_store_u64(p + 16, fpr_bits);
	bloom_store_u64(p + 24, (uint64) st->nsorted);
#ifdef BLOOM_LITTLE_ENDIAN
	memcpy(p + BF_HASHES_HEADER, st->h, st->nsorted * sizeof(uint64));
#else
	for (size_t i = 0; i < st->nsorted; i++)
		bloom_store_u64(p + BF_HASHES_HEADER + 8 * i, st->h[i]);
#endif
}

/* the state's flat form, in the current context */
bytea *
bf_aggh_flat(BfAggHashes *st)
{
	bytea	   *out = palloc_extended(hashes_flat_bytes(st), MCXT_ALLOC_HUGE);

	hashes_write_flat(st, out);
	return out;
}

/* expanded-object methods: the flat form above */
static Size
hashes_flat_size(ExpandedObjectHeader *eoh)
{
	return hashes_flat_bytes(&((BfAggHashesObject *) eoh)->st);
}

static void
hashes_flatten(ExpandedObjectHeader *eoh, void *result, Size size)
{
	BfAggHashes *st = &((BfAggHashesObject *) eoh)->st;

	Assert(size == hashes_flat_bytes(st));
	hashes_write_flat(st, (bytea *) result);
}

static void
bad_hashes_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid bloomfilter aggregate state"),
			 errdetail_internal("%s", detail)));
}

/* a new state (in cxt) from a flat form, which is validated */
BfAggHashes *
bf_aggh_from_flat(const bytea *flat, MemoryContext cxt, bool expanded)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(flat);
	size_t		len = VARSIZE_ANY_EXHDR(flat);
	uint64		count;
	uint64		fpr_bits;
	BfAggHashes *st;
	static const uint8 zeros[4] = {0, 0, 0, 0};

	if (len < BF_HASHES_HEADER || memcmp(p, BF_HASHES_MAGIC, 4) != 0)
		bad_hashes_state("The state is shorter than its header or has the wrong magic bytes.");
	if (memcmp(p + 6, zeros, 2) != 0 || memcmp(p + 12, zeros, 4) != 0)
		bad_hashes_state("Reserved bytes of the state are not zero.");
	count = bloom_load_u64(p + 24);
	if (count > BF_AGG_MAX_DISTINCT ||
		len != BF_HASHES_HEADER + count * sizeof(uint64))
		bad_hashes_state("The length of the state disagrees with its count of hashes.");

	st = hashes_make(cxt, 0.0, (size_t) count, expanded);
	st->family = p[4];
	st->flags = p[5];
	st->detail = bloom_load_u32(p + 8);
	fpr_bits = bloom_load_u64(p + 16);
	memcpy(&st->fpr, &fpr_bits, 8);
	if (isnan(st->fpr) || st->fpr <= 0.0 || st->fpr >= 1.0)
		bad_hashes_state("The false-positive rate of the state is not between 0 and 1.");
	/* the family rules of a filter header, which the final function writes */
	if (bloom_family_check(st->family, st->flags, st->detail) != BLOOM_OK ||
		(st->family == BF_FAMILY_NONE && count != 0))
		bad_hashes_state("The element family of the state is invalid.");
#ifdef BLOOM_LITTLE_ENDIAN
	memcpy(st->h, p + BF_HASHES_HEADER, count * sizeof(uint64));
#else
	for (size_t i = 0; i < count; i++)
		st->h[i] = bloom_load_u64(p + BF_HASHES_HEADER + 8 * i);
#endif
	for (size_t i = 1; i < count; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->h[i] <= st->h[i - 1])
			bad_hashes_state("The hashes of the state are not strictly increasing.");
	}
	st->nsorted = st->nused = (size_t) count;
	return st;
}

/* ---- the 1.2 support functions (state type bytea) ---- */

/*
 * The state argument argno, to be modified: NULL, the read-write expanded
 * state itself, or a new expanded state (a flat value validated and
 * copied, a read-only state copied).
 */
static BfAggHashes *
hashes_state_arg(FunctionCallInfo fcinfo, int argno)
{
	ExpandedObjectHeader *eoh;

	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &hashes_methods);
	if (eoh == NULL)
		return bf_aggh_from_flat(PG_GETARG_BYTEA_PP(argno), bf_agg_states(fcinfo), true);
	if (VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(PG_GETARG_DATUM(argno))))
		return &((BfAggHashesObject *) eoh)->st;
	return bf_aggh_merge(NULL, &((BfAggHashesObject *) eoh)->st,
						 bf_agg_states(fcinfo), true);
}

/*
 * The state argument argno, read only; *temp is set when it is a flat
 * value decoded into a temporary state, which the caller frees.
 */
static BfAggHashes *
hashes_read_arg(FunctionCallInfo fcinfo, int argno, BfAggHashes **temp)
{
	ExpandedObjectHeader *eoh;

	*temp = NULL;
	if (PG_ARGISNULL(argno))
		return NULL;
	eoh = bf_agg_object(PG_GETARG_DATUM(argno), &hashes_methods);
	if (eoh != NULL)
		return &((BfAggHashesObject *) eoh)->st;
	*temp = bf_aggh_from_flat(PG_GETARG_BYTEA_PP(argno), CurrentMemoryContext, false);
	return *temp;
}

static void
hashes_free(BfAggHashes *st)
{
	if (st != NULL)
	{
		pfree(st->h);
		pfree(st);
	}
}

/* bf_agg(value) and bf_agg(value, fpr); not STRICT: NULL values skipped */
PG_FUNCTION_INFO_V1(bf_agg_auto_step);
Datum
bf_agg_auto_step(PG_FUNCTION_ARGS)
{
	BfAggHashes *st = hashes_state_arg(fcinfo, 0);

	st = bf_aggh_step(fcinfo, st, NULL, true);
	PG_RETURN_DATUM(EOHPGetRWDatum(st->eoh));
}

/* the combine function; not STRICT: NULL partial states are skipped */
PG_FUNCTION_INFO_V1(bf_agg_auto_merge);
Datum
bf_agg_auto_merge(PG_FUNCTION_ARGS)
{
	BfAggHashes *temp;
	BfAggHashes *s2 = hashes_read_arg(fcinfo, 1, &temp);
	BfAggHashes *s1;

	if (s2 == NULL)
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	s1 = hashes_state_arg(fcinfo, 0);
	s1 = bf_aggh_merge(s1, s2, s1 ? NULL : bf_agg_states(fcinfo), true);
	hashes_free(temp);
	PG_RETURN_DATUM(EOHPGetRWDatum(s1->eoh));
}

/* not STRICT: zero rows (NULL state), or only NULL values, give NULL */
PG_FUNCTION_INFO_V1(bf_agg_auto_finish);
Datum
bf_agg_auto_finish(PG_FUNCTION_ARGS)
{
	BfAggHashes *temp;
	BfAggHashes *st = hashes_read_arg(fcinfo, 0, &temp);
	struct varlena *vl;

	if (st == NULL)
		PG_RETURN_NULL();
	vl = bf_aggh_result(st);
	hashes_free(temp);
	if (vl == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(vl);
}
