/*-------------------------------------------------------------------------
 *
 * bloom_window.c
 *	  Sliding-window Bloom filters without PostgreSQL headers: validation
 *	  of the bytes of docs/FORMAT.md section 7, slice bookkeeping, lookup
 *	  and union.  Each slot is a bloomfilter of section 1 and is read and
 *	  written with bloom_core.
 *
 *-------------------------------------------------------------------------
 */
#include "bloom_window.h"

#include <string.h>

const char *
bloom_window_error_message(BloomWindowError err)
{
	switch (err)
	{
		case BLOOM_WINDOW_OK:
			return "no error";
		case BLOOM_WINDOW_ERR_TOO_SHORT:
			return "The value is shorter than its 64-byte header and one slot header.";
		case BLOOM_WINDOW_ERR_MAGIC:
			return "The value does not start with the bloomwindow magic bytes \"BLMW\".";
		case BLOOM_WINDOW_ERR_VERSION:
			return "The window format version is not 1, the only version this release reads.";
		case BLOOM_WINDOW_ERR_NSLICES:
			return "The number of slices is not between 1 and 1024.";
		case BLOOM_WINDOW_ERR_SLICE_WIDTH:
			return "The slice width is not positive or the window is longer than 2^61 microseconds.";
		case BLOOM_WINDOW_ERR_NEWEST:
			return "The newest slice lies outside the range of timestamptz.";
		case BLOOM_WINDOW_ERR_IGNORED:
			return "The count of ignored adds is 2^63 or more.";
		case BLOOM_WINDOW_ERR_RESERVED:
			return "The reserved header field is not zero.";
		case BLOOM_WINDOW_ERR_CAPACITY:
			return "The capacity per window is not positive.";
		case BLOOM_WINDOW_ERR_FPR:
			return "The target false-positive rate is not between 0 and 1.";
		case BLOOM_WINDOW_ERR_SLOT:
			return "A slot is not a valid bloomfilter.";
		case BLOOM_WINDOW_ERR_LENGTH:
			return "The length of the value disagrees with its number of slices and the size of its slots.";
		case BLOOM_WINDOW_ERR_TOO_LARGE:
			return "The slots together hold more than 8388608 blocks.";
		case BLOOM_WINDOW_ERR_SLOT_MISMATCH:
			return "The slots do not all have the same parameters and element family.";
		case BLOOM_WINDOW_ERR_SLOT_SIZING:
			return "The slots' capacity or false-positive rate disagrees with the window's.";
		case BLOOM_WINDOW_ERR_EMPTY:
			return "The element family and the newest slice disagree about whether anything was added.";
	}
	return "unknown error";
}

/* the share of the target rate each slice is sized for */
double
bloom_window_slot_fpr(double fpr, int nslices)
{
	return fpr / (double) (nslices + 1);
}

static bool
newest_valid(int64_t newest, int64_t slice_us)
{
	if (newest == BLOOM_WINDOW_NO_SLICE)
		return true;
	return newest >= bloom_window_slice_of(BLOOM_WINDOW_TIME_MIN, slice_us) &&
		newest <= bloom_window_slice_of(BLOOM_WINDOW_TIME_END - 1, slice_us);
}

BloomWindowError
bloom_window_read(const uint8_t *buf, size_t len, BloomWindowHeader *hdr,
				  BloomError *slot_err)
{
	uint64_t	fprbits;
	size_t		slotsize;
	int			nslots;
	BloomError	err;

	if (slot_err)
		*slot_err = BLOOM_OK;
	if (len < BLOOM_WINDOW_HEADER_SIZE + BLOOM_HEADER_SIZE)
		return BLOOM_WINDOW_ERR_TOO_SHORT;
	if (memcmp(buf, BLOOM_WINDOW_MAGIC, 4) != 0)
		return BLOOM_WINDOW_ERR_MAGIC;
	hdr->version = bloom_load_u16(buf + 4);
	hdr->nslices = bloom_load_u16(buf + 6);
	hdr->slice_us = (int64_t) bloom_load_u64(buf + 8);
	hdr->newest = (int64_t) bloom_load_u64(buf + 16);
	hdr->ignored = bloom_load_u64(buf + 24);
	hdr->capacity = (int64_t) bloom_load_u64(buf + 32);
	fprbits = bloom_load_u64(buf + 40);
	memcpy(&hdr->fpr, &fprbits, sizeof(double));

	if (hdr->version != BLOOM_WINDOW_VERSION)
		return BLOOM_WINDOW_ERR_VERSION;
	if (hdr->nslices < 1 || hdr->nslices > BLOOM_WINDOW_MAX_SLICES)
		return BLOOM_WINDOW_ERR_NSLICES;
	if (hdr->slice_us < 1 ||
		hdr->slice_us > BLOOM_WINDOW_MAX_US / hdr->nslices)
		return BLOOM_WINDOW_ERR_SLICE_WIDTH;
	if (!newest_valid(hdr->newest, hdr->slice_us))
		return BLOOM_WINDOW_ERR_NEWEST;
	if (hdr->ignored > BLOOM_WINDOW_MAX_IGNORED)
		return BLOOM_WINDOW_ERR_IGNORED;
	if (bloom_load_u64(buf + 48) != 0 || bloom_load_u64(buf + 56) != 0)
		return BLOOM_WINDOW_ERR_RESERVED;
	if (hdr->capacity < 1)
		return BLOOM_WINDOW_ERR_CAPACITY;
	if (!(hdr->fpr > 0.0 && hdr->fpr < 1.0))
		return BLOOM_WINDOW_ERR_FPR;

	/* slot 0 gives the size of every slot */
	nslots = hdr->nslices + 1;
	err = bloom_header_read(buf + BLOOM_WINDOW_HEADER_SIZE, BLOOM_HEADER_SIZE, &hdr->slot);
	if (err != BLOOM_OK && err != BLOOM_ERR_LENGTH)
	{
		if (slot_err)
			*slot_err = err;
		return BLOOM_WINDOW_ERR_SLOT;
	}
	if (hdr->slot.nblocks > BLOOM_MAX_BLOCKS / (uint64_t) nslots)
		return BLOOM_WINDOW_ERR_TOO_LARGE;
	slotsize = bloom_window_slot_size(hdr->slot.nblocks);
	if (len != bloom_window_size(hdr->nslices, hdr->slot.nblocks))
		return BLOOM_WINDOW_ERR_LENGTH;

	for (int j = 0; j < nslots; j++)
	{
		const uint8_t *slot = buf + BLOOM_WINDOW_HEADER_SIZE + (size_t) j * slotsize;
		BloomHeader sh;

		err = bloom_header_read(slot, slotsize, &sh);
		if (err != BLOOM_OK)
		{
			if (slot_err)
				*slot_err = err;
			return BLOOM_WINDOW_ERR_SLOT;
		}
		/* every header byte but "inserted" (offset 32) equals slot 0's */
		if (j > 0 &&
			(memcmp(slot, buf + BLOOM_WINDOW_HEADER_SIZE, BLOOM_INSERTED_OFFSET) != 0 ||
			 memcmp(slot + BLOOM_INSERTED_OFFSET + 8,
					buf + BLOOM_WINDOW_HEADER_SIZE + BLOOM_INSERTED_OFFSET + 8,
					BLOOM_HEADER_SIZE - BLOOM_INSERTED_OFFSET - 8) != 0))
			return BLOOM_WINDOW_ERR_SLOT_MISMATCH;
	}
	if (hdr->slot.capacity != hdr->capacity ||
		hdr->slot.fpr != bloom_window_slot_fpr(hdr->fpr, hdr->nslices))
		return BLOOM_WINDOW_ERR_SLOT_SIZING;
	if ((hdr->slot.family == BF_FAMILY_NONE) != (hdr->newest == BLOOM_WINDOW_NO_SLICE) ||
		(hdr->newest == BLOOM_WINDOW_NO_SLICE && hdr->ignored != 0))
		return BLOOM_WINDOW_ERR_EMPTY;
	return BLOOM_WINDOW_OK;
}

void
bloom_window_header_write(uint8_t *buf, const BloomWindowHeader *hdr)
{
	uint64_t	fprbits;

	memcpy(buf, BLOOM_WINDOW_MAGIC, 4);
	bloom_store_u16(buf + 4, hdr->version);
	bloom_store_u16(buf + 6, hdr->nslices);
	bloom_store_u64(buf + 8, (uint64_t) hdr->slice_us);
	bloom_store_u64(buf + 16, (uint64_t) hdr->newest);
	bloom_store_u64(buf + 24, hdr->ignored);
	bloom_store_u64(buf + 32, (uint64_t) hdr->capacity);
	memcpy(&fprbits, &hdr->fpr, sizeof(double));
	bloom_store_u64(buf + 40, fprbits);
	bloom_store_u64(buf + 48, 0);
	bloom_store_u64(buf + 56, 0);
}

void
bloom_window_init(uint8_t *buf, BloomWindowHeader *hdr, int nslices,
				  int64_t slice_us, int64_t capacity, double fpr,
				  uint64_t nblocks, int nhashes, int64_t seed)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->version = BLOOM_WINDOW_VERSION;
	hdr->nslices = (uint16_t) nslices;
	hdr->slice_us = slice_us;
	hdr->newest = BLOOM_WINDOW_NO_SLICE;
	hdr->capacity = capacity;
	hdr->fpr = fpr;
	bloom_header_init(&hdr->slot, nblocks, nhashes, seed, capacity,
					  bloom_window_slot_fpr(fpr, nslices));
	bloom_window_header_write(buf, hdr);
	for (int j = 0; j <= nslices; j++)
		bloom_header_write(bloom_window_slot(buf, hdr, j), &hdr->slot);
}

/* empty one slot, keeping its parameters and family */
static void
clear_slot(uint8_t *buf, const BloomWindowHeader *hdr, int j)
{
	uint8_t    *slot = bloom_window_slot(buf, hdr, j);

	bloom_store_u64(slot + BLOOM_INSERTED_OFFSET, 0);
	memset(slot + BLOOM_HEADER_SIZE, 0, hdr->slot.nblocks * BLOOM_BLOCK_BYTES);
}

/* make slice the newest, dropping the slices that fall out of range */
static void
advance(uint8_t *buf, BloomWindowHeader *hdr, int64_t slice)
{
	int64_t		first = slice - hdr->nslices;

	/* slots of slices newest + 1 .. slice are reused: at most N + 1 of them */
	if (hdr->newest != BLOOM_WINDOW_NO_SLICE && hdr->newest + 1 > first)
		first = hdr->newest + 1;
	for (int64_t i = first; i <= slice; i++)
		clear_slot(buf, hdr, bloom_window_slot_of(i, hdr->nslices));
	hdr->newest = slice;
	bloom_store_u64(buf + BLOOM_WINDOW_NEWEST_OFFSET, (uint64_t) slice);
}

int
bloom_window_prepare_add(uint8_t *buf, BloomWindowHeader *hdr, int64_t slice)
{
	if (hdr->newest == BLOOM_WINDOW_NO_SLICE || slice > hdr->newest)
		advance(buf, hdr, slice);
	else if (slice < hdr->newest - hdr->nslices)
		return -1;
	return bloom_window_slot_of(slice, hdr->nslices);
}

bool
bloom_window_live_range(const BloomWindowHeader *hdr, int64_t slice,
						int64_t *lo, int64_t *hi)
{
	if (hdr->newest == BLOOM_WINDOW_NO_SLICE)
		return false;
	/* slice - N cannot overflow: slice >= TIME_MIN / S - 1 */
	*lo = slice - hdr->nslices;
	if (*lo < hdr->newest - hdr->nslices)
		*lo = hdr->newest - hdr->nslices;
	*hi = slice < hdr->newest ? slice : hdr->newest;
	return *lo <= *hi;
}

bool
bloom_window_test_hash(const uint8_t *buf, const BloomWindowHeader *hdr,
					   int64_t slice, uint64_t h)
{
	int64_t		lo,
				hi;
	uint64_t	block;
	size_t		slotsize = bloom_window_slot_size(hdr->slot.nblocks);
	const uint8_t *base;

	if (!bloom_window_live_range(hdr, slice, &lo, &hi))
		return false;
	/* every slot has the same size and seed: one block offset for all */
	block = bloom_block_of(h, hdr->slot.nblocks);
	base = buf + BLOOM_WINDOW_HEADER_SIZE + BLOOM_HEADER_SIZE + block * BLOOM_BLOCK_BYTES;
	for (int64_t i = hi; i >= lo; i--)
	{
		int			j = bloom_window_slot_of(i, hdr->nslices);

		if (bloom_block_test(base + (size_t) j * slotsize, hdr->slot.nhashes, h))
			return true;
	}
	return false;
}

BloomWindowDiff
bloom_window_compare(const BloomWindowHeader *a, const BloomWindowHeader *b)
{
	if (a->nslices != b->nslices)
		return BLOOM_WINDOW_DIFF_NSLICES;
	if (a->slice_us != b->slice_us)
		return BLOOM_WINDOW_DIFF_SLICE_WIDTH;
	if (a->capacity != b->capacity)
		return BLOOM_WINDOW_DIFF_CAPACITY;
	if (memcmp(&a->fpr, &b->fpr, sizeof(double)) != 0)
		return BLOOM_WINDOW_DIFF_FPR;
	if (a->slot.seed != b->slot.seed)
		return BLOOM_WINDOW_DIFF_SEED;
	return BLOOM_WINDOW_SAME;
}

void
bloom_window_union(uint8_t *dst, BloomWindowHeader *dsthdr,
				   const uint8_t *src, const BloomWindowHeader *srchdr)
{
	int64_t		lo,
				hi;
	size_t		nbytes = dsthdr->slot.nblocks * BLOOM_BLOCK_BYTES;
	uint64_t	ignored = dsthdr->ignored + srchdr->ignored;

	if (ignored > BLOOM_WINDOW_MAX_IGNORED)
		ignored = BLOOM_WINDOW_MAX_IGNORED;
	dsthdr->ignored = ignored;
	bloom_store_u64(dst + BLOOM_WINDOW_IGNORED_OFFSET, ignored);
	if (srchdr->newest == BLOOM_WINDOW_NO_SLICE)
		return;
	if (dsthdr->newest == BLOOM_WINDOW_NO_SLICE || srchdr->newest > dsthdr->newest)
		advance(dst, dsthdr, srchdr->newest);
	/* src's slices that the result still holds */
	lo = srchdr->newest - srchdr->nslices;
	if (lo < dsthdr->newest - dsthdr->nslices)
		lo = dsthdr->newest - dsthdr->nslices;
	hi = srchdr->newest;
	for (int64_t i = lo; i <= hi; i++)
	{
		int			j = bloom_window_slot_of(i, dsthdr->nslices);

		bloom_or(bloom_window_slot(dst, dsthdr, j) + BLOOM_HEADER_SIZE,
				 bloom_window_slot((uint8_t *) src, srchdr, j) + BLOOM_HEADER_SIZE,
				 nbytes);
	}
}

bool
bloom_window_equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t		slotsize;
	int			nslots;

	if (alen != blen || alen < BLOOM_WINDOW_HEADER_SIZE + BLOOM_HEADER_SIZE)
		return false;
	if (memcmp(a, b, BLOOM_WINDOW_IGNORED_OFFSET) != 0 ||
		memcmp(a + BLOOM_WINDOW_IGNORED_OFFSET + 8, b + BLOOM_WINDOW_IGNORED_OFFSET + 8,
			   BLOOM_WINDOW_HEADER_SIZE - BLOOM_WINDOW_IGNORED_OFFSET - 8) != 0)
		return false;
	/* equal window headers and lengths: the slots have the same layout */
	nslots = bloom_load_u16(a + 6) + 1;
	slotsize = (alen - BLOOM_WINDOW_HEADER_SIZE) / (size_t) nslots;
	for (int j = 0; j < nslots; j++)
	{
		const uint8_t *sa = a + BLOOM_WINDOW_HEADER_SIZE + (size_t) j * slotsize;
		const uint8_t *sb = b + BLOOM_WINDOW_HEADER_SIZE + (size_t) j * slotsize;

		if (memcmp(sa, sb, BLOOM_INSERTED_OFFSET) != 0 ||
			memcmp(sa + BLOOM_INSERTED_OFFSET + 8, sb + BLOOM_INSERTED_OFFSET + 8,
				   slotsize - BLOOM_INSERTED_OFFSET - 8) != 0)
			return false;
	}
	return true;
}
