/*-------------------------------------------------------------------------
 *
 * bf_window_io.c
 *	  Input/output of the bloomwindow type: the text form (the window's
 *	  parameters, then each slot in the text form of a bloomfilter;
 *	  docs/FORMAT.md section 7.4), binary send/recv and the casts to and
 *	  from bytea, which carry the portable bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_window.h"

#include <math.h>

#include "common/shortest_dec.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"

#define BW_TEXT_PREFIX "bloomwindow:1"

/* the slots are printed by the bloomfilter type's own output function */

#define BAD_WINDOW_TEXT(ctx, det) \
	BF_INPUT_ERROR(ctx, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
						 errmsg("invalid input syntax for type bloomwindow"), \
						 errdetail det, \
						 errhint("The form is \"" BW_TEXT_PREFIX " slices=... slice_us=... capacity=... fpr=... newest=... ignored=... slot=bloomfilter:1 ... slot=...\", as bloomwindow output prints it.")))

PG_FUNCTION_INFO_V1(bloomwindow_in);
Datum
bloomwindow_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	Node	   *escontext = fcinfo->context;
	const char *p = str;
	char		val[64];
	char	   *end;
	int64		v;
	BloomWindowHeader hdr;
	struct varlena *vl = NULL;
	size_t		slotsize = 0;
	BloomError	slot_err;
	BloomWindowError err;

	memset(&hdr, 0, sizeof(hdr));
	hdr.version = BLOOM_WINDOW_VERSION;
	if (strncmp(p, BW_TEXT_PREFIX, strlen(BW_TEXT_PREFIX)) != 0)
		BAD_WINDOW_TEXT(escontext, ("The value does not start with \"%s\".", BW_TEXT_PREFIX));
	p += strlen(BW_TEXT_PREFIX);
	if (!bf_take_field(&p, "slices", val, sizeof(val)) ||
		!bf_int_field(val, 1, BLOOM_WINDOW_MAX_SLICES, &v))
		BAD_WINDOW_TEXT(escontext, ("Expected \"slices=\" and a number from 1 to %d.", BLOOM_WINDOW_MAX_SLICES));
	hdr.nslices = (uint16) v;
	if (!bf_take_field(&p, "slice_us", val, sizeof(val)) ||
		!bf_int_field(val, 1, BLOOM_WINDOW_MAX_US / hdr.nslices, &hdr.slice_us))
		BAD_WINDOW_TEXT(escontext, ("Expected \"slice_us=\" and a positive number of microseconds."));
	if (!bf_take_field(&p, "capacity", val, sizeof(val)) ||
		!bf_int_field(val, 1, PG_INT64_MAX, &hdr.capacity))
		BAD_WINDOW_TEXT(escontext, ("Expected \"capacity=\" and a positive bigint."));
	if (!bf_take_field(&p, "fpr", val, sizeof(val)))
		BAD_WINDOW_TEXT(escontext, ("Expected \"fpr=\" and a number."));
	errno = 0;
	hdr.fpr = strtod(val, &end);
	if (errno != 0 || *end != '\0' || !(hdr.fpr > 0.0 && hdr.fpr < 1.0))
		BAD_WINDOW_TEXT(escontext, ("Expected \"fpr=\" and a number between 0 and 1."));
	if (!bf_take_field(&p, "newest", val, sizeof(val)))
		BAD_WINDOW_TEXT(escontext, ("Expected \"newest=\" and a slice number or \"none\"."));
	if (strcmp(val, "none") == 0)
		hdr.newest = BLOOM_WINDOW_NO_SLICE;
	else if (!bf_int_field(val, PG_INT64_MIN + 1, PG_INT64_MAX, &hdr.newest))
		BAD_WINDOW_TEXT(escontext, ("Expected \"newest=\" and a slice number or \"none\"."));
	if (!bf_take_field(&p, "ignored", val, sizeof(val)) ||
		!bf_int_field(val, 0, PG_INT64_MAX, &v))
		BAD_WINDOW_TEXT(escontext, ("Expected \"ignored=\" and a non-negative bigint."));
	hdr.ignored = (uint64) v;

	for (int j = 0; j <= hdr.nslices; j++)
	{
		const char *e;
		struct varlena *slot;

		if (strncmp(p, " slot=", 6) != 0 || (e = bf_filter_text_end(p + 6)) == NULL)
			BAD_WINDOW_TEXT(escontext, ("Expected %d \"slot=\" fields, each a bloomfilter in its text form; found %d.",
										hdr.nslices + 1, j));
		slot = bf_read_filter_text(p + 6, e - (p + 6), "slot", j, "bloomwindow", escontext);
		if (slot == NULL)
			return (Datum) 0;	/* soft error, already saved */
		if (vl == NULL)
		{
			/* slot 0 gives the size of every slot */
			slotsize = BF_PAYLOAD_LEN(slot);
			if ((slotsize - BLOOM_HEADER_SIZE) / BLOOM_BLOCK_BYTES >
				BLOOM_MAX_BLOCKS / (hdr.nslices + 1))
				BAD_WINDOW_TEXT(escontext, ("%s", bloom_window_error_message(BLOOM_WINDOW_ERR_TOO_LARGE)));
			vl = palloc_extended(VARHDRSZ + BLOOM_WINDOW_HEADER_SIZE +
								 (hdr.nslices + 1) * slotsize, MCXT_ALLOC_HUGE);
			SET_VARSIZE(vl, VARHDRSZ + BLOOM_WINDOW_HEADER_SIZE + (hdr.nslices + 1) * slotsize);
		}
		else if (BF_PAYLOAD_LEN(slot) != slotsize)
			BAD_WINDOW_TEXT(escontext, ("Slot %d has %zu bytes, slot 0 has %zu.",
										j, BF_PAYLOAD_LEN(slot), slotsize));
		memcpy(BW_PAYLOAD(vl) + BLOOM_WINDOW_HEADER_SIZE + j * slotsize,
			   BF_PAYLOAD(slot), slotsize);
		pfree(slot);
		p = e;
	}
	if (*p != '\0')
		BAD_WINDOW_TEXT(escontext, ("Unexpected text after the last slot."));

	bloom_window_header_write(BW_PAYLOAD(vl), &hdr);
	err = bloom_window_read(BW_PAYLOAD(vl), BW_PAYLOAD_LEN(vl), &hdr, &slot_err);
	if (err != BLOOM_WINDOW_OK)
	{
		pfree(vl);
		BF_INPUT_ERROR(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloomwindow"),
						errdetail_internal("%s", bloom_window_error_message(err))));
	}
	PG_RETURN_POINTER(vl);
}

PG_FUNCTION_INFO_V1(bloomwindow_out);
Datum
bloomwindow_out(PG_FUNCTION_ARGS)
{
	BwWindow	w = bw_fetch(PG_GETARG_DATUM(0));
	size_t		slotsize = bloom_window_slot_size(w.hdr.slot.nblocks);
	char		fprbuf[DOUBLE_SHORTEST_DECIMAL_LEN];
	StringInfoData buf;
	struct varlena *slot = palloc_extended(VARHDRSZ + slotsize, MCXT_ALLOC_HUGE);

	double_to_shortest_decimal_buf(w.hdr.fpr, fprbuf);
	initStringInfo(&buf);
	appendStringInfo(&buf, BW_TEXT_PREFIX " slices=%u slice_us=" INT64_FORMAT " capacity=" INT64_FORMAT " fpr=%s newest=",
					 (unsigned) w.hdr.nslices, w.hdr.slice_us, w.hdr.capacity, fprbuf);
	if (w.hdr.newest == BLOOM_WINDOW_NO_SLICE)
		appendStringInfoString(&buf, "none");
	else
		appendStringInfo(&buf, INT64_FORMAT, w.hdr.newest);
	appendStringInfo(&buf, " ignored=" UINT64_FORMAT, w.hdr.ignored);
	SET_VARSIZE(slot, VARHDRSZ + slotsize);
	for (int j = 0; j <= w.hdr.nslices; j++)
	{
		BfFilter	f;
		char	   *text;

		memcpy(VARDATA(slot), bloom_window_slot(BW_PAYLOAD(w.vl), &w.hdr, j), slotsize);
		f = bf_fetch(PointerGetDatum(slot));
		text = bf_text_out(&f);
		appendStringInfoString(&buf, " slot=");
		appendStringInfoString(&buf, text);
		pfree(text);
	}
	pfree(slot);
	PG_RETURN_CSTRING(buf.data);
}

PG_FUNCTION_INFO_V1(bloomwindow_recv);
Datum
bloomwindow_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);

	PG_RETURN_POINTER(bw_from_bytes((const uint8 *) data, len,
									ERRCODE_INVALID_BINARY_REPRESENTATION));
}

PG_FUNCTION_INFO_V1(bloomwindow_send);
Datum
bloomwindow_send(PG_FUNCTION_ARGS)
{
	BwWindow	w = bw_fetch(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) BW_PAYLOAD(w.vl), BW_PAYLOAD_LEN(w.vl));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

PG_FUNCTION_INFO_V1(bloomwindow_from_bytea);
Datum
bloomwindow_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(bw_from_bytes((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
									ERRCODE_INVALID_BINARY_REPRESENTATION));
}

PG_FUNCTION_INFO_V1(bloomwindow_to_bytea);
Datum
bloomwindow_to_bytea(PG_FUNCTION_ARGS)
{
	BwWindow	w = bw_fetch(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(w.vl);
}
