/*-------------------------------------------------------------------------
 *
 * bloom_window.h
 *	  Sliding-window Bloom filters, free of any PostgreSQL header: the
 *	  bytes of a `bloomwindow` value (docs/FORMAT.md section 7), the
 *	  mapping of times to slices and slots, and the rules for adding,
 *	  testing and combining.
 *
 * A window of W = N * S microseconds is kept as N + 1 slices of S
 * microseconds each.  Slice i covers the times [i * S, (i + 1) * S) counted
 * from 2000-01-01 00:00:00 UTC (PostgreSQL's timestamp epoch).  The value
 * is a 64-byte header followed by N + 1 slots, each a complete bloomfilter
 * of format version 1 (bloom_core.h); slice i lives in slot i mod (N + 1).
 * The header records the newest slice stored; the slots hold the slices
 * newest - N .. newest, so what a value answers depends only on its bytes
 * and on the time asked, never on when it was last used.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOM_WINDOW_H
#define BLOOM_WINDOW_H

#include "bloom_core.h"

#define BLOOM_WINDOW_MAGIC		"BLMW"
#define BLOOM_WINDOW_VERSION	1
#define BLOOM_WINDOW_HEADER_SIZE 64
#define BLOOM_WINDOW_MAX_SLICES 1024
/* 2^61 microseconds, about 73 000 years: S * (N + 1) cannot overflow */
#define BLOOM_WINDOW_MAX_US		((int64_t) 1 << 61)
/* "newest" of a window to which nothing was added yet */
#define BLOOM_WINDOW_NO_SLICE	INT64_MIN

/* the "ignored" counter stops here, so that it is a bigint in SQL */
#define BLOOM_WINDOW_MAX_IGNORED ((uint64_t) INT64_MAX)

/* the range of timestamptz, in microseconds since 2000-01-01 00:00 UTC */
#define BLOOM_WINDOW_TIME_MIN	INT64_C(-211813488000000000)
#define BLOOM_WINDOW_TIME_END	INT64_C(9223371331200000000)

/* offsets of the fields that change as values are added */
#define BLOOM_WINDOW_NEWEST_OFFSET	16
#define BLOOM_WINDOW_IGNORED_OFFSET 24

/* decoded header, host byte order */
typedef struct BloomWindowHeader
{
	uint16_t	version;
	uint16_t	nslices;		/* N: the window is N slices long */
	int64_t		slice_us;		/* S: width of a slice in microseconds */
	int64_t		newest;			/* newest slice stored, or NO_SLICE */
	uint64_t	ignored;		/* adds older than the oldest slice stored,
								 * at most BLOOM_WINDOW_MAX_IGNORED */
	int64_t		capacity;		/* distinct keys per window it is sized for */
	double		fpr;			/* target rate of all live slices together */
	BloomHeader slot;			/* slot 0's header; every slot agrees */
} BloomWindowHeader;

typedef enum BloomWindowError
{
	BLOOM_WINDOW_OK = 0,
	BLOOM_WINDOW_ERR_TOO_SHORT,
	BLOOM_WINDOW_ERR_MAGIC,
	BLOOM_WINDOW_ERR_VERSION,
	BLOOM_WINDOW_ERR_NSLICES,
	BLOOM_WINDOW_ERR_SLICE_WIDTH,
	BLOOM_WINDOW_ERR_NEWEST,
	BLOOM_WINDOW_ERR_IGNORED,
	BLOOM_WINDOW_ERR_RESERVED,
	BLOOM_WINDOW_ERR_CAPACITY,
	BLOOM_WINDOW_ERR_FPR,
	BLOOM_WINDOW_ERR_SLOT,		/* a slot is not a valid bloomfilter */
	BLOOM_WINDOW_ERR_LENGTH,
	BLOOM_WINDOW_ERR_TOO_LARGE,
	BLOOM_WINDOW_ERR_SLOT_MISMATCH,
	BLOOM_WINDOW_ERR_SLOT_SIZING,
	BLOOM_WINDOW_ERR_EMPTY
} BloomWindowError;

/*
 * Validate a whole value.  On BLOOM_WINDOW_ERR_SLOT, *slot_err says what is
 * wrong with the slot (slot_err may be NULL).
 */
extern BloomWindowError bloom_window_read(const uint8_t *buf, size_t len,
										  BloomWindowHeader *hdr,
										  BloomError *slot_err);
extern const char *bloom_window_error_message(BloomWindowError err);

/* the window header alone (the slots are written by bloom_header_write) */
extern void bloom_window_header_write(uint8_t *buf, const BloomWindowHeader *hdr);

/*
 * Lay out an empty window in buf (bloom_window_size() bytes, zeroed by the
 * caller) and fill *hdr.  The slots get capacity = capacity per window and
 * fpr = fpr / (nslices + 1), the share of the rate each slice is sized for.
 */
extern void bloom_window_init(uint8_t *buf, BloomWindowHeader *hdr,
							  int nslices, int64_t slice_us, int64_t capacity,
							  double fpr, uint64_t nblocks, int nhashes,
							  int64_t seed);
extern double bloom_window_slot_fpr(double fpr, int nslices);

static inline size_t
bloom_window_slot_size(uint64_t nblocks)
{
	return bloom_total_size(nblocks);
}

static inline size_t
bloom_window_size(int nslices, uint64_t nblocks)
{
	return BLOOM_WINDOW_HEADER_SIZE +
		(size_t) (nslices + 1) * bloom_window_slot_size(nblocks);
}

/* the bloomfilter of slot j (0 <= j <= nslices) */
static inline uint8_t *
bloom_window_slot(uint8_t *buf, const BloomWindowHeader *hdr, int j)
{
	return buf + BLOOM_WINDOW_HEADER_SIZE +
		(size_t) j * bloom_window_slot_size(hdr->slot.nblocks);
}

/* the slice holding time t (microseconds since 2000-01-01 UTC): floor(t / S) */
static inline int64_t
bloom_window_slice_of(int64_t t, int64_t slice_us)
{
	int64_t		q = t / slice_us;

	return (t % slice_us != 0 && t < 0) ? q - 1 : q;
}

/* the slot of slice i: i mod (N + 1), never negative */
static inline int
bloom_window_slot_of(int64_t slice, int nslices)
{
	int64_t		r = slice % (nslices + 1);

	return (int) (r < 0 ? r + nslices + 1 : r);
}

/*
 * Where an add to slice i goes.  Makes i the newest slice if it is newer
 * than the newest stored (clearing the slots of the slices it drops) and
 * returns its slot; returns -1, changing nothing, when i is older than the
 * oldest slice stored.  Updates hdr and the bytes in buf.
 */
extern int	bloom_window_prepare_add(uint8_t *buf, BloomWindowHeader *hdr,
									 int64_t slice);

/*
 * The slices consulted by a lookup at a time in slice i: those of
 * i - N .. i that are stored.  False when there are none.
 */
extern bool bloom_window_live_range(const BloomWindowHeader *hdr, int64_t slice,
									int64_t *lo, int64_t *hi);

/* true = probably added within the window before a time in slice i */
extern bool bloom_window_test_hash(const uint8_t *buf, const BloomWindowHeader *hdr,
								   int64_t slice, uint64_t h);

/*
 * Comparison of two windows for union and equality: the first window
 * parameter in which they differ (the slots' own parameters are then
 * compared with bloom_compare_params).
 */
typedef enum BloomWindowDiff
{
	BLOOM_WINDOW_SAME = 0,
	BLOOM_WINDOW_DIFF_NSLICES,
	BLOOM_WINDOW_DIFF_SLICE_WIDTH,
	BLOOM_WINDOW_DIFF_CAPACITY,
	BLOOM_WINDOW_DIFF_FPR,
	BLOOM_WINDOW_DIFF_SEED
} BloomWindowDiff;

extern BloomWindowDiff bloom_window_compare(const BloomWindowHeader *a,
											const BloomWindowHeader *b);

/*
 * dst := dst union src, for windows that compare equal (including their
 * slots' parameters).  The newest slice is the newer of the two; slices of
 * either that fall out of the result's range are dropped, as they would
 * be by adding src's keys to dst one by one in time order.  The slots'
 * "inserted" counters are left for the caller to recompute; "ignored"
 * becomes the sum.  An empty dst must take src's family first.
 */
extern void bloom_window_union(uint8_t *dst, BloomWindowHeader *dsthdr,
							   const uint8_t *src, const BloomWindowHeader *srchdr);

/* same answers: same bytes except the "ignored" and "inserted" counters */
extern bool bloom_window_equal(const uint8_t *a, size_t alen,
							   const uint8_t *b, size_t blen);

#endif							/* BLOOM_WINDOW_H */
