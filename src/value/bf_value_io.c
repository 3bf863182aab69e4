/*-------------------------------------------------------------------------
 *
 * bf_value_io.c
 *	  Input/output functions of the bloomfilter type: the text form
 *	  (bf_value_text.c for a plain filter, bf_grow_io.c for a growing
 *	  one), binary send/recv and the casts to and from bytea, which all
 *	  carry the portable bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "bf_grow.h"

#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

PG_FUNCTION_INFO_V1(bloomfilter_in);
Datum
bloomfilter_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	struct varlena *vl;

	if (strncmp(str, BF_GROW_TEXT_PREFIX " ", strlen(BF_GROW_TEXT_PREFIX) + 1) == 0)
		return bf_grow_text_in(str, false, fcinfo->context);
	if (strncmp(str, BF_UNION_TEXT_PREFIX " ", strlen(BF_UNION_TEXT_PREFIX) + 1) == 0)
		return bf_grow_text_in(str, true, fcinfo->context);
	vl = bf_text_in(str, fcinfo->context);
	/* NULL: a soft error, which the caller finds in its context */
	return PointerGetDatum(vl);
}

PG_FUNCTION_INFO_V1(bloomfilter_out);
Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));

	/* a growing filter prints its layers, each in a plain filter's form */
	if (f.hdr.family == BF_FAMILY_GROWING)
		PG_RETURN_CSTRING(bf_grow_text_out(f.vl));
	PG_RETURN_CSTRING(bf_text_out(&f));
}

/* copy and validate portable bytes into a new bloomfilter datum */
static struct varlena *
from_bytes(const uint8 *data, size_t len, int sqlstate)
{
	BloomHeader hdr;
	BloomError	err;
	struct varlena *vl;

	if (bloom_is_layered(data, len))
	{
		BloomGrowHeader gh;

		bf_grow_check(data, len, &gh, sqlstate);
		hdr = gh.first;
	}
	else if ((err = bloom_header_read(data, len, &hdr)) != BLOOM_OK)
		bf_report_error(err, sqlstate);
	/* a non-portable filter names its type by OID: it must exist here */
	if (hdr.family == BF_FAMILY_OTHER && !bf_other_type_ok((Oid) hdr.detail))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloomfilter value"),
				 errdetail("The filter holds values of a non-portable type with OID %u, which does not exist in this database or cannot be the element type of a filter.",
						   hdr.detail),
				 errhint("Non-portable filters can only be moved between databases in their text form, which names the type.")));
	vl = palloc_extended(VARHDRSZ + len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, VARHDRSZ + len);
	memcpy(VARDATA(vl), data, len);
	return vl;
}

PG_FUNCTION_INFO_V1(bloomfilter_recv);
Datum
bloomfilter_recv(PG_FUNCTION_ARGS)
{
	StringInfo	buf = (StringInfo) PG_GETARG_POINTER(0);
	int			len = buf->len - buf->cursor;
	const char *data = pq_getmsgbytes(buf, len);

	PG_RETURN_POINTER(from_bytes((const uint8 *) data, len,
								 ERRCODE_INVALID_BINARY_REPRESENTATION));
}

PG_FUNCTION_INFO_V1(bloomfilter_send);
Datum
bloomfilter_send(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbytes(&buf, (const char *) BF_PAYLOAD(f.vl), BF_PAYLOAD_LEN(f.vl));
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* bytea -> bloomfilter: the bytes must be a valid filter */
PG_FUNCTION_INFO_V1(bloomfilter_from_bytea);
Datum
bloomfilter_from_bytea(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);

	PG_RETURN_POINTER(from_bytes((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
								 ERRCODE_INVALID_BINARY_REPRESENTATION));
}

/* bloomfilter -> bytea: the payload already is the portable form */
PG_FUNCTION_INFO_V1(bloomfilter_to_bytea);
Datum
bloomfilter_to_bytea(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(f.vl);
}
