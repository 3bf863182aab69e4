/*-------------------------------------------------------------------------
 *
 * bloom_grow.c
 *	  Growing Bloom filters without PostgreSQL headers: validation of the
 *	  bytes of docs/FORMAT.md section 9, the sizing chain of the layers,
 *	  appending a layer and testing a hash against all of them.  Each layer
 *	  is a bloomfilter of section 1 and is read and written with bloom_core.
 *	  The union form of section 10 is validated here too: the same bytes
 *	  without the sizing chain.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom_grow.h"

#include <string.h>

const char *
bloom_grow_error_message(BloomGrowError err)
{
	switch (err)
	{
		case BLOOM_GROW_OK:
			return "no error";
		case BLOOM_GROW_ERR_TOO_SHORT:
			return "The value is shorter than its 64-byte header.";
		case BLOOM_GROW_ERR_MAGIC:
			return "The value does not start with the magic bytes \"BLMG\" of a growing bloomfilter or \"BLMU\" of a union.";
		case BLOOM_GROW_ERR_VERSION:
			return "The growing format version is not 1, the only version this release reads.";
		case BLOOM_GROW_ERR_NLAYERS:
			return "The number of layers is not between 1 and 64.";
		case BLOOM_GROW_ERR_GROWTH:
			return "The growth factor is not between 2 and 16.";
		case BLOOM_GROW_ERR_CAPACITY:
			return "The capacity of the first layer is not positive.";
		case BLOOM_GROW_ERR_FPR:
			return "The target false-positive rate is not between 0 and 1.";
		case BLOOM_GROW_ERR_RATIO:
			return "The tightening ratio is not between 0 and 1.";
		case BLOOM_GROW_ERR_RESERVED:
			return "A reserved header field is not zero.";
		case BLOOM_GROW_ERR_LAYER:
			return "A layer is not a valid bloomfilter.";
		case BLOOM_GROW_ERR_LAYER_MISMATCH:
			return "The layers do not all have the same seed, element family and format.";
		case BLOOM_GROW_ERR_LAYER_SIZING:
			return "A layer's capacity or false-positive rate disagrees with the growth and tightening ratio of the filter.";
		case BLOOM_GROW_ERR_LENGTH:
			return "The length of the value disagrees with its number of layers and their sizes.";
		case BLOOM_GROW_ERR_TOO_LARGE:
			return "The layers together hold more than 8388608 blocks.";
		case BLOOM_GROW_ERR_UNION_CAPACITY:
			return "The capacity of the union is not the sum of its layers' capacities.";
	}
	return "unknown error";
}

bool
bloom_grow_layer_target(int64_t capacity, double fpr, double ratio,
						uint32_t growth, int layer,
						int64_t *layer_capacity, double *layer_fpr)
{
	int64_t		c = capacity;
	double		p = fpr * (1.0 - ratio);

	for (int i = 1; i <= layer; i++)
	{
		if (c > INT64_MAX / (int64_t) growth)
			return false;
		c *= (int64_t) growth;
		p *= ratio;
	}
	if (!(p > 0.0))
		return false;
	*layer_capacity = c;
	*layer_fpr = p;
	return true;
}

/* the same fields of section 1 in every layer, apart from the sizing */
static bool
same_kind(const BloomHeader *a, const BloomHeader *b)
{
	return a->version == b->version && a->layout == b->layout &&
		a->hashfn == b->hashfn && a->family == b->family &&
		a->flags == b->flags && a->detail == b->detail && a->seed == b->seed;
}

static bool
all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * Validate a whole value, or (frame) the headers of one without the
 * layers' bits: the growing header and then each layer's 64-byte header.
 */
static BloomGrowError
read_layered(const uint8_t *buf, size_t len, BloomGrowHeader *gh,
			 BloomError *layer_err, bool frame)
{
	uint64_t	bits;
	size_t		off;
	uint64_t	capacity_sum;
	size_t		whole;			/* where each layer starts in the value */

	if (len < BLOOM_GROW_HEADER_SIZE)
		return BLOOM_GROW_ERR_TOO_SHORT;
	if (memcmp(buf, BLOOM_GROW_MAGIC, 4) == 0)
		gh->is_union = false;
	else if (memcmp(buf, BLOOM_UNION_MAGIC, 4) == 0)
		gh->is_union = true;
	else
		return BLOOM_GROW_ERR_MAGIC;
	if (frame && gh->is_union)
		return BLOOM_GROW_ERR_MAGIC;
	gh->version = bloom_load_u16(buf + 4);
	gh->nlayers = bloom_load_u16(buf + BLOOM_GROW_NLAYERS_OFFSET);
	gh->growth = bloom_load_u32(buf + 8);
	gh->capacity = (int64_t) bloom_load_u64(buf + 16);
	bits = bloom_load_u64(buf + 24);
	memcpy(&gh->fpr, &bits, sizeof(double));
	bits = bloom_load_u64(buf + 32);
	memcpy(&gh->ratio, &bits, sizeof(double));

	if (gh->version != BLOOM_GROW_VERSION)
		return BLOOM_GROW_ERR_VERSION;
	if (gh->nlayers < 1 || gh->nlayers > BLOOM_GROW_MAX_LAYERS)
		return BLOOM_GROW_ERR_NLAYERS;
	if (gh->is_union)
	{
		/* independent layers: no chain; the rate a bound in [0, 1] */
		if (!(gh->fpr >= 0.0 && gh->fpr <= 1.0))
			return BLOOM_GROW_ERR_FPR;
		if (!all_zero(buf + 8, 8) || !all_zero(buf + 32, 32))
			return BLOOM_GROW_ERR_RESERVED;
	}
	else
	{
		if (gh->growth < BLOOM_GROW_MIN_GROWTH || gh->growth > BLOOM_GROW_MAX_GROWTH)
			return BLOOM_GROW_ERR_GROWTH;
		if (gh->capacity < 1)
			return BLOOM_GROW_ERR_CAPACITY;
		if (!(gh->fpr > 0.0 && gh->fpr < 1.0))
			return BLOOM_GROW_ERR_FPR;
		if (!(gh->ratio > 0.0 && gh->ratio < 1.0))
			return BLOOM_GROW_ERR_RATIO;
		if (!all_zero(buf + 12, 4) || !all_zero(buf + 40, 24))
			return BLOOM_GROW_ERR_RESERVED;
	}

	gh->total_blocks = 0;
	capacity_sum = 0;
	off = whole = BLOOM_GROW_HEADER_SIZE;
	for (int i = 0; i < gh->nlayers; i++)
	{
		BloomHeader h;
		BloomError	err;
		size_t		layer_len = len - off;
		int64_t		want_capacity;
		double		want_fpr;

		if (len - off < BLOOM_HEADER_SIZE)
			return BLOOM_GROW_ERR_LENGTH;
		/* a layer's own nblocks says where it ends; a bad one is its error */
		bits = bloom_load_u64(buf + off + 24);
		if (bits >= 1 && bits <= BLOOM_MAX_BLOCKS &&
			(frame || bloom_total_size(bits) <= len - off))
			layer_len = bloom_total_size(bits);
		err = bloom_header_read(buf + off, layer_len, &h);
		if (err != BLOOM_OK)
		{
			if (layer_err)
				*layer_err = err;
			return BLOOM_GROW_ERR_LAYER;
		}
		if (i == 0)
			gh->first = h;
		else if (!same_kind(&gh->first, &h))
			return BLOOM_GROW_ERR_LAYER_MISMATCH;
		if (gh->is_union)
		{
			/* capacities are at least 0 (section 1); the sum must fit */
			if ((uint64_t) h.capacity > (uint64_t) INT64_MAX - capacity_sum)
				return BLOOM_GROW_ERR_UNION_CAPACITY;
			capacity_sum += (uint64_t) h.capacity;
		}
		else if (!bloom_grow_layer_target(gh->capacity, gh->fpr, gh->ratio, gh->growth, i,
										  &want_capacity, &want_fpr) ||
				 h.capacity != want_capacity || h.fpr != want_fpr)
			return BLOOM_GROW_ERR_LAYER_SIZING;
		gh->total_blocks += h.nblocks;
		if (gh->total_blocks > BLOOM_MAX_BLOCKS)
			return BLOOM_GROW_ERR_TOO_LARGE;
		gh->newest = h;
		gh->newest_offset = whole;
		whole += bloom_total_size(h.nblocks);
		off += frame ? BLOOM_HEADER_SIZE : layer_len;
	}
	if (off != len)
		return BLOOM_GROW_ERR_LENGTH;
	if (gh->is_union && (uint64_t) gh->capacity != capacity_sum)
		return BLOOM_GROW_ERR_UNION_CAPACITY;
	return BLOOM_GROW_OK;
}

BloomGrowError
bloom_grow_read(const uint8_t *buf, size_t len, BloomGrowHeader *gh,
				BloomError *layer_err)
{
	return read_layered(buf, len, gh, layer_err, false);
}

BloomGrowError
bloom_grow_frame_read(const uint8_t *buf, size_t len, BloomGrowHeader *gh,
					  BloomError *layer_err)
{
	return read_layered(buf, len, gh, layer_err, true);
}

void
bloom_grow_header_write(uint8_t *buf, const BloomGrowHeader *gh)
{
	uint64_t	bits;

	memset(buf, 0, BLOOM_GROW_HEADER_SIZE);
	memcpy(buf, gh->is_union ? BLOOM_UNION_MAGIC : BLOOM_GROW_MAGIC, 4);
	bloom_store_u16(buf + 4, gh->version);
	bloom_store_u16(buf + BLOOM_GROW_NLAYERS_OFFSET, gh->nlayers);
	bloom_store_u32(buf + 8, gh->growth);
	bloom_store_u64(buf + 16, (uint64_t) gh->capacity);
	memcpy(&bits, &gh->fpr, sizeof(double));
	bloom_store_u64(buf + 24, bits);
	memcpy(&bits, &gh->ratio, sizeof(double));
	bloom_store_u64(buf + 32, bits);
}

void
bloom_grow_init(uint8_t *buf, BloomGrowHeader *gh, int64_t capacity, double fpr,
				double ratio, uint32_t growth, uint64_t nblocks, int nhashes,
				int64_t seed)
{
	/* layer 0's target: bloom_grow_layer_target of layer 0 */
	int64_t		c = capacity;
	double		p = fpr * (1.0 - ratio);

	gh->is_union = false;
	gh->version = BLOOM_GROW_VERSION;
	gh->nlayers = 1;
	gh->growth = growth;
	gh->capacity = capacity;
	gh->fpr = fpr;
	gh->ratio = ratio;
	bloom_grow_header_write(buf, gh);
	bloom_header_init(&gh->first, nblocks, nhashes, seed, c, p);
	bloom_header_write(buf + BLOOM_GROW_HEADER_SIZE, &gh->first);
	gh->newest = gh->first;
	gh->newest_offset = BLOOM_GROW_HEADER_SIZE;
	gh->total_blocks = nblocks;
}

void
bloom_grow_append(uint8_t *buf, BloomGrowHeader *gh, uint64_t nblocks, int nhashes,
				  int64_t layer_capacity, double layer_fpr)
{
	BloomHeader h = gh->newest;
	size_t		off = bloom_grow_length(gh);

	h.nblocks = nblocks;
	h.nhashes = (uint16_t) nhashes;
	h.inserted = 0;
	h.capacity = layer_capacity;
	h.fpr = layer_fpr;
	bloom_header_write(buf + off, &h);
	gh->nlayers++;
	gh->newest = h;
	gh->newest_offset = off;
	gh->total_blocks += nblocks;
	bloom_store_u16(buf + BLOOM_GROW_NLAYERS_OFFSET, gh->nlayers);
}

size_t
bloom_grow_next_layer(const uint8_t *buf, const BloomGrowHeader *gh,
					  size_t *offset, BloomHeader *hdr)
{
	size_t		off = *offset == 0 ? BLOOM_GROW_HEADER_SIZE : *offset;

	if (off >= bloom_grow_length(gh))
		return 0;
	(void) bloom_header_read(buf + off, bloom_total_size(bloom_load_u64(buf + off + 24)), hdr);
	*offset = off + bloom_total_size(hdr->nblocks);
	return off;
}

/*
 * The block of hash h in every layer and the layers' k; asks the CPU to
 * fetch the blocks, so that their cache misses overlap.  Returns L.
 */
static int
layer_blocks(const uint8_t *buf, uint64_t h, const uint8_t **block, int *k)
{
	int			n = bloom_load_u16(buf + BLOOM_GROW_NLAYERS_OFFSET);
	size_t		off = BLOOM_GROW_HEADER_SIZE;

	for (int i = 0; i < n; i++)
	{
		const uint8_t *layer = buf + off;
		uint64_t	nblocks = bloom_load_u64(layer + 24);

		block[i] = layer + BLOOM_HEADER_SIZE + bloom_block_of(h, nblocks) * BLOOM_BLOCK_BYTES;
		k[i] = bloom_load_u16(layer + 10);
		bloom_prefetch(block[i]);
		off += bloom_total_size(nblocks);
	}
	return n;
}

void
bloom_grow_prefetch_hash(const uint8_t *buf, uint64_t h)
{
	const uint8_t *block[BLOOM_GROW_MAX_LAYERS];
	int			k[BLOOM_GROW_MAX_LAYERS];

	(void) layer_blocks(buf, h, block, k);
}

bool
bloom_grow_test_hash(const uint8_t *buf, uint64_t h)
{
	const uint8_t *block[BLOOM_GROW_MAX_LAYERS];
	int			k[BLOOM_GROW_MAX_LAYERS];
	uint64_t	words[(BLOOM_MAX_HASHES + 6) / 7];
	int			n = layer_blocks(buf, h, block, k);
	int			kmax = 0;

	/* the bit positions depend on h alone: mix it once for every layer */
	for (int i = 0; i < n; i++)
		kmax = k[i] > kmax ? k[i] : kmax;
	bloom_block_words(h, kmax, words);
	/* newest first: it holds the most keys */
	for (int i = n - 1; i >= 0; i--)
		if (bloom_block_test_words(block[i], k[i], words))
			return true;
	return false;
}

void
bloom_grow_share_family(uint8_t *buf, const BloomGrowHeader *gh)
{
	size_t		off = BLOOM_GROW_HEADER_SIZE;

	for (int i = 0; i < gh->nlayers; i++)
	{
		uint8_t    *layer = buf + off;

		layer[BLOOM_FAMILY_OFFSET] = gh->first.family;
		layer[BLOOM_FAMILY_OFFSET + 1] = gh->first.flags;
		bloom_store_u32(layer + 12, gh->first.detail);
		off += bloom_total_size(bloom_load_u64(layer + 24));
	}
}

bool
bloom_grow_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		off = BLOOM_GROW_HEADER_SIZE;

	if (alen != blen || memcmp(a, b, BLOOM_GROW_HEADER_SIZE) != 0)
		return false;
	while (off < alen)
	{
		size_t		layer_len = bloom_total_size(bloom_load_u64(a + off + 24));

		if (layer_len > alen - off ||
			memcmp(a + off, b + off, BLOOM_INSERTED_OFFSET) != 0 ||
			memcmp(a + off + BLOOM_INSERTED_OFFSET + 8, b + off + BLOOM_INSERTED_OFFSET + 8,
				   layer_len - BLOOM_INSERTED_OFFSET - 8) != 0)
			return false;
		off += layer_len;
	}
	return true;
}
