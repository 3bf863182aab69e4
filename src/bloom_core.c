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

#define XXH_INLINE_ALL
#include <xxhash.h>

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
	}
	return "unknown error";
}

static uint16_t
load_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t
load_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
		(uint32_t) p[3] << 24;
}

static void
store_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static void
store_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
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
 * Decode and check a header against the total length of the value.  Every
 * rule of section 1 of docs/FORMAT.md is checked here, so that nothing
 * downstream can index past the bit array.
 */
BloomError
bloom_header_read(const uint8_t *buf, size_t len, BloomHeader *hdr)
{
	uint64_t	reserved;
	uint64_t	fprbits;
	bool		nonportable;

	if (len < BLOOM_HEADER_SIZE)
		return BLOOM_ERR_TOO_SHORT;
	if (memcmp(buf, BLOOM_MAGIC, 4) != 0)
		return BLOOM_ERR_MAGIC;
	hdr->version = load_u16(buf + 4);
	hdr->layout = buf[6];
	hdr->hashfn = buf[7];
	hdr->family = buf[8];
	hdr->flags = buf[9];
	hdr->nhashes = load_u16(buf + 10);
	hdr->detail = load_u32(buf + 12);
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

	switch (hdr->family)
	{
		case BF_FAMILY_RECORD:
			if (!record_detail_valid(hdr->detail))
				return BLOOM_ERR_DETAIL;
			nonportable = record_has_other(hdr->detail);
			break;
		case BF_FAMILY_OTHER:
			if (hdr->detail == 0)
				return BLOOM_ERR_DETAIL;
			nonportable = true;
			break;
		default:
			if (hdr->detail != 0)
				return BLOOM_ERR_DETAIL;
			nonportable = false;
			break;
	}
	if ((hdr->flags & ~BLOOM_FLAG_NONPORTABLE) != 0 ||
		((hdr->flags & BLOOM_FLAG_NONPORTABLE) != 0) != nonportable)
		return BLOOM_ERR_FLAGS;
	return BLOOM_OK;
}

void
bloom_header_write(uint8_t *buf, const BloomHeader *hdr)
{
	uint64_t	fprbits;

	memcpy(buf, BLOOM_MAGIC, 4);
	store_u16(buf + 4, hdr->version);
	buf[6] = hdr->layout;
	buf[7] = hdr->hashfn;
	buf[8] = hdr->family;
	buf[9] = hdr->flags;
	store_u16(buf + 10, hdr->nhashes);
	store_u32(buf + 12, hdr->detail);
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
bloom_hash_int64(int64_t v, int64_t seed)
{
	uint8_t		buf[8];

	bloom_encode_int64(buf, v);
	return XXH3_64bits_withSeed(buf, 8, (XXH64_hash_t) seed);
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
 * members, each setting k random bits (with repetition) of 512.
 */
double
bloom_model_fpr(double lambda, int k)
{
	double		q = pow(1.0 - 1.0 / BLOOM_BLOCK_BITS, k);
	double		logp = -lambda;	/* log of Poisson(0; lambda) */
	double		qi = 1.0;
	double		sum = 0.0;
	double		imax = lambda + 12.0 * sqrt(lambda) + 30.0;

	for (int i = 0; i <= imax; i++)
	{
		if (i > 0)
		{
			logp += log(lambda) - log((double) i);
			qi *= q;
		}
		sum += exp(logp + k * log1p(-qi));
	}
	return sum;
}

double
bloom_estimate_cardinality(uint64_t popcount, uint64_t nblocks, int k)
{
	double		nbits = (double) nblocks * BLOOM_BLOCK_BITS;
	double		q = 1.0 - pow(1.0 - 1.0 / BLOOM_BLOCK_BITS, k);

	if (nblocks == 0 || k <= 0)
		return 0.0;
	if ((double) popcount >= nbits)
		return -1.0;
	return -log1p(-(double) popcount / nbits) / q * (double) nblocks;
}

/* the model rate at the estimated cardinality; 1 when saturated */
double
bloom_estimate_fpr(uint64_t popcount, uint64_t nblocks, int k)
{
	double		n = bloom_estimate_cardinality(popcount, nblocks, k);

	if (n < 0)
		return 1.0;
	if (n == 0)
		return 0.0;
	return bloom_model_fpr(n / (double) nblocks, k);
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

void
bloom_or(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	for (size_t i = 0; i < nbytes; i++)
		dst[i] |= src[i];
}

void
bloom_and(uint8_t *dst, const uint8_t *src, size_t nbytes)
{
	for (size_t i = 0; i < nbytes; i++)
		dst[i] &= src[i];
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
