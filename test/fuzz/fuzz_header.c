/*
 * fuzz_header.c
 *	  libFuzzer harness of bloom_header_read, the validation every input
 *	  path of the server runs.  Any accepted value must rewrite to the same
 *	  header bytes, print as text that reads back to the same bytes, and
 *	  answer tests and estimates without reading outside its bits.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BloomHeader hdr;
	BloomText	t;
	uint8_t		head[BLOOM_HEADER_SIZE];
	uint8_t    *back;
	char	   *text;
	size_t		headlen,
				b64len;
	const char *typname = "fuzz.t";
	uint64_t	bits_set;

	if (bloom_header_read(data, size, &hdr) != BLOOM_OK)
		return 0;

	bloom_header_write(head, &hdr);
	FUZZ_ASSERT(memcmp(head, data, BLOOM_HEADER_SIZE) == 0);
	FUZZ_ASSERT(hdr.inserted <= BLOOM_MAX_INSERTED);

	/* the text form: "fuzz.t" resolves to an OID that must be the detail */
	if (hdr.family == BF_FAMILY_OTHER)
	{
		uint32_t	oid;

		FUZZ_ASSERT(fuzz_resolver(NULL, typname, strlen(typname), &oid));
		if (oid != hdr.detail)
			typname = NULL;		/* a type this resolver cannot name */
	}
	if (hdr.family != BF_FAMILY_OTHER || typname != NULL)
	{
		headlen = bloom_text_format_head(&hdr, typname, NULL, 0);
		b64len = bloom_base64_encoded_len(size - BLOOM_HEADER_SIZE);
		text = malloc(headlen + b64len + 1);
		bloom_text_format_head(&hdr, typname, text, headlen + 1);
		bloom_base64_encode(data + BLOOM_HEADER_SIZE, size - BLOOM_HEADER_SIZE, text + headlen);
		text[headlen + b64len] = '\0';
		FUZZ_ASSERT(bloom_text_parse(text, headlen + b64len, fuzz_resolver, NULL, &t) == BLOOM_OK);
		FUZZ_ASSERT(bloom_total_size(t.hdr.nblocks) == size);
		back = malloc(size);
		FUZZ_ASSERT(bloom_text_decode(&t, back, size) == BLOOM_OK);
		FUZZ_ASSERT(memcmp(back, data, size) == 0);
		free(back);
		free(text);
	}

	/* reading the bits stays inside them (AddressSanitizer checks) */
	for (uint64_t h = 0; h < 4; h++)
		(void) bloom_test_hash(data + BLOOM_HEADER_SIZE, hdr.nblocks, hdr.nhashes,
							   h * UINT64_C(0x9E3779B97F4A7C15));
	(void) bloom_fill_fpr(data + BLOOM_HEADER_SIZE, hdr.nblocks, hdr.nhashes, &bits_set);
	FUZZ_ASSERT(bits_set <= hdr.nblocks * BLOOM_BLOCK_BITS);
	(void) bloom_estimate_cardinality(bits_set, hdr.nblocks, hdr.nhashes);
	FUZZ_ASSERT(bloom_estimate_inserted(bits_set, hdr.nblocks, hdr.nhashes) <= BLOOM_MAX_INSERTED);
	return 0;
}
