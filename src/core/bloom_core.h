/*-------------------------------------------------------------------------
 *
 * bloom_core.h
 *	  The Bloom-filter algorithm of the bloomfilter extension, free of any
 *	  PostgreSQL header: format version 1 (docs/FORMAT.md), blocked layout,
 *	  XXH3-64 hashing of canonical bytes, sizing, set algebra, validation.
 *
 * A filter is one contiguous byte buffer: a 64-byte little-endian header
 * followed by 64 * nblocks bytes of bits.  The same bytes are the varlena
 * payload inside PostgreSQL and the portable binary form outside it, so
 * this file can be compiled into a client program unchanged.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_CORE_H
#define BLOOM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* XXH3 is inlined into every user: integer keys are the hot path */
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

#define BLOOM_MAGIC			"BLMF"
#define BLOOM_VERSION		1
#define BLOOM_LAYOUT_BLOCKED 1
#define BLOOM_HASH_XXH3_64	1

#define BLOOM_HEADER_SIZE	64
#define BLOOM_BLOCK_BITS	512
#define BLOOM_BLOCK_BYTES	64
#define BLOOM_MAX_HASHES	64
/* 2^23 blocks = 2^32 bits = 512 MiB: the text form still fits in 1 GB */
#define BLOOM_MAX_BLOCKS	((uint64_t) 1 << 23)
/* "inserted" is a bigint in SQL (bf_info): larger counts are invalid */
#define BLOOM_MAX_INSERTED	((uint64_t) INT64_MAX)
/* one more value added: the count stops at the largest valid one */
#define BLOOM_COUNT_INSERT(hdr) \
	((hdr)->inserted += ((hdr)->inserted < BLOOM_MAX_INSERTED))

#define BLOOM_FLAG_NONPORTABLE 0x01

/* element families (docs/FORMAT.md section 3) */
typedef enum BloomFamily
{
	BF_FAMILY_NONE = 0,
	BF_FAMILY_INTEGER = 1,
	BF_FAMILY_FLOAT = 2,
	BF_FAMILY_NUMERIC = 3,
	BF_FAMILY_TEXT = 4,
	BF_FAMILY_BYTEA = 5,
	BF_FAMILY_UUID = 6,
	BF_FAMILY_BOOL = 7,
	BF_FAMILY_DATE = 8,
	BF_FAMILY_TIMESTAMP = 9,
	BF_FAMILY_TIMESTAMPTZ = 10,
	BF_FAMILY_ENUM = 11,
	BF_FAMILY_RECORD = 12,
	BF_FAMILY_OTHER = 13
} BloomFamily;

#define BF_FAMILY_MAX		13
#define BLOOM_MAX_RECORD_FIELDS 8

/* decoded header, host byte order */
typedef struct BloomHeader
{
	uint16_t	version;
	uint8_t		layout;
	uint8_t		hashfn;
	uint8_t		family;
	uint8_t		flags;
	uint16_t	nhashes;
	uint32_t	detail;
	int64_t		seed;
	uint64_t	nblocks;
	uint64_t	inserted;
	int64_t		capacity;
	double		fpr;
} BloomHeader;

/* result of validation and sizing; bloom_error_message() describes each */
typedef enum BloomError
{
	BLOOM_OK = 0,
	BLOOM_ERR_TOO_SHORT,
	BLOOM_ERR_MAGIC,
	BLOOM_ERR_VERSION,
	BLOOM_ERR_LAYOUT,
	BLOOM_ERR_HASHFN,
	BLOOM_ERR_FAMILY,
	BLOOM_ERR_FLAGS,
	BLOOM_ERR_NHASHES,
	BLOOM_ERR_NBLOCKS,
	BLOOM_ERR_LENGTH,
	BLOOM_ERR_RESERVED,
	BLOOM_ERR_CAPACITY,
	BLOOM_ERR_FPR,
	BLOOM_ERR_EMPTY_INSERTED,
	BLOOM_ERR_DETAIL,
	BLOOM_ERR_INSERTED,
	/* the text form (bloom_text.h) */
	BLOOM_ERR_TEXT_PREFIX,
	BLOOM_ERR_TEXT_LAYOUT,
	BLOOM_ERR_TEXT_HASH,
	BLOOM_ERR_TEXT_FAMILY,
	BLOOM_ERR_TEXT_TYPE,
	BLOOM_ERR_TEXT_NHASHES,
	BLOOM_ERR_TEXT_NBITS,
	BLOOM_ERR_TEXT_SEED,
	BLOOM_ERR_TEXT_CAPACITY,
	BLOOM_ERR_TEXT_FPR,
	BLOOM_ERR_TEXT_INSERTED,
	BLOOM_ERR_TEXT_BITS,
	BLOOM_ERR_TEXT_BITS_LENGTH,
	BLOOM_ERR_TEXT_BASE64
} BloomError;

extern const char *bloom_error_message(BloomError err);

/* byte order helpers: the format is little-endian everywhere */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BLOOM_LITTLE_ENDIAN 1
#endif

static inline uint64_t
bloom_load_u64(const uint8_t *p)
{
#ifdef BLOOM_LITTLE_ENDIAN
	uint64_t	v;

	memcpy(&v, p, 8);			/* one load where the host is little-endian */
	return v;
#else
	return (uint64_t) p[0] | (uint64_t) p[1] << 8 | (uint64_t) p[2] << 16 |
		(uint64_t) p[3] << 24 | (uint64_t) p[4] << 32 | (uint64_t) p[5] << 40 |
		(uint64_t) p[6] << 48 | (uint64_t) p[7] << 56;
#endif
}

static inline void
bloom_store_u64(uint8_t *p, uint64_t v)
{
#ifdef BLOOM_LITTLE_ENDIAN
	memcpy(p, &v, 8);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
#endif
}

static inline uint16_t
bloom_load_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | p[1] << 8);
}

static inline uint32_t
bloom_load_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
		(uint32_t) p[3] << 24;
}

static inline void
bloom_store_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static inline void
bloom_store_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* header access */
extern BloomError bloom_family_check(unsigned family, unsigned flags,
									 uint32_t detail);
extern BloomError bloom_header_read(const uint8_t *buf, size_t len, BloomHeader *hdr);
extern void bloom_header_write(uint8_t *buf, const BloomHeader *hdr);
extern void bloom_header_init(BloomHeader *hdr, uint64_t nblocks, int nhashes,
							  int64_t seed, int64_t capacity, double fpr);
extern size_t bloom_total_size(uint64_t nblocks);

/* the "inserted" counter lives at offset 32 and changes on every add */
#define BLOOM_INSERTED_OFFSET 32
#define BLOOM_FAMILY_OFFSET 8

/* hashing (section 2 of docs/FORMAT.md) */
extern uint64_t bloom_hash_bytes(const void *data, size_t len, int64_t seed);
extern uint64_t bloom_hash_float8(double v, int64_t seed);
extern void bloom_encode_int64(uint8_t out[8], int64_t v);
extern void bloom_encode_float8(uint8_t out[8], double v);

/* XXH3-64 of v's 8 little-endian bytes (section 3: every integer width) */
static inline uint64_t
bloom_hash_int64(int64_t v, int64_t seed)
{
	uint8_t		buf[8];

	bloom_store_u64(buf, (uint64_t) v);
	return XXH3_64bits_withSeed(buf, 8, (XXH64_hash_t) seed);
}

static inline uint64_t
bloom_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64_t
bloom_block_of(uint64_t h, uint64_t nblocks)
{
	return ((h >> 32) * nblocks) >> 32;
}

/*
 * Set the k bits of hash h in one 64-byte block (the block that
 * bloom_block_of() chose).  Returns true if at least one bit was off before.
 * The index access method keeps blocks in pages of its own and calls this
 * directly; bloom_set_hash() is the whole-array form.
 */
static inline bool
bloom_block_set(uint8_t *block, int k, uint64_t h)
{
	uint64_t	salt = UINT64_C(0x9E3779B97F4A7C15);
	uint8_t		changed = 0;

	/* 7 bit positions of 9 bits per mixed word, one word per 7 bits */
	for (int i = 0; i < k; i += 7)
	{
		uint64_t	x = bloom_mix64(h + salt);
		int			n = k - i < 7 ? k - i : 7;

		for (int j = 0; j < n; j++)
		{
			unsigned	pos = (unsigned) (x & 511);
			uint8_t		mask = (uint8_t) (1u << (pos & 7));

			changed |= (uint8_t) (~block[pos >> 3] & mask);
			block[pos >> 3] |= mask;
			x >>= 9;
		}
		salt += UINT64_C(0x9E3779B97F4A7C15);
	}
	return changed != 0;
}

/* ask the CPU to fetch the cache line at p ahead of a read or write */
static inline void
bloom_prefetch(const void *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p, 1, 3);
#else
	(void) p;
#endif
}

/*
 * Ask the CPU to fetch the block of hash h ahead of bloom_set_hash or
 * bloom_test_hash: callers that batch hashes overlap the cache misses.
 */
static inline void
bloom_prefetch_hash(const uint8_t *bits, uint64_t nblocks, uint64_t h)
{
	bloom_prefetch(bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES);
}

/* are the n (<= 7) bit positions of mixed word x all set in block? */
static inline bool
bloom_block_test_word(const uint8_t *block, uint64_t x, int n)
{
	for (int j = 0; j < n; j++)
	{
		unsigned	pos = (unsigned) (x & 511);

		if ((block[pos >> 3] & (1u << (pos & 7))) == 0)
			return false;
		x >>= 9;
	}
	return true;
}

/* true = probably added; false = definitely not; one block as above */
static inline bool
bloom_block_test(const uint8_t *block, int k, uint64_t h)
{
	uint64_t	salt = UINT64_C(0x9E3779B97F4A7C15);
	int			i = 0;

	/*
	 * The bit positions of bloom_block_set, stopping at the first unset;
	 * each word is mixed only when its positions are reached.  k >= 1
	 * (validated), so the loop is entered without a test.
	 */
	do
	{
		if (!bloom_block_test_word(block, bloom_mix64(h + salt), k - i < 7 ? k - i : 7))
			return false;
		salt += UINT64_C(0x9E3779B97F4A7C15);
		i += 7;
	} while (i < k);
	return true;
}

/*
 * The mixed words of hash h that bloom_block_set and bloom_block_test
 * draw bit positions from, seven per word: w[j] for positions 7j .. 7j + 6.
 * Filters that share a hash but not a block (the layers of a growing
 * filter) mix it once and test each block with bloom_block_test_words.
 */
static inline void
bloom_block_words(uint64_t h, int k, uint64_t *w)
{
	uint64_t	salt = UINT64_C(0x9E3779B97F4A7C15);

	for (int i = 0; i < k; i += 7)
	{
		w[i / 7] = bloom_mix64(h + salt);
		salt += UINT64_C(0x9E3779B97F4A7C15);
	}
}

/* bloom_block_test on words from bloom_block_words (for k or more bits) */
static inline bool
bloom_block_test_words(const uint8_t *block, int k, const uint64_t *w)
{
	for (int i = 0; i < k; i += 7)
		if (!bloom_block_test_word(block, w[i / 7], k - i < 7 ? k - i : 7))
			return false;
	return true;
}

/*
 * Set the k bits of hash h; bits points at the bit array (after the header).
 * Returns true if at least one bit was off before.
 */
static inline bool
bloom_set_hash(uint8_t *bits, uint64_t nblocks, int k, uint64_t h)
{
	return bloom_block_set(bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES, k, h);
}

/* true = probably added; false = definitely not */
static inline bool
bloom_test_hash(const uint8_t *bits, uint64_t nblocks, int k, uint64_t h)
{
	return bloom_block_test(bits + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES, k, h);
}

/*
 * Paged layout (the index access method): the bit array is cut into pages
 * of `per_page` whole blocks, so a block never straddles a page; data page
 * p (counting from 0) holds blocks p * per_page .. p * per_page + per_page - 1.
 */
static inline uint64_t
bloom_paged_blocks_per_page(size_t usable_bytes)
{
	return usable_bytes / BLOOM_BLOCK_BYTES;
}

static inline uint64_t
bloom_paged_npages(uint64_t nblocks, uint64_t per_page)
{
	return (nblocks + per_page - 1) / per_page;
}

/* sizing (section 4) */
extern double bloom_model_fpr(double lambda, int k);
extern bool bloom_size_for(double capacity, double fpr,
						   uint64_t *nblocks, int *nhashes);

/* whole-array operations */
extern uint64_t bloom_popcount(const uint8_t *bits, size_t nbytes);
extern void bloom_or(uint8_t *dst, const uint8_t *src, size_t nbytes);
extern void bloom_and(uint8_t *dst, const uint8_t *src, size_t nbytes);

/*
 * Estimates from the fill of the bit array (docs/FORMAT.md section 6).
 * bloom_estimate_cardinality returns +Infinity when every bit is set.
 */
extern double bloom_estimate_cardinality(uint64_t bits_set, uint64_t nblocks, int k);
extern uint64_t bloom_estimate_inserted(uint64_t bits_set, uint64_t nblocks, int k);
extern double bloom_fill_fpr(const uint8_t *bits, uint64_t nblocks, int k,
							 uint64_t *bits_set);

/*
 * Compatibility of two filters for union and intersection: the first
 * header field in which they differ, in the order below.  A filter with
 * no element family yet is compatible with any family.
 */
typedef enum BloomDiff
{
	BLOOM_SAME = 0,
	BLOOM_DIFF_NBLOCKS,
	BLOOM_DIFF_NHASHES,
	BLOOM_DIFF_SEED,
	BLOOM_DIFF_LAYOUT,
	BLOOM_DIFF_HASHFN,
	BLOOM_DIFF_VERSION,
	BLOOM_DIFF_FAMILY
} BloomDiff;

extern BloomDiff bloom_compare_params(const BloomHeader *a, const BloomHeader *b);
extern void bloom_adopt_family(BloomHeader *dst, const BloomHeader *src);

/* base64 (RFC 4648, padded) for the text form */
extern size_t bloom_base64_encoded_len(size_t n);
extern size_t bloom_base64_encode(const uint8_t *src, size_t n, char *dst);
extern bool bloom_base64_decode(const char *src, size_t srclen,
								uint8_t *dst, size_t dstlen);

/* family names for the text form and messages */
extern const char *bloom_family_name(int family);
extern int	bloom_family_from_name(const char *name, size_t len);

#endif							/* BLOOM_CORE_H */
