/*-------------------------------------------------------------------------
 *
 * bf_value_agg_auto.c
 *	  The auto-sized bf_agg(value [, fpr]), which sizes the filter for the
 *	  number of distinct values it saw, with combine, serialize and
 *	  deserialize functions for parallel plans.
 *
 * The transition state, BfAggHashes (`internal`, in the aggregate memory
 * context), holds the distinct 64-bit hashes (seed 0, the seed of the
 * result) of the values seen, as a sorted deduplicated prefix followed by
 * an unsorted tail that is merged in when the buffer is full.  About 8
 * bytes per distinct value (at most 16 while the tail fills), capped at
 * BF_AGG_MAX_DISTINCT.  The final function sizes the filter for the number
 * of distinct hashes and adds them.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/builtins.h"
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

typedef struct BfAggHashes
{
	double		fpr;
	uint8		family;			/* of the values; 0 until the first one */
	uint8		flags;
	uint32		detail;
	uint64	   *h;
	size_t		nsorted;		/* h[0 .. nsorted) sorted, distinct */
	size_t		nused;			/* h[nsorted .. nused) not yet merged */
	size_t		cap;
} BfAggHashes;

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

static BfAggHashes *
hashes_new(MemoryContext cxt, double fpr, size_t cap)
{
	BfAggHashes *st = MemoryContextAllocZero(cxt, sizeof(BfAggHashes));

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
 * bf_agg(value) and bf_agg(value, fpr).  Not STRICT: the state is
 * internal, NULL values are skipped.
 */
PG_FUNCTION_INFO_V1(bf_agg_auto_trans);
Datum
bf_agg_auto_trans(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_auto_trans");
	BfAggHashes *st = PG_ARGISNULL(0) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(0);
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
		st = hashes_new(aggcxt, fpr, BF_AGG_MIN_BUFFER);
	}
	else if (fpr != st->fpr)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bf_agg fpr must be the same for every row"),
				 errdetail("The first row asked for fpr %g, a later one for %g.",
						   st->fpr, fpr)));

	if (PG_ARGISNULL(1))
		PG_RETURN_POINTER(st);
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
	PG_RETURN_POINTER(st);
}

/* Not STRICT: combine functions of internal states must handle NULL */
PG_FUNCTION_INFO_V1(bf_agg_auto_combine);
Datum
bf_agg_auto_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = bf_agg_context(fcinfo, "bf_agg_auto_combine");
	BfAggHashes *s1 = PG_ARGISNULL(0) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(0);
	BfAggHashes *s2 = PG_ARGISNULL(1) ? NULL : (BfAggHashes *) PG_GETARG_POINTER(1);

	if (s2 == NULL)
	{
		if (s1 == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(s1);
	}
	if (s1 == NULL)
	{
		s1 = hashes_new(aggcxt, s2->fpr, 2 * s2->nused);
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
	PG_RETURN_POINTER(s1);
}

/*
 * Not STRICT: zero rows give NULL.  So do rows that are all NULL: there is
 * no count to size a filter for.
 */
PG_FUNCTION_INFO_V1(bf_agg_auto_final);
Datum
bf_agg_auto_final(PG_FUNCTION_ARGS)
{
	BfAggHashes *st;
	uint64		nblocks;
	int			k;
	struct varlena *vl;
	BloomHeader hdr;
	uint8	   *bits;

	(void) bf_agg_context(fcinfo, "bf_agg_auto_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (BfAggHashes *) PG_GETARG_POINTER(0);
	hashes_compact(st);
	if (st->nsorted == 0)
		PG_RETURN_NULL();

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
	PG_RETURN_POINTER(vl);
}

/*
 * Serialized auto-sized state, host byte order (it never leaves the
 * server): "BFAH", family u8, flags u8, 2 zero bytes, detail u32, 4 zero
 * bytes, fpr f64, count u64, then count strictly increasing u64 hashes.
 */
#define BF_HASHES_MAGIC "BFAH"
#define BF_HASHES_HEADER 32

PG_FUNCTION_INFO_V1(bf_agg_auto_serialize);
Datum
bf_agg_auto_serialize(PG_FUNCTION_ARGS)
{
	BfAggHashes *st;
	size_t		size;
	bytea	   *out;
	char	   *p;
	uint64		count;

	(void) bf_agg_context(fcinfo, "bf_agg_auto_serialize");
	st = (BfAggHashes *) PG_GETARG_POINTER(0);
	hashes_compact(st);
	count = st->nsorted;
	size = BF_HASHES_HEADER + count * sizeof(uint64);
	out = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	SET_VARSIZE(out, VARHDRSZ + size);
	p = VARDATA(out);
	memcpy(p, BF_HASHES_MAGIC, 4);
	p[4] = (char) st->family;
	p[5] = (char) st->flags;
	memcpy(p + 8, &st->detail, 4);
	memcpy(p + 16, &st->fpr, 8);
	memcpy(p + 24, &count, 8);
	memcpy(p + BF_HASHES_HEADER, st->h, count * sizeof(uint64));
	PG_RETURN_BYTEA_P(out);
}

static void
bad_hashes_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("invalid bloomfilter aggregate state"),
			 errdetail_internal("%s", detail)));
}

PG_FUNCTION_INFO_V1(bf_agg_auto_deserialize);
Datum
bf_agg_auto_deserialize(PG_FUNCTION_ARGS)
{
	bytea	   *in;
	const char *p;
	size_t		len;
	uint64		count;
	BfAggHashes *st;
	static const char zeros[4] = {0, 0, 0, 0};

	(void) bf_agg_context(fcinfo, "bf_agg_auto_deserialize");
	in = PG_GETARG_BYTEA_PP(0);
	p = VARDATA_ANY(in);
	len = VARSIZE_ANY_EXHDR(in);
	if (len < BF_HASHES_HEADER || memcmp(p, BF_HASHES_MAGIC, 4) != 0)
		bad_hashes_state("The state is shorter than its header or has the wrong magic bytes.");
	if (memcmp(p + 6, zeros, 2) != 0 || memcmp(p + 12, zeros, 4) != 0)
		bad_hashes_state("Reserved bytes of the state are not zero.");
	memcpy(&count, p + 24, 8);
	if (count > BF_AGG_MAX_DISTINCT ||
		len != BF_HASHES_HEADER + count * sizeof(uint64))
		bad_hashes_state("The length of the state disagrees with its count of hashes.");

	st = hashes_new(CurrentMemoryContext, 0.0, (size_t) count);
	st->family = (uint8) p[4];
	st->flags = (uint8) p[5];
	memcpy(&st->detail, p + 8, 4);
	memcpy(&st->fpr, p + 16, 8);
	if (isnan(st->fpr) || st->fpr <= 0.0 || st->fpr >= 1.0)
		bad_hashes_state("The false-positive rate of the state is not between 0 and 1.");
	/* the family rules of a filter header, which the final function writes */
	if (bloom_family_check(st->family, st->flags, st->detail) != BLOOM_OK ||
		(st->family == BF_FAMILY_NONE && count != 0))
		bad_hashes_state("The element family of the state is invalid.");
	memcpy(st->h, p + BF_HASHES_HEADER, count * sizeof(uint64));
	for (size_t i = 1; i < count; i++)
	{
		if ((i & 0xFFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (st->h[i] <= st->h[i - 1])
			bad_hashes_state("The hashes of the state are not strictly increasing.");
	}
	st->nsorted = st->nused = (size_t) count;
	PG_RETURN_POINTER(st);
}
