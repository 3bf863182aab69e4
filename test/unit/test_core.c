/*
 * test_core.c
 *	  Unit tests of the PostgreSQL-free core (src/bloom_core.c): header
 *	  encoding and validation, hashing vectors, add/test, sizing, base64.
 *	  Built and run by "make unitcheck"; prints "unit: N passed, M failed".
 */
#include "bloom_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	passed,
			failed;

#define CHECK(cond) \
	do { \
		if (cond) passed++; \
		else { failed++; printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } \
	} while (0)

static uint8_t *
new_filter(uint64_t nblocks, int k, int64_t seed, size_t *len)
{
	BloomHeader hdr;
	uint8_t    *buf;

	*len = bloom_total_size(nblocks);
	buf = calloc(1, *len);
	bloom_header_init(&hdr, nblocks, k, seed, 0, 0.0);
	bloom_header_write(buf, &hdr);
	return buf;
}

static void
test_header(void)
{
	size_t		len;
	uint8_t    *buf = new_filter(3, 7, -42, &len);
	BloomHeader hdr;
	uint8_t		saved;

	CHECK(len == 64 + 3 * 64);
	CHECK(memcmp(buf, "BLMF", 4) == 0);
	CHECK(buf[4] == 1 && buf[5] == 0);	/* version 1, little-endian */
	CHECK(buf[24] == 3 && buf[25] == 0);	/* nblocks little-endian */
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_OK);
	CHECK(hdr.nblocks == 3 && hdr.nhashes == 7 && hdr.seed == -42);
	CHECK(hdr.family == BF_FAMILY_NONE && hdr.inserted == 0);

	/* every corruption is rejected with its own code */
	CHECK(bloom_header_read(buf, 63, &hdr) == BLOOM_ERR_TOO_SHORT);
	CHECK(bloom_header_read(buf, len - 1, &hdr) == BLOOM_ERR_LENGTH);
	CHECK(bloom_header_read(buf, len + 64, &hdr) == BLOOM_ERR_LENGTH);
#define CORRUPT(off, val, code) \
	do { saved = buf[off]; buf[off] = (val); \
		 CHECK(bloom_header_read(buf, len, &hdr) == (code)); buf[off] = saved; } while (0)
	CORRUPT(0, 'X', BLOOM_ERR_MAGIC);
	CORRUPT(4, 2, BLOOM_ERR_VERSION);
	CORRUPT(6, 2, BLOOM_ERR_LAYOUT);
	CORRUPT(7, 0, BLOOM_ERR_HASHFN);
	CORRUPT(8, 14, BLOOM_ERR_FAMILY);
	CORRUPT(9, 1, BLOOM_ERR_FLAGS);
	CORRUPT(9, 2, BLOOM_ERR_FLAGS);
	CORRUPT(10, 0, BLOOM_ERR_NHASHES);
	CORRUPT(10, 65, BLOOM_ERR_NHASHES);
	CORRUPT(12, 1, BLOOM_ERR_DETAIL);
	CORRUPT(24, 0, BLOOM_ERR_NBLOCKS);
	CORRUPT(24, 4, BLOOM_ERR_LENGTH);
	CORRUPT(27, 0x80, BLOOM_ERR_NBLOCKS);	/* 2^31 + 3 blocks */
	CORRUPT(32, 1, BLOOM_ERR_EMPTY_INSERTED);
	CORRUPT(47, 0x80, BLOOM_ERR_CAPACITY);
	CORRUPT(55, 0x7F, BLOOM_ERR_FPR);	/* fpr becomes a large/NaN double */
	CORRUPT(60, 1, BLOOM_ERR_RESERVED);

	/* family "other" must carry a type OID and the non-portable flag */
	buf[8] = BF_FAMILY_OTHER;
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_ERR_DETAIL);
	buf[12] = 23;
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_ERR_FLAGS);
	buf[9] = BLOOM_FLAG_NONPORTABLE;
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_OK);
	/* records: nibbles must be contiguous known non-record families */
	buf[8] = BF_FAMILY_RECORD;
	buf[9] = 0;
	buf[12] = 0x41;				/* (integer, text) */
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_OK);
	buf[12] = 0x0C;				/* nested record */
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_ERR_DETAIL);
	buf[12] = 0x01;
	buf[13] = 0x01;				/* gap: field 1, none, field 3 */
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_ERR_DETAIL);
	free(buf);
}

static void
test_hash_vectors(void)
{
	/* computed independently with python3-xxhash: xxh3_64(pack('<q', 42)) */
	CHECK((int64_t) bloom_hash_int64(42, 0) == INT64_C(-3051478158665635896));
	/* xxh3_64(b'1') (numeric 1 in canonical text) */
	CHECK((int64_t) bloom_hash_bytes("1", 1, 0) == INT64_C(7335560060985733464));
	/* -0.0 and 0.0 agree; all NaNs agree */
	CHECK(bloom_hash_float8(-0.0, 0) == bloom_hash_float8(0.0, 0));
	CHECK(bloom_hash_float8(NAN, 0) == bloom_hash_float8(-NAN, 0));
	CHECK(bloom_hash_int64(42, 0) != bloom_hash_int64(42, 1));
	/* mix64 of SplitMix64: mix64(0x9E3779B97F4A7C15) is its first output for seed 0 */
	CHECK(bloom_mix64(UINT64_C(0x9E3779B97F4A7C15)) == UINT64_C(0xE220A8397B1DCDAF));
}

static void
test_add_test(void)
{
	size_t		len;
	uint64_t	nblocks = 1563;		/* ~ 100k elements at ~1 % */
	int			k = 7;
	uint8_t    *buf = new_filter(nblocks, k, 0, &len);
	uint8_t    *bits = buf + BLOOM_HEADER_SIZE;
	long		fn = 0,
				fp = 0;
	uint64_t	changed = 0;
	double		model;

	for (int64_t i = 0; i < 100000; i++)
		changed += bloom_set_hash(bits, nblocks, k, bloom_hash_int64(i, 0));
	CHECK(changed > 99000 && changed <= 100000);
	for (int64_t i = 0; i < 100000; i++)
		fn += !bloom_test_hash(bits, nblocks, k, bloom_hash_int64(i, 0));
	CHECK(fn == 0);
	for (int64_t i = 100000; i < 1100000; i++)
		fp += bloom_test_hash(bits, nblocks, k, bloom_hash_int64(i, 0));
	model = bloom_model_fpr(100000.0 / nblocks, k);
	/* measured rate within 10 % of the blocked model (1 M probes, ~1 % rate) */
	CHECK(fabs(fp / 1e6 - model) < 0.1 * model);
	/* setting an already-present element changes nothing */
	CHECK(!bloom_set_hash(bits, nblocks, k, bloom_hash_int64(5, 0)));
	/* popcount, or, and */
	{
		uint64_t	pc = bloom_popcount(bits, nblocks * 64);
		uint8_t    *copy = malloc(nblocks * 64);

		CHECK(pc > 0 && pc < nblocks * 512);
		memset(copy, 0, nblocks * 64);
		bloom_or(copy, bits, nblocks * 64);
		CHECK(memcmp(copy, bits, nblocks * 64) == 0);
		memset(copy, 0xFF, nblocks * 64);
		bloom_and(copy, bits, nblocks * 64);
		CHECK(memcmp(copy, bits, nblocks * 64) == 0);
		free(copy);
	}
	free(buf);
}

static void
test_sizing(void)
{
	uint64_t	nb,
				nb2;
	int			k,
				k2;

	CHECK(bloom_size_for(1e6, 0.01, &nb, &k));
	/* the blocked model needs more than the classic 9.59 bits per element */
	CHECK(nb * 512.0 / 1e6 > 9.59 && nb * 512.0 / 1e6 < 11.0);
	CHECK(bloom_model_fpr(1e6 / nb, k) <= 0.01);
	/* one block less would miss the target */
	CHECK(bloom_model_fpr(1e6 / (nb - 1), k) > 0.01);
	CHECK(bloom_size_for(1e6, 0.001, &nb2, &k2));
	CHECK(nb2 > nb && k2 > k);
	CHECK(bloom_size_for(1, 0.5, &nb, &k) && nb == 1);
	/* the model: empty blocks never give false positives, full ones always */
	CHECK(bloom_model_fpr(1e-9, 7) < 1e-9);
	CHECK(bloom_model_fpr(2000, 7) > 0.99);
}

static void
test_base64(void)
{
	uint8_t		src[7] = {0, 1, 2, 250, 251, 252, 253};
	char		enc[16];
	uint8_t		dec[7];

	for (size_t n = 0; n <= 7; n++)
	{
		size_t		l = bloom_base64_encode(src, n, enc);

		CHECK(l == bloom_base64_encoded_len(n));
		CHECK(bloom_base64_decode(enc, l, dec, n) && memcmp(dec, src, n) == 0);
	}
	CHECK(bloom_base64_encode((const uint8_t *) "foob", 4, enc) == 8 && memcmp(enc, "Zm9vYg==", 8) == 0);
	CHECK(!bloom_base64_decode("Zm9vYg=", 7, dec, 4));	/* short */
	CHECK(!bloom_base64_decode("Zm9vYgAA", 8, dec, 4));	/* no padding: would overflow */
	CHECK(!bloom_base64_decode("Zm9vYh==", 8, dec, 4));	/* non-zero pad bits */
	CHECK(!bloom_base64_decode("Zm9v!g==", 8, dec, 4));	/* bad character */
	CHECK(!bloom_base64_decode("Zm=vYg==", 8, dec, 4));	/* padding inside */
}

int
main(void)
{
	test_header();
	test_hash_vectors();
	test_add_test();
	test_sizing();
	test_base64();
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
