/*
 * fuzz_text.c
 *	  libFuzzer harness of the text-form parser (bloom_text_parse and
 *	  bloom_text_decode).  There is one text per filter: any accepted text
 *	  must be exactly what the printer prints for the value it denotes.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BloomText	t;
	BloomHeader hdr;
	uint8_t    *buf;
	size_t		len;
	char	   *typname = NULL;
	char	   *text;
	size_t		headlen;

	if (bloom_text_parse((const char *) data, size, fuzz_resolver, NULL, &t) != BLOOM_OK)
		return 0;
	/* the bits' length was checked against nbits: the buffer is bounded */
	len = bloom_total_size(t.hdr.nblocks);
	FUZZ_ASSERT(t.bitslen <= size && len - BLOOM_HEADER_SIZE <= t.bitslen);
	buf = malloc(len);
	if (bloom_text_decode(&t, buf, len) != BLOOM_OK)
	{
		free(buf);
		return 0;
	}
	FUZZ_ASSERT(bloom_header_read(buf, len, &hdr) == BLOOM_OK);

	/* print it again: the same text */
	if (hdr.family == BF_FAMILY_OTHER)
	{
		typname = malloc(t.typnamelen + 1);
		memcpy(typname, t.typname, t.typnamelen);
		typname[t.typnamelen] = '\0';
	}
	headlen = bloom_text_format_head(&hdr, typname, NULL, 0);
	text = malloc(headlen + t.bitslen + 1);
	bloom_text_format_head(&hdr, typname, text, headlen + 1);
	bloom_base64_encode(buf + BLOOM_HEADER_SIZE, len - BLOOM_HEADER_SIZE, text + headlen);
	FUZZ_ASSERT(headlen + bloom_base64_encoded_len(len - BLOOM_HEADER_SIZE) == size);
	FUZZ_ASSERT(memcmp(text, data, size) == 0);
	free(text);
	free(typname);
	free(buf);
	return 0;
}
