/*
 * fuzz_grow.c
 *	  libFuzzer harness of bloom_grow_read, the validation of the growing
 *	  form of a filter.  An accepted value must rewrite to the same header
 *	  bytes, walk its layers to exactly its length with each layer valid
 *	  on its own, and answer tests without reading outside its bits.
 */
#include "fuzz_common.h"

#include "bloom_grow.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	BloomGrowHeader gh;
	BloomHeader h;
	BloomError	layer_err;
	uint8_t		head[BLOOM_GROW_HEADER_SIZE];
	size_t		next = 0;
	size_t		off;
	int			n = 0;
	uint64_t	blocks = 0;

	if (bloom_grow_read(data, size, &gh, &layer_err) != BLOOM_GROW_OK)
		return 0;

	bloom_grow_header_write(head, &gh);
	FUZZ_ASSERT(memcmp(head, data, BLOOM_GROW_HEADER_SIZE) == 0);
	FUZZ_ASSERT(bloom_grow_length(&gh) == size);
	FUZZ_ASSERT(gh.total_blocks <= BLOOM_MAX_BLOCKS);
	while ((off = bloom_grow_next_layer(data, &gh, &next, &h)) != 0)
	{
		FUZZ_ASSERT(bloom_header_read(data + off, bloom_total_size(h.nblocks), &h) == BLOOM_OK);
		FUZZ_ASSERT(h.seed == gh.first.seed && h.family == gh.first.family);
		blocks += h.nblocks;
		n++;
	}
	FUZZ_ASSERT(n == gh.nlayers && blocks == gh.total_blocks);
	FUZZ_ASSERT(bloom_grow_equal(data, size, data, size));

	/* reading the bits stays inside them (AddressSanitizer checks) */
	for (uint64_t x = 0; x < 4; x++)
		(void) bloom_grow_test_hash(data, x * UINT64_C(0x9E3779B97F4A7C15));
	return 0;
}
