/*
 * fuzz_base64.c
 *	  libFuzzer harness of the base64 decoder of the text form: it never
 *	  writes past the buffer it is given, and accepts only the canonical
 *	  padded encoding (decoding then encoding gives the input back).  The
 *	  first byte picks the expected decoded length around the one the
 *	  input's length implies.
 */
#include "fuzz_common.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *src;
	size_t		srclen,
				dstlen;
	uint8_t    *dst;
	char	   *again;

	if (size < 1)
		return 0;
	src = (const char *) data + 1;
	srclen = size - 1;
	dstlen = srclen / 4 * 3;
	dstlen = dstlen + (data[0] % 5) >= 2 ? dstlen + (data[0] % 5) - 2 : 0;
	dst = malloc(dstlen ? dstlen : 1);
	if (bloom_base64_decode(src, srclen, dst, dstlen))
	{
		again = malloc(bloom_base64_encoded_len(dstlen) + 1);
		FUZZ_ASSERT(bloom_base64_encode(dst, dstlen, again) == srclen);
		FUZZ_ASSERT(memcmp(again, src, srclen) == 0);
		free(again);
	}
	/* and any bytes encode to text that decodes back */
	again = malloc(bloom_base64_encoded_len(size));
	FUZZ_ASSERT(bloom_base64_encode(data, size, again) == bloom_base64_encoded_len(size));
	free(dst);
	dst = malloc(size);
	FUZZ_ASSERT(bloom_base64_decode(again, bloom_base64_encoded_len(size), dst, size));
	FUZZ_ASSERT(memcmp(dst, data, size) == 0);
	free(dst);
	free(again);
	return 0;
}
