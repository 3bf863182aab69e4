/*
 * test_core.c
 *	  Unit tests of the PostgreSQL-free core (src/core/bloom_core.c): header
 *	  encoding and validation, hashing vectors, add/test, sizing, base64,
 *	  and the text form (bloom_text.c).
 *	  Built and run by "make unitcheck"; prints "unit: N passed, M failed".
 */
#include "bloom_core.h"
#include "bloom_text.h"

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

/* a resolver for the tests: "pg_catalog.inet" is type 869, nothing else */
static bool
test_resolver(void *arg, const char *name, size_t len, uint32_t *oid)
{
	(void) arg;
	if (len == 15 && memcmp(name, "pg_catalog.inet", 15) == 0)
	{
		*oid = 869;
		return true;
	}
	return false;
}

/* the full text of a filter, as the server prints it */
static char *
text_of(const uint8_t *buf, size_t len, const char *typname)
{
	BloomHeader hdr;
	size_t		head,
				b64;
	char	   *out;

	if (bloom_header_read(buf, len, &hdr) != BLOOM_OK)
		return NULL;
	head = bloom_text_format_head(&hdr, typname, NULL, 0);
	b64 = bloom_base64_encoded_len(len - BLOOM_HEADER_SIZE);
	out = malloc(head + b64 + 1);
	CHECK(bloom_text_format_head(&hdr, typname, out, head + 1) == head);
	bloom_base64_encode(buf + BLOOM_HEADER_SIZE, len - BLOOM_HEADER_SIZE, out + head);
	out[head + b64] = '\0';
	return out;
}

/* parse and decode a text; the error, and the bytes in *out on success */
static BloomError
read_text(const char *s, uint8_t **out, size_t *outlen)
{
	BloomText	t;
	BloomError	err = bloom_text_parse(s, strlen(s), test_resolver, NULL, &t);

	*out = NULL;
	if (err != BLOOM_OK)
		return err;
	*outlen = bloom_total_size(t.hdr.nblocks);
	*out = malloc(*outlen);
	err = bloom_text_decode(&t, *out, *outlen);
	if (err != BLOOM_OK)
	{
		free(*out);
		*out = NULL;
	}
	return err;
}

/* replace the first "from" in s by "to"; a new string */
static char *
edit(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	char	   *r;

	if (p == NULL)
		return NULL;
	r = malloc(strlen(s) + strlen(to) + 1);
	memcpy(r, s, p - s);
	strcpy(r + (p - s), to);
	strcat(r, p + strlen(from));
	return r;
}

static void
test_fpr_format(void)
{
	static const struct
	{
		double		x;
		const char *s;
	}			v[] = {
		{0.01, "0.01"}, {1e-5, "1e-05"}, {0.30000000000000004, "0.30000000000000004"},
		{0.0, "0"}, {-0.0, "-0"}, {5e-324, "5e-324"}, {1e-4, "0.0001"},
		{1.5e-5, "1.5e-05"}, {2.2250738585072014e-308, "2.2250738585072014e-308"},
		{0.1, "0.1"}, {0.5, "0.5"}, {0.00012, "0.00012"}, {123.5, "123.5"},
		{1e15, "1e+15"}, {1e14, "100000000000000"}, {1e-100, "1e-100"},
		/* 2^-44: the interval below a power of two is half as wide */
		{5.684341886080802e-14, "5.684341886080802e-14"},
	};
	char		buf[BLOOM_FPR_BUFLEN];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
	{
		bloom_fpr_format(v[i].x, buf);
		CHECK(strcmp(buf, v[i].s) == 0);
		if (strcmp(buf, v[i].s) != 0)
			printf("  fpr %.17g printed %s, want %s\n", v[i].x, buf, v[i].s);
	}
}

static void
test_text(void)
{
	size_t		len,
				len2;
	uint8_t    *buf = new_filter(2, 5, -7, &len);
	uint8_t    *back;
	char	   *text,
			   *bad;
	BloomHeader hdr;
	static const char *const noncanonical[][2] = {
		{"inserted=3 ", "inserted=03 "}, {"nhashes=5 ", "nhashes=05 "},
		{"nbits=1024 ", "nbits=01024 "}, {"seed=-7 ", "seed=-07 "},
		{"seed=-7 ", "seed=+7 "}, {"capacity=1000 ", "capacity=1000.0 "},
		{"fpr=0.01 ", "fpr=0.010 "}, {"fpr=0.01 ", "fpr=1e-02 "},
		{"fpr=0.01 ", "fpr=.01 "}, {"fpr=0.01 ", "fpr=1E-2 "},
		{"fpr=0.01 ", "fpr=0.01000000000000000021 "}, {"fpr=0.01 ", "fpr=0x1p-7 "},
		{"fpr=0.01 ", "fpr=inf "}, {"fpr=0.01 ", "fpr=-0.01 "}, {"fpr=0.01 ", "fpr=1 "},
		{"fpr=0.01 ", "fpr=1e-400 "}, {"fpr=0.01 ", "fpr= "},
		{"family=integer ", "family=integer() "}, {"family=integer ", "family=INTEGER "},
		{"family=integer ", "family=record(integer,) "},
		{"family=integer ", "family=record(,integer) "},
		{"family=integer ", "family=record() "},
		{"family=integer ", "family=record(integer,record) "},
		{"family=integer ", "family=record(none) "},
		{"family=integer ", "family=record(integer,text,integer,text,integer,text,integer,text,integer) "},
		{"family=integer ", "family=other(inet) "},
		{"family=integer ", "family=other() "},
		{"family=integer ", "family=other(pg_catalog.inet "},
		{"family=integer ", "family=other(pg_catalog.inet)x "},
		{"layout=blocked ", "layout=blocked  "}, {"bits=", "bits= "},
		{"inserted=3 ", "inserted=9223372036854775808 "},
		{"inserted=3 ", "inserted=18446744073709551616 "},
		{"bloomfilter:1 ", "bloomfilter:1  "}, {"bloomfilter:1 ", "Bloomfilter:1 "},
	};

	/* a filter with every field away from its default reads back */
	bloom_header_read(buf, len, &hdr);
	hdr.family = BF_FAMILY_INTEGER;
	hdr.inserted = 3;
	hdr.capacity = 1000;
	hdr.fpr = 0.01;
	bloom_header_write(buf, &hdr);
	for (size_t i = BLOOM_HEADER_SIZE; i < len; i += 5)
		buf[i] = (uint8_t) (i * 37);
	text = text_of(buf, len, NULL);
	CHECK(strncmp(text, "bloomfilter:1 layout=blocked hash=xxh3_64 family=integer nhashes=5 nbits=1024 seed=-7 capacity=1000 fpr=0.01 inserted=3 bits=", 119) == 0);
	CHECK(read_text(text, &back, &len2) == BLOOM_OK && len2 == len &&
		  memcmp(back, buf, len) == 0);
	free(back);
	/* every non-canonical spelling of the same value is refused */
	for (size_t i = 0; i < sizeof(noncanonical) / sizeof(noncanonical[0]); i++)
	{
		bad = edit(text, noncanonical[i][0], noncanonical[i][1]);
		CHECK(bad != NULL && read_text(bad, &back, &len2) != BLOOM_OK);
		if (back)
			printf("  accepted: %s -> %s\n", noncanonical[i][0], noncanonical[i][1]);
		free(back);
		free(bad);
	}
	/* a trailing space, a truncated text, a stray NUL */
	bad = malloc(strlen(text) + 2);
	strcpy(bad, text);
	strcat(bad, " ");
	CHECK(read_text(bad, &back, &len2) == BLOOM_ERR_TEXT_BITS_LENGTH);
	for (size_t cut = 0; cut < strlen(text); cut += 7)
	{
		BloomText	t;

		CHECK(bloom_text_parse(text, cut, test_resolver, NULL, &t) != BLOOM_OK);
	}
	{
		BloomText	t;

		strcpy(bad, text);
		bad[60] = '\0';
		CHECK(bloom_text_parse(bad, strlen(text), test_resolver, NULL, &t) != BLOOM_OK);
	}
	free(bad);

	/* counts that a bigint cannot show are invalid */
	hdr.inserted = UINT64_C(1) << 63;
	bloom_header_write(buf, &hdr);
	CHECK(bloom_header_read(buf, len, &hdr) == BLOOM_ERR_INSERTED);
	hdr.inserted = 3;

	/* records and non-portable filters */
	hdr.family = BF_FAMILY_RECORD;
	hdr.detail = 0xD41;			/* (integer, text, other) */
	hdr.flags = BLOOM_FLAG_NONPORTABLE;
	bloom_header_write(buf, &hdr);
	free(text);
	text = text_of(buf, len, NULL);
	CHECK(strstr(text, " family=record(integer,text,other) nhashes=") != NULL);
	CHECK(read_text(text, &back, &len2) == BLOOM_OK && memcmp(back, buf, len) == 0);
	free(back);
	hdr.family = BF_FAMILY_OTHER;
	hdr.detail = 869;
	bloom_header_write(buf, &hdr);
	free(text);
	text = text_of(buf, len, "pg_catalog.inet");
	CHECK(strstr(text, " family=other(pg_catalog.inet) nhashes=") != NULL);
	CHECK(read_text(text, &back, &len2) == BLOOM_OK && memcmp(back, buf, len) == 0);
	free(back);
	bad = edit(text, "pg_catalog.inet", "pg_catalog.cidr");
	CHECK(read_text(bad, &back, &len2) == BLOOM_ERR_TEXT_TYPE);
	free(bad);
	/* without a resolver no non-portable filter reads */
	{
		BloomText	t;

		CHECK(bloom_text_parse(text, strlen(text), NULL, NULL, &t) == BLOOM_ERR_TEXT_TYPE);
	}
	free(text);
	free(buf);
}

static void
test_type_names(void)
{
	BloomTypeName tn;

	CHECK(bloom_type_name_parse("pg_catalog.inet", 15, &tn) &&
		  strcmp(tn.schema, "pg_catalog") == 0 && strcmp(tn.name, "inet") == 0 && !tn.array);
	CHECK(bloom_type_name_parse("time without time zone[]", 24, &tn) &&
		  strcmp(tn.schema, "pg_catalog") == 0 && strcmp(tn.name, "time") == 0 && tn.array);
	CHECK(bloom_type_name_parse("character[]", 11, &tn) && strcmp(tn.name, "bpchar") == 0);
	CHECK(bloom_type_name_parse("\"odd schema\".\"a \"\"b\"\" (c)\"[]", 28, &tn) &&
		  strcmp(tn.schema, "odd schema") == 0 && strcmp(tn.name, "a \"b\" (c)") == 0 && tn.array);
	CHECK(bloom_type_name_parse("s.t_1", 5, &tn) && strcmp(tn.name, "t_1") == 0);
	CHECK(!bloom_type_name_parse("inet", 4, &tn));	/* never printed unqualified */
	CHECK(!bloom_type_name_parse("S.t", 3, &tn));	/* would need quotes */
	CHECK(!bloom_type_name_parse("s.1t", 4, &tn));
	CHECK(!bloom_type_name_parse("s.t[][]", 7, &tn));
	CHECK(!bloom_type_name_parse("s.t(3)", 6, &tn));
	CHECK(!bloom_type_name_parse("s.\"\"", 4, &tn));	/* empty identifier */
	CHECK(!bloom_type_name_parse("s.\"t", 4, &tn));	/* unterminated */
	CHECK(!bloom_type_name_parse("s. t", 4, &tn));
	CHECK(!bloom_type_name_parse("a.b.c", 5, &tn));
	CHECK(!bloom_type_name_parse("s.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 66, &tn));
	CHECK(!bloom_type_name_parse("", 0, &tn));
}

int
main(void)
{
	test_header();
	test_hash_vectors();
	test_add_test();
	test_sizing();
	test_base64();
	test_fpr_format();
	test_text();
	test_type_names();
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
