/*-------------------------------------------------------------------------
 *
 * bf_patch.c
 *	  Writing change sets (docs/FORMAT.md, "Change sets"), shared by the
 *	  index's bf_index_changes and the trigger method's bf_tracked_changes.
 *
 * A patch opens with the run of the value's 64-byte header, whose bytes
 * the caller fills in last (the index computes its "inserted" estimate
 * from the bits it read); ranges that follow it directly merge into it.
 * When nothing but the header run was added and the header did not
 * change, the patch has no runs at all.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_patch.h"

#include "bf_compat.h"		/* SET_VARSIZE: varatt.h on 16+ */
#include "funcapi.h"
#include "utils/pg_lsn.h"
#include "utils/tuplestore.h"

#define BF_PATCH_MAGIC		"BLMP"
#define BF_PATCH_VERSION	1
#define BF_PATCH_FULL		0x01
#define BF_PATCH_HEADER		24
#define BF_RUN_HEADER		16

static void
put_le(uint8 *dst, uint64 v, int nbytes)
{
	for (int i = 0; i < nbytes; i++)
		dst[i] = (uint8) (v >> (8 * i));
}

static uint8 *
reserve(BfPatch *pb, Size n)
{
	uint8	   *p;

	if (pb->len + n > pb->cap)
	{
		Size		cap = Max(pb->cap * 2, pb->len + n);

		pb->data = repalloc_huge(pb->data, cap);
		pb->cap = cap;
	}
	p = pb->data + pb->len;
	pb->len += n;
	return p;
}

/* start a patch whose first run is the header (head_len zero bytes) */
void
bf_patch_begin(BfPatch *pb, Size head_len)
{
	static const uint8 zeros[64] = {0};

	Assert(head_len <= sizeof(zeros));
	memset(pb, 0, sizeof(*pb));
	pb->cap = VARHDRSZ + BF_PATCH_HEADER + BF_RUN_HEADER + head_len + BLCKSZ;
	pb->data = palloc(pb->cap);
	pb->len = VARHDRSZ + BF_PATCH_HEADER;
	pb->head_len = head_len;
	bf_patch_range(pb, 0, zeros, (uint32) head_len);
	pb->changed = false;
}

/* where the header run's bytes are, to be filled in before finishing */
uint8 *
bf_patch_head(BfPatch *pb)
{
	return pb->data + VARHDRSZ + BF_PATCH_HEADER + BF_RUN_HEADER;
}

/*
 * Append n bytes at value offset off, extending the last run if adjacent.
 * Returns where they are in pb->data, to fill in later (bf_patch_at).
 */
Size
bf_patch_range(BfPatch *pb, uint64 off, const uint8 *src, uint32 n)
{
	Size		at;

	if (pb->nruns > 0 && off == pb->run_end)
	{
		uint8	   *hdr = pb->data + pb->run_at;
		uint64		start = 0;

		for (int i = 7; i >= 0; i--)
			start = (start << 8) | hdr[i];
		put_le(hdr + 8, off + n - start, 4);
	}
	else
	{
		uint8	   *hdr;

		pb->run_at = pb->len;
		hdr = reserve(pb, BF_RUN_HEADER);
		put_le(hdr, off, 8);
		put_le(hdr + 8, n, 4);
		put_le(hdr + 12, 0, 4);
		pb->nruns++;
	}
	at = pb->len;
	memcpy(reserve(pb, n), src, n);
	pb->run_end = off + n;
	pb->changed = true;
	return at;
}

/*
 * The finished patch for a value of total bytes.  Unless full, or a range
 * was added, or header_changed, it drops the header run: nothing changed.
 */
bytea *
bf_patch_finish(BfPatch *pb, bool full, bool header_changed, uint64 total)
{
	uint8	   *p = pb->data + VARHDRSZ;

	if (!full && !pb->changed && !header_changed)
	{
		pb->len = VARHDRSZ + BF_PATCH_HEADER;
		pb->nruns = 0;
	}
	memcpy(p, BF_PATCH_MAGIC, 4);
	put_le(p + 4, BF_PATCH_VERSION, 2);
	p[6] = full ? BF_PATCH_FULL : 0;
	p[7] = 0;
	put_le(p + 8, total, 8);
	put_le(p + 16, pb->nruns, 4);
	put_le(p + 20, 0, 4);
	SET_VARSIZE(pb->data, pb->len);
	return (bytea *) pb->data;
}

Datum
bf_changes_result(FunctionCallInfo fcinfo, uint64 next, bool full, bytea *patch)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[3];
	bool		nulls[3] = {false};

	values[0] = LSNGetDatum((XLogRecPtr) next);
	values[1] = BoolGetDatum(full);
	values[2] = PointerGetDatum(patch);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	return (Datum) 0;
}
