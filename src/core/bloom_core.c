/*-------------------------------------------------------------------------
 *
 * bloom_core.c
 *	  Header encoding and validation, hashing, sizing, popcount, set
 *	  algebra and base64 for format version 1.  No PostgreSQL headers:
 *	  this file is the part a client program can reuse.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom_core.h"

#include <math.h>
#include <string.h>


static const char *const family_names[] = {
	"none", "integer", "float", "numeric", "text", "bytea", "uuid",
	"boolean", "date", "timestamp", "timestamptz", "enum", "record", "other"
};

const char *
bloom_family_name(int family)
{
	if (family < 0 || family > BF_FAMILY_MAX)
		return "unknown";
	return family_names[family];
}

int
bloom_family_from_name(const char *name, size_t len)
{
	for (int i = 0; i <= BF_FAMILY_MAX; i++)
	{
		if (strlen(family_names[i]) == len && memcmp(family_names[i], name, len) == 0)
			return i;
	}
	return -1;
}

const char *
bloom_error_message(BloomError err)
{
	switch (err)
	{
		case BLOOM_OK:
			return "no error";
		case BLOOM_ERR_TOO_SHORT:
			return "The value is shorter than the 64-byte header.";
		case BLOOM_ERR_MAGIC:
			return "The value does not start with the bloomfilter magic bytes \"BLMF\".";
		case BLOOM_ERR_VERSION:
			return "The format version is not 1, the only version this release reads.";
		case BLOOM_ERR_LAYOUT:
			return "The layout is unknown; version 1 knows only layout 1 (blocked).";
		case BLOOM_ERR_HASHFN:
			return "The hash function is unknown; version 1 knows only 1 (XXH3-64).";
		case BLOOM_ERR_FAMILY:
			return "The element family is unknown.";
		case BLOOM_ERR_FLAGS:
			return "The flags are inconsistent with the element family or have unknown bits set.";
		case BLOOM_ERR_NHASHES:
			return "The number of hash bits per element is not between 1 and 64.";
		case BLOOM_ERR_NBLOCKS:
			return "The number of blocks is not between 1 and 8388608.";
		case BLOOM_ERR_LENGTH:
			return "The length of the value disagrees with the number of blocks in its header.";
		case BLOOM_ERR_RESERVED:
			return "The reserved header field is not zero.";
		case BLOOM_ERR_CAPACITY:
			return "The capacity is negative.";
		case BLOOM_ERR_FPR:
			return "The target false-positive rate is not in [0, 1).";
		case BLOOM_ERR_EMPTY_INSERTED:
			return "The filter has no element family but counts inserted elements.";
		case BLOOM_ERR_DETAIL:
			return "The family detail field is inconsistent with the element family.";
		case BLOOM_ERR_INSERTED:
			return "The count of inserted elements is 2^63 or more.";
		case BLOOM_ERR_TEXT_PREFIX:
			return "The value does not start with \"bloomfilter:1\".";
		case BLOOM_ERR_TEXT_LAYOUT:
			return "Expected \"layout=blocked\" after the version.";
		case BLOOM_ERR_TEXT_HASH:
			return "Expected \"hash=xxh3_64\" after the layout.";
		case BLOOM_ERR_TEXT_FAMILY:
			return "Expected \"family=\" and a known element family after the hash.";
		case BLOOM_ERR_TEXT_TYPE:
			return "The type named in \"family=other(...)\" does not exist or cannot be the type of a non-portable filter.";
		case BLOOM_ERR_TEXT_NHASHES:
			return "Expected \"nhashes=\" and a number from 1 to 64.";
		case BLOOM_ERR_TEXT_NBITS:
			return "Expected \"nbits=\" and a positive multiple of 512 of at most 4294967296.";
		case BLOOM_ERR_TEXT_SEED:
			return "Expected \"seed=\" and a bigint.";
		case BLOOM_ERR_TEXT_CAPACITY:
			return "Expected \"capacity=\" and a non-negative bigint.";
		case BLOOM_ERR_TEXT_FPR:
			return "Expected \"fpr=\" and a number in [0, 1), written as the shortest text that reads back to it.";
		case BLOOM_ERR_TEXT_INSERTED:
			return "Expected \"inserted=\" and a number from 0 to 9223372036854775807.";
		case BLOOM_ERR_TEXT_BITS:
			return "Expected \"bits=\" and base64 as the last field.";
		case BLOOM_ERR_TEXT_BITS_LENGTH:
			return "The number of base64 characters after \"bits=\" does not match nbits.";
		case BLOOM_ERR_TEXT_BASE64:
			return "The bits are not valid padded base64.";
	}
	return "unknown error";
}

size_t
bloom_total_size(uint64_t nblocks)
{
	return BLOOM_HEADER_SIZE + (size_t) nblocks * BLOOM_BLOCK_BYTES;
}

/* record detail: one 4-bit family per field, packed from the low end */
static bool
record_detail_valid(uint32_t detail)
{
	bool		ended = false;
	int			nfields = 0;

	for (int i = 0; i < BLOOM_MAX_RECORD_FIELDS; i++)
	{
		unsigned	f = (detail >> (4 * i)) & 0xF;

		if (f == 0)
			ended = true;
		else if (ended || f > BF_FAMILY_MAX || f == BF_FAMILY_RECORD)
			return false;
		else
			nfields++;
	}
	return nfields > 0;
}

static bool
record_has_other(uint32_t detail)
{
	for (int i = 0; i < BLOOM_MAX_RECORD_FIELDS; i++)
		if (((detail >> (4 * i)) & 0xF) == BF_FAMILY_OTHER)
			return true;
	return false;
}

/*
 * The element family, flags and family detail of section 1 of
 * docs/FORMAT.md: the family is known, the detail agrees with it (record:
 * valid field nibbles; other: a type OID; otherwise 0), and the
 * non-portable flag is set exactly when hashes depend on PostgreSQL.
 */
BloomError
bloom_family_check(unsigned family, unsigned flags, uint32_t detail)
{
	bool		nonportable;

	if (family > BF_FAMILY_MAX)
		return BLOOM_ERR_FAMILY;
	switch (family)
	{
		case BF_FAMILY_RECORD:
			if (!record_detail_valid(detail))
				return BLOOM_ERR_DETAIL;
			nonportable = record_has_other(detail);
			break;
		case BF_FAMILY_OTHER:
			if (detail == 0)
				return BLOOM_ERR_DETAIL;
			nonportable = true;
			break;
		default:
			if (detail != 0)
				return BLOOM_ERR_DETAIL;
			nonportable = false;
			break;
	}
	if ((flags & ~(unsigned) BLOOM_FLAG_NONPORTABLE) != 0 ||
		((flags & BLOOM_FLAG_NONPORTABLE) != 0) != nonportable)
		return BLOOM_ERR_FLAGS;
	return BLOOM_OK;
}

/*
 * Decode and check a header against the total length of the value.  Every
 * rule of section 1 of docs/FORMAT.md is checked here, so that nothing
 * downstream can index past the bit array; every input path (bytea cast,
 * binary recv, text form, aggregate states) validates through here.
 */
BloomError
bloom_header_read(const uint8_t *buf, size_t len, BloomHeader *hdr)
{
	uint64_t	reserved;
	uint64_t	fprbits;
	BloomError	err;

	if (len < BLOOM_HEADER_SIZE)
		return BLOOM_ERR_TOO_SHORT;
	if (memcmp(buf, BLOOM_MAGIC, 4) != 0)
		return BLOOM_ERR_MAGIC;
	hdr->version = bloom_load_u16(buf + 4);
	hdr->layout = buf[6];
	hdr->hashfn = buf[7];
	hdr->family = buf[8];
	hdr->flags = buf[9];
	hdr->nhashes = bloom_load_u16(buf + 10);
	hdr->detail = bloom_load_u32(buf + 12);
	hdr->seed = (int64_t) bloom_load_u64(buf + 16);
	hdr->nblocks = bloom_load_u64(buf + 24);
	hdr->inserted = bloom_load_u64(buf + 32);
	hdr->capacity = (int64_t) bloom_load_u64(buf + 40);
	fprbits = bloom_load_u64(buf + 48);
	memcpy(&hdr->fpr, &fprbits, sizeof(double));
	reserved = bloom_load_u64(buf + 56);

	if (hdr->version != BLOOM_VERSION)
		return BLOOM_ERR_VERSION;
	if (hdr->layout != BLOOM_LAYOUT_BLOCKED)
		return BLOOM_ERR_LAYOUT;
	if (hdr->hashfn != BLOOM_HASH_XXH3_64)
		return BLOOM_ERR_HASHFN;
	if (hdr->family > BF_FAMILY_MAX)
		return BLOOM_ERR_FAMILY;
	if (hdr->nhashes < 1 || hdr->nhashes > BLOOM_MAX_HASHES)
		return BLOOM_ERR_NHASHES;
	if (hdr->nblocks < 1 || hdr->nblocks > BLOOM_MAX_BLOCKS)
		return BLOOM_ERR_NBLOCKS;
	if (len != bloom_total_size(hdr->nblocks))
		return BLOOM_ERR_LENGTH;
	if (reserved != 0)
		return BLOOM_ERR_RESERVED;
	if (hdr->capacity < 0)
		return BLOOM_ERR_CAPACITY;
	if (!(hdr->fpr >= 0.0 && hdr->fpr < 1.0))
		return BLOOM_ERR_FPR;
	if (hdr->family == BF_FAMILY_NONE && hdr->inserted != 0)
		return BLOOM_ERR_EMPTY_INSERTED;
	/* adds count one by one and estimates stay far below: only forgeries */
	if (hdr->inserted > BLOOM_MAX_INSERTED)
		return BLOOM_ERR_INSERTED;
	err = bloom_family_check(hdr->family, hdr->flags, hdr->detail);
	return err;
}

void
bloom_header_write(uint8_t *buf, const BloomHeader *hdr)
{
	uint64_t	fprbits;

	memcpy(buf, BLOOM_MAGIC, 4);
	bloom_store_u16(buf + 4, hdr->version);
	buf[6] = hdr->layout;
	buf[7] = hdr->hashfn;
	buf[8] = hdr->family;
	buf[9] = hdr->flags;
	bloom_store_u16(buf + 10, hdr->nhashes);
	bloom_store_u32(buf + 12, hdr->detail);
	bloom_store_u64(buf + 16, (uint64_t) hdr->seed);
	bloom_store_u64(buf + 24, hdr->nblocks);
	bloom_store_u64(buf + 32, hdr->inserted);
	bloom_store_u64(buf + 40, (uint64_t) hdr->capacity);
	memcpy(&fprbits, &hdr->fpr, sizeof(double));
	bloom_store_u64(buf + 48, fprbits);
	bloom_store_u64(buf + 56, 0);
}

void
bloom_header_init(BloomHeader *hdr, uint64_t nblocks, int nhashes,
				  int64_t seed, int64_t capacity, double fpr)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = BLOOM_VERSION;
	hdr->layout = BLOOM_LAYOUT_BLOCKED;
	hdr->hashfn = BLOOM_HASH_XXH3_64;
	hdr->family = BF_FAMILY_NONE;
	hdr->nhashes = (uint16_t) nhashes;
	hdr->seed = seed;
	hdr->nblocks = nblocks;
	hdr->capacity = capacity;
	hdr->fpr = fpr;
}

/* ---- hashing ---- */

uint64_t
bloom_hash_bytes(const void *data, size_t len, int64_t seed)
{
	return XXH3_64bits_withSeed(data, len, (XXH64_hash_t) seed);
}

void
bloom_encode_int64(uint8_t out[8], int64_t v)
{
	bloom_store_u64(out, (uint64_t) v);
}

void
bloom_encode_float8(uint8_t out[8], double v)
{
	uint64_t	bits;

	if (isnan(v))
		bits = UINT64_C(0x7FF8000000000000);
	else
	{
		if (v == 0.0)
			v = 0.0;			/* -0.0 compares equal to 0.0: same bytes */
		memcpy(&bits, &v, sizeof(bits));
	}
	bloom_store_u64(out, bits);
}

uint64_t
bloom_hash_float8(double v, int64_t seed)
{
	uint8_t		buf[8];

	bloom_encode_float8(buf, v);
	return XXH3_64bits_withSeed(buf, 8, (XXH64_hash_t) seed);
}

/* ---- sizing ---- */

/*
 * False-positive rate of a blocked filter whose blocks hold Poisson(lambda)
 * members, each setting k random bits (with repetition) of B = 512.
 *
 * A non-member in a block whose members set X distinct bits passes with
 * probability (X/B)^k, so the rate for i members is E[(X/B)^k] with X the
 * occupancy after m = k*i draws.  Raising the expected fill to the k-th
 * power, as the textbook formula does, misses the variance of X and
 * underestimates the rate by 1-2 %; the second-order term below adds it
 * (exact to about 1e-5 relative against the full occupancy distribution).
 */
double
bloom_model_fpr(double lambda, int k)
{
	const double B = BLOOM_BLOCK_BITS;
	double		q1 = pow(1.0 - 1.0 / B, k);	/* (1-1/B)^k */
	double		q2 = pow(1.0 - 2.0 / B, k);	/* (1-2/B)^k */
	double		q1i = 1.0,
				q2i = 1.0;
	double		logp = -lambda;	/* log of Poisson(0; lambda) */
	double		sum = 0.0;
	double		imax = lambda + 12.0 * sqrt(lambda) + 30.0;

	for (int i = 0; i <= imax; i++)
	{
		double		p,
					var,
					f;

		if (i > 0)
		{
			logp += log(lambda) - log((double) i);
			q1i *= q1;
			q2i *= q2;
		}
		p = 1.0 - q1i;			/* expected fill of the block */
		var = B * (B - 1.0) * q2i + B * q1i - B * B * q1i * q1i;	/* Var(X) */
		if (var < 0.0)
			var = 0.0;			/* rounding when the block is all but full */
		f = pow(p, k);
		if (k >= 2)
			f += 0.5 * k * (k - 1.0) * pow(p, k - 2) * var / (B * B);
		sum += exp(logp) * f;
	}
	return sum;
}

/* largest lambda with bloom_model_fpr(lambda, k) <= p, by bisection */
static double
max_lambda(double p, int k)
{
	double		lo = 1e-12,
				hi = 4096.0;

	if (bloom_model_fpr(lo, k) > p)
		return 0.0;
	for (int i = 0; i < 60; i++)
	{
		double		mid = sqrt(lo * hi);	/* bisect in log space */

		if (bloom_model_fpr(mid, k) <= p)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Smallest (nblocks, k) whose model rate at `capacity` members is <= fpr.
 * Returns false when no size up to a comfortable 2^62 blocks achieves it
 * (the caller then reports the request as too large).  The lambda table
 * depends only on fpr, so it is kept for the last fpr asked.
 */
bool
bloom_size_for(double capacity, double fpr, uint64_t *nblocks, int *nhashes)
{
	static double cached_fpr = -1.0;
	static double lambdas[BLOOM_MAX_HASHES + 1];
	double		best = -1.0;
	int			bestk = 0;

	if (fpr != cached_fpr)
	{
		int			worse = 0;
		double		prev = 0.0;

		for (int k = 1; k <= BLOOM_MAX_HASHES; k++)
		{
			/* past the optimum lambda_k only falls: stop after a few */
			if (worse >= 3)
			{
				lambdas[k] = 0.0;
				continue;
			}
			lambdas[k] = max_lambda(fpr, k);
			if (lambdas[k] < prev)
				worse++;
			else
				worse = 0;
			if (lambdas[k] > prev)
				prev = lambdas[k];
		}
		cached_fpr = fpr;
	}

	for (int k = 1; k <= BLOOM_MAX_HASHES; k++)
	{
		double		nb;

		if (lambdas[k] <= 0.0)
			continue;
		nb = ceil(capacity / lambdas[k]);
		if (nb < 1.0)
			nb = 1.0;
		if (best < 0.0 || nb < best)
		{
			best = nb;
			bestk = k;
		}
	}
	if (best < 0.0 || best > 4.6e18)
		return false;
	*nblocks = (uint64_t) best;
	*nhashes = bestk;
	return true;
}

/* ---- whole-array operations ---- */

uint64_t
bloom_popcount(const uint8_t *bits, size_t nbytes)
{
	uint64_t	count = 0;
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	w;

		memcpy(&w, bits + i, 8);
		count += (uint64_t) __builtin_popcountll(w);
	}
	for (; i < nbytes; i++)
		count += (uint64_t) __builtin_popcount(bits[i]);
	return count;
}

/* word at a time: filters are whole 64-byte blocks, so nbytes % 8 == 0 */
void
bloom_or(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	a,
					b;

		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a |= b;
		memcpy(dst + i, &a, 8);
	}
	for (; i < nbytes; i++)
		dst[i] |= src[i];
}

void
bloom_and(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	size_t		i = 0;

	for (; i + 8 <= nbytes; i += 8)
	{
		uint64_t	a,
					b;

		memcpy(&a, dst + i, 8);
		memcpy(&b, src + i, 8);
		a &= b;
		memcpy(dst + i, &a, 8);
	}
	for (; i < nbytes; i++)
		dst[i] &= src[i];
}

/* ---- estimates from the fill (docs/FORMAT.md section 6) ---- */

/*
 * Probability that one element sets a given bit of the filter: it lands in
 * the bit's block with probability 1/nblocks and then misses the bit with
 * probability (1 - 1/512)^k, so it hits it with (1 - (1 - 1/512)^k) / nblocks.
 */
static double
bit_hit_probability(uint64_t nblocks, int k)
{
	double		hit_in_block = -expm1((double) k * log1p(-1.0 / BLOOM_BLOCK_BITS));

	return hit_in_block / (double) nblocks;
}

/*
 * Invert E[bits set] = m (1 - (1 - p)^n), p = bit_hit_probability: the
 * exact expectation for n distinct elements in the blocked layout.
 */
double
bloom_estimate_cardinality(uint64_t bits_set, uint64_t nblocks, int k)
{
	double		m = (double) nblocks * BLOOM_BLOCK_BITS;

	if (bits_set == 0)
		return 0.0;
	if ((double) bits_set >= m)
		return INFINITY;
	return log1p(-(double) bits_set / m) / log1p(-bit_hit_probability(nblocks, k));
}

/*
 * The estimate as a count for the "inserted" header field of computed
 * filters: rounded, and finite even when every bit is set (then it is the
 * estimate for all bits but half of one set, the largest count the fill
 * can still tell apart).
 */
uint64_t
bloom_estimate_inserted(uint64_t bits_set, uint64_t nblocks, int k)
{
	double		m = (double) nblocks * BLOOM_BLOCK_BITS;
	double		x = (double) bits_set;
	double		n;

	if (bits_set == 0)
		return 0;
	if (x > m - 0.5)
		x = m - 0.5;
	n = log1p(-x / m) / log1p(-bit_hit_probability(nblocks, k));
	return (uint64_t) llround(n);
}

/*
 * False-positive rate of the filter as it is: a non-member picks a block
 * uniformly and k positions in it independently, so with c_b bits set in
 * block b it passes with probability (c_b / 512)^k.  The rate is the mean
 * of that over the blocks.  Also returns the total number of bits set.
 */
double
bloom_fill_fpr(const uint8_t *bits, uint64_t nblocks, int k, uint64_t *bits_set)
{
	double		pw[BLOOM_BLOCK_BITS + 1];
	double		sum = 0.0;
	uint64_t	total = 0;

	for (int c = 0; c <= BLOOM_BLOCK_BITS; c++)
		pw[c] = pow((double) c / BLOOM_BLOCK_BITS, k);
	for (uint64_t b = 0; b < nblocks; b++)
	{
		uint64_t	c = bloom_popcount(bits + b * BLOOM_BLOCK_BYTES, BLOOM_BLOCK_BYTES);

		total += c;
		sum += pw[c];
	}
	if (bits_set)
		*bits_set = total;
	return sum / (double) nblocks;
}

/* ---- compatibility for set algebra ---- */

BloomDiff
bloom_compare_params(const BloomHeader *a, const BloomHeader *b)
{
	if (a->nblocks != b->nblocks)
		return BLOOM_DIFF_NBLOCKS;
	if (a->nhashes != b->nhashes)
		return BLOOM_DIFF_NHASHES;
	if (a->seed != b->seed)
		return BLOOM_DIFF_SEED;
	if (a->layout != b->layout)
		return BLOOM_DIFF_LAYOUT;
	if (a->hashfn != b->hashfn)
		return BLOOM_DIFF_HASHFN;
	if (a->version != b->version)
		return BLOOM_DIFF_VERSION;
	/* an empty filter (family 0) takes any family */
	if (a->family != BF_FAMILY_NONE && b->family != BF_FAMILY_NONE &&
		(a->family != b->family || a->detail != b->detail))
		return BLOOM_DIFF_FAMILY;
	return BLOOM_SAME;
}

/* after a compatible combine: an empty dst takes src's family */
void
bloom_adopt_family(BloomHeader *dst, const BloomHeader *src)
{
	if (dst->family == BF_FAMILY_NONE && src->family != BF_FAMILY_NONE)
	{
		dst->family = src->family;
		dst->detail = src->detail;
		dst->flags = src->flags;
	}
}

/* ---- base64 ---- */

static const char b64chars[] =
"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
bloom_base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

size_t
bloom_base64_encode(const uint8_t *src, size_t n, char *dst)
{
	char	   *p = dst;
	size_t		i = 0;

	for (; i + 3 <= n; i += 3)
	{
		uint32_t	v = (uint32_t) src[i] << 16 | (uint32_t) src[i + 1] << 8 | src[i + 2];

		*p++ = b64chars[(v >> 18) & 63];
		*p++ = b64chars[(v >> 12) & 63];
		*p++ = b64chars[(v >> 6) & 63];
		*p++ = b64chars[v & 63];
	}
	if (i < n)
	{
		uint32_t	v = (uint32_t) src[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t) src[i + 1] << 8;
		*p++ = b64chars[(v >> 18) & 63];
		*p++ = b64chars[(v >> 12) & 63];
		*p++ = (i + 1 < n) ? b64chars[(v >> 6) & 63] : '=';
		*p++ = '=';
	}
	return (size_t) (p - dst);
}

static int
b64value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decode exactly dstlen bytes from canonical padded base64; anything else
 * (wrong length, stray characters, non-zero pad bits) is rejected.
 */
bool
bloom_base64_decode(const char *src, size_t srclen, uint8_t *dst, size_t dstlen)
{
	size_t		o = 0;

	if (srclen != bloom_base64_encoded_len(dstlen))
		return false;
	for (size_t i = 0; i < srclen; i += 4)
	{
		int			v[4];
		int			npad = 0;
		uint32_t	w;

		for (int j = 0; j < 4; j++)
		{
			if (src[i + j] == '=' && i + 4 == srclen && j >= 2)
			{
				v[j] = 0;
				npad++;
			}
			else
			{
				if (npad > 0)
					return false;
				v[j] = b64value(src[i + j]);
				if (v[j] < 0)
					return false;
			}
		}
		w = (uint32_t) v[0] << 18 | (uint32_t) v[1] << 12 | (uint32_t) v[2] << 6 | (uint32_t) v[3];
		if (o + 3 - (size_t) npad > dstlen)
			return false;
		dst[o++] = (uint8_t) (w >> 16);
		if (npad < 2)
			dst[o++] = (uint8_t) (w >> 8);
		else if ((w & 0xFFFF) != 0)
			return false;
		if (npad < 1)
			dst[o++] = (uint8_t) w;
		else if ((w & 0xFF) != 0)
			return false;
	}
	return o == dstlen;
}
