/*-------------------------------------------------------------------------
 *
 * bf_grow_io.c
 *	  The text form of a growing bloomfilter (docs/FORMAT.md section 9.4):
 *	  its parameters, then each layer in the text form of a plain filter;
 *	  and of the union form (section 10.3), whose parameters are only the
 *	  summed capacity and the rate bound.
 *	  bloomfilter_in and bloomfilter_out come here for the growing form;
 *	  the binary forms are the bytes themselves (bf_value_io.c).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_grow.h"

#include <errno.h>
#include <stdlib.h>

#include "common/shortest_dec.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"


#define BAD_GROW_TEXT(ctx, det) \
	BF_INPUT_ERROR(ctx, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
						 errmsg("invalid input syntax for type bloomfilter"), \
						 errdetail det, \
						 errhint("The form is \"" BF_GROW_TEXT_PREFIX " capacity=... fpr=... ratio=... growth=... layer=bloomfilter:1 ... layer=...\" (\"" BF_UNION_TEXT_PREFIX " capacity=... fpr=... layer=...\" for a union), exactly as bloomfilter output prints it.")))

/* a float8 field printed as float8 output prints it */
static bool
float_field(const char **p, const char *key, double *out)
{
	char		val[64];
	char	   *end;

	if (!bf_take_field(p, key, val, sizeof(val)))
		return false;
	errno = 0;
	*out = strtod(val, &end);
	return errno == 0 && *end == '\0';
}

Datum
bf_grow_text_in(const char *str, bool is_union, Node *escontext)
{
	const char *p = str + strlen(is_union ? BF_UNION_TEXT_PREFIX : BF_GROW_TEXT_PREFIX);
	char		val[64];
	int64		v;
	BloomGrowHeader gh;
	StringInfoData bytes;
	BloomError	layer_err = BLOOM_OK;
	BloomGrowError err;
	struct varlena *vl;
	char	   *again;
	uint64		blocks = 0;

	memset(&gh, 0, sizeof(gh));
	gh.is_union = is_union;
	gh.version = BLOOM_GROW_VERSION;
	if (!bf_take_field(&p, "capacity", val, sizeof(val)) ||
		!bf_int_field(val, is_union ? 0 : 1, PG_INT64_MAX, &gh.capacity))
		BAD_GROW_TEXT(escontext, ("Expected \"capacity=\" and a %s bigint.",
								  is_union ? "non-negative" : "positive"));
	if (!float_field(&p, "fpr", &gh.fpr))
		BAD_GROW_TEXT(escontext, ("Expected \"fpr=\" and a number."));
	if (!is_union)
	{
		if (!float_field(&p, "ratio", &gh.ratio))
			BAD_GROW_TEXT(escontext, ("Expected \"ratio=\" and a number."));
		if (!bf_take_field(&p, "growth", val, sizeof(val)) ||
			!bf_int_field(val, BLOOM_GROW_MIN_GROWTH, BLOOM_GROW_MAX_GROWTH, &v))
			BAD_GROW_TEXT(escontext, ("Expected \"growth=\" and a number from %d to %d.",
									  BLOOM_GROW_MIN_GROWTH, BLOOM_GROW_MAX_GROWTH));
		gh.growth = (uint32) v;
	}

	/* the bytes: a header, then each layer as bloomfilter input reads it */
	initStringInfo(&bytes);
	enlargeStringInfo(&bytes, BLOOM_GROW_HEADER_SIZE);
	bytes.len = BLOOM_GROW_HEADER_SIZE;
	while (strncmp(p, " layer=", 7) == 0 && gh.nlayers < BLOOM_GROW_MAX_LAYERS)
	{
		const char *e = bf_filter_text_end(p + 7);
		struct varlena *layer;

		if (e == NULL)
			break;
		layer = bf_read_filter_text(p + 7, e - (p + 7), "layer", gh.nlayers,
									"bloomfilter", escontext);
		if (layer == NULL)
			return (Datum) 0;	/* soft error, already saved */
		blocks += (BF_PAYLOAD_LEN(layer) - BLOOM_HEADER_SIZE) / BLOOM_BLOCK_BYTES;
		if (blocks > BLOOM_MAX_BLOCKS)
			BAD_GROW_TEXT(escontext, ("%s", bloom_grow_error_message(BLOOM_GROW_ERR_TOO_LARGE)));
		appendBinaryStringInfoNT(&bytes, (const char *) BF_PAYLOAD(layer),
								 BF_PAYLOAD_LEN(layer));
		pfree(layer);
		gh.nlayers++;
		p = e;
	}
	if (gh.nlayers == 0)
		BAD_GROW_TEXT(escontext, ("Expected \"layer=\" fields, each a bloomfilter in its text form."));
	if (*p != '\0')
		BAD_GROW_TEXT(escontext, ("Unexpected text after layer %d.", gh.nlayers - 1));

	bloom_grow_header_write((uint8 *) bytes.data, &gh);
	err = bloom_grow_read((const uint8 *) bytes.data, bytes.len, &gh, &layer_err);
	if (err != BLOOM_GROW_OK)
		BF_INPUT_ERROR(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloomfilter"),
						errdetail_internal("%s", bloom_grow_error_message(err))));
	vl = palloc_extended(VARHDRSZ + bytes.len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, VARHDRSZ + bytes.len);
	memcpy(VARDATA(vl), bytes.data, bytes.len);
	pfree(bytes.data);

	/* one text per value: another spelling of the same numbers is refused */
	again = bf_grow_text_out(vl);
	if (strcmp(again, str) != 0)
		BAD_GROW_TEXT(escontext, ("The text is not the one bloomfilter output prints for the value it denotes."));
	pfree(again);
	return PointerGetDatum(vl);
}

char *
bf_grow_text_out(struct varlena *vl)
{
	BloomGrowHeader gh;
	char		fprbuf[DOUBLE_SHORTEST_DECIMAL_LEN];
	char		ratiobuf[DOUBLE_SHORTEST_DECIMAL_LEN];
	StringInfoData buf;
	BloomHeader h;
	size_t		next = 0;
	size_t		off;

	bf_grow_read(vl, &gh, ERRCODE_DATA_CORRUPTED);
	double_to_shortest_decimal_buf(gh.fpr, fprbuf);
	double_to_shortest_decimal_buf(gh.ratio, ratiobuf);
	initStringInfo(&buf);
	if (gh.is_union)
		appendStringInfo(&buf, BF_UNION_TEXT_PREFIX " capacity=" INT64_FORMAT " fpr=%s",
						 gh.capacity, fprbuf);
	else
		appendStringInfo(&buf, BF_GROW_TEXT_PREFIX " capacity=" INT64_FORMAT " fpr=%s ratio=%s growth=%u",
						 gh.capacity, fprbuf, ratiobuf, gh.growth);
	while ((off = bloom_grow_next_layer(BF_PAYLOAD(vl), &gh, &next, &h)) != 0)
	{
		size_t		len = bloom_total_size(h.nblocks);
		struct varlena *layer = palloc_extended(VARHDRSZ + len, MCXT_ALLOC_HUGE);
		BfFilter	f;
		char	   *text;

		SET_VARSIZE(layer, VARHDRSZ + len);
		memcpy(VARDATA(layer), BF_PAYLOAD(vl) + off, len);
		f = bf_fetch(PointerGetDatum(layer));
		text = bf_text_out(&f);
		appendStringInfoString(&buf, " layer=");
		appendStringInfoString(&buf, text);
		pfree(text);
		pfree(layer);
	}
	return buf.data;
}
