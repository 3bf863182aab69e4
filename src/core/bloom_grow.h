/*-------------------------------------------------------------------------
 *
 * bloom_grow.h
 *	  Growing (scalable) Bloom filters, free of any PostgreSQL header: the
 *	  bytes of the growing form of a `bloomfilter` value (docs/FORMAT.md
 *	  section 9), validation, lookups and the sizing of each new layer.
 *
 * A growing filter is a 64-byte header followed by L layers, each a
 * complete bloomfilter of format version 1 (bloom_core.h).  Layer i is
 * sized for capacity c * g^i keys at the rate p * (1 - r) * r^i, so that
 * the rates of all layers, each filled to its capacity, add up to less
 * than p however many layers there are.  Adds go to the newest layer; when
 * it holds its capacity a new layer is appended.  A lookup tests the one
 * hash of the value against every layer (they share the seed).
 *
 * The union form (docs/FORMAT.md section 10) shares these bytes with
 * another magic: its layers are independent filters of any sizes (the
 * filters of a table's shards, for instance), none sized from another, and
 * it is read only: nothing is added to it.  Its growth and ratio are 0.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_GROW_H
#define BLOOM_GROW_H

#include "bloom_core.h"

#define BLOOM_GROW_MAGIC		"BLMG"
#define BLOOM_UNION_MAGIC		"BLMU"
#define BLOOM_GROW_VERSION		1
#define BLOOM_GROW_HEADER_SIZE	64
/* where the header keeps its layer count (uint16, little-endian) */
#define BLOOM_GROW_NLAYERS_OFFSET	6
#define BLOOM_GROW_MAX_LAYERS	64
#define BLOOM_GROW_MIN_GROWTH	2
#define BLOOM_GROW_MAX_GROWTH	16

/*
 * The tightening ratio r that new filters get.  0.9 keeps a filter that
 * grew from 10 000 to 10 000 000 keys under twice the size of one sized
 * for 10 000 000 (docs/PERFORMANCE.md); smaller ratios spend more bits on
 * the later, larger layers.
 */
#define BLOOM_GROW_RATIO		0.9

/* decoded header, host byte order */
typedef struct BloomGrowHeader
{
	bool		is_union;		/* the union form: growth and ratio 0 */
	uint16_t	version;
	uint16_t	nlayers;		/* L >= 1 */
	uint32_t	growth;			/* g: each layer's capacity is g times the
								 * previous one's */
	int64_t		capacity;		/* c: layer 0's capacity */
	double		fpr;			/* p: the target rate of the whole filter */
	double		ratio;			/* r: each layer's rate is r times the
								 * previous one's */
	BloomHeader first;			/* layer 0's header (family, seed) */
	BloomHeader newest;			/* layer L - 1's header */
	size_t		newest_offset;	/* where layer L - 1 starts in the value */
	uint64_t	total_blocks;	/* of all layers */
} BloomGrowHeader;

typedef enum BloomGrowError
{
	BLOOM_GROW_OK = 0,
	BLOOM_GROW_ERR_TOO_SHORT,
	BLOOM_GROW_ERR_MAGIC,
	BLOOM_GROW_ERR_VERSION,
	BLOOM_GROW_ERR_NLAYERS,
	BLOOM_GROW_ERR_GROWTH,
	BLOOM_GROW_ERR_CAPACITY,
	BLOOM_GROW_ERR_FPR,
	BLOOM_GROW_ERR_RATIO,
	BLOOM_GROW_ERR_RESERVED,
	BLOOM_GROW_ERR_LAYER,		/* a layer is not a valid bloomfilter */
	BLOOM_GROW_ERR_LAYER_MISMATCH,
	BLOOM_GROW_ERR_LAYER_SIZING,
	BLOOM_GROW_ERR_LENGTH,
	BLOOM_GROW_ERR_TOO_LARGE,
	BLOOM_GROW_ERR_UNION_CAPACITY	/* not the sum of the layers' */
} BloomGrowError;

/* true when buf starts with the magic of a layered form: growing or union */
static inline bool
bloom_is_layered(const uint8_t *buf, size_t len)
{
	return len >= 4 && (memcmp(buf, BLOOM_GROW_MAGIC, 4) == 0 ||
						memcmp(buf, BLOOM_UNION_MAGIC, 4) == 0);
}

/*
 * Validate a whole value.  On BLOOM_GROW_ERR_LAYER, *layer_err says what is
 * wrong with the layer (layer_err may be NULL).
 */
extern BloomGrowError bloom_grow_read(const uint8_t *buf, size_t len,
									  BloomGrowHeader *gh, BloomError *layer_err);
/*
 * Validate the frame of a growing value: its 64-byte header and then each
 * layer's 64-byte header, without the layers' bits (which are stored
 * elsewhere: the chunks of a tracked filter).  gh->newest_offset is where
 * the newest layer starts in the whole value.
 */
extern BloomGrowError bloom_grow_frame_read(const uint8_t *buf, size_t len,
											BloomGrowHeader *gh, BloomError *layer_err);
extern const char *bloom_grow_error_message(BloomGrowError err);
extern void bloom_grow_header_write(uint8_t *buf, const BloomGrowHeader *gh);

/*
 * The capacity and rate layer i is sized for: c * g^i and p * (1 - r) *
 * r^i, the rate as a chain of binary64 products (layer 0: p * (1 - r);
 * layer i: layer i - 1's rate * r) so that every reader computes the same
 * bits.  False when the capacity would not fit in an int64 or the rate is
 * no longer a positive number.
 */
extern bool bloom_grow_layer_target(int64_t capacity, double fpr, double ratio,
									uint32_t growth, int layer,
									int64_t *layer_capacity, double *layer_fpr);

/* the size of a new growing filter with one empty layer of nblocks blocks */
static inline size_t
bloom_grow_size(uint64_t nblocks)
{
	return BLOOM_GROW_HEADER_SIZE + bloom_total_size(nblocks);
}

/*
 * Lay out a new growing filter in buf (bloom_grow_size() bytes, zeroed by
 * the caller): one empty layer of nblocks blocks and k hashes.
 */
extern void bloom_grow_init(uint8_t *buf, BloomGrowHeader *gh, int64_t capacity,
							double fpr, double ratio, uint32_t growth,
							uint64_t nblocks, int nhashes, int64_t seed);

/*
 * Append an empty layer of nblocks blocks and k hashes after the newest,
 * at buf + the old length (the caller made room and zeroed it), with the
 * family of the others; updates gh and the header bytes.
 */
extern void bloom_grow_append(uint8_t *buf, BloomGrowHeader *gh, uint64_t nblocks,
							  int nhashes, int64_t layer_capacity, double layer_fpr);

/* the byte length of a validated value */
static inline size_t
bloom_grow_length(const BloomGrowHeader *gh)
{
	return BLOOM_GROW_HEADER_SIZE +
		(size_t) gh->nlayers * BLOOM_HEADER_SIZE +
		(size_t) gh->total_blocks * BLOOM_BLOCK_BYTES;
}

/*
 * true = probably added to some layer.  buf must have been validated; only
 * its bytes are read, so that a lookup needs no decoded header.
 */
extern bool bloom_grow_test_hash(const uint8_t *buf, uint64_t h);

/* fetch h's block of every layer ahead of a test (adders batch hashes) */
extern void bloom_grow_prefetch_hash(const uint8_t *buf, uint64_t h);

/*
 * Write family, flags and family detail of layer 0 into every other
 * layer (after the first add to an empty filter set layer 0's).
 */
extern void bloom_grow_share_family(uint8_t *buf, const BloomGrowHeader *gh);

/*
 * The layers one by one: *offset starts at 0; each call reads the next
 * layer's header into *hdr and returns its offset in buf, or 0 after the
 * last layer.  buf must have been validated.
 */
extern size_t bloom_grow_next_layer(const uint8_t *buf, const BloomGrowHeader *gh,
									size_t *offset, BloomHeader *hdr);

/* same answers: same bytes except the layers' "inserted" counters */
extern bool bloom_grow_equal(const uint8_t *a, size_t alen,
							 const uint8_t *b, size_t blen);

#endif							/* BLOOM_GROW_H */
