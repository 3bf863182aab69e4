/*-------------------------------------------------------------------------
 *
 * bf_io.c
 *	  Input/output of the bloomfilter type: the text form (parameters,
 *	  then the bits in base64; docs/FORMAT.md section 5), binary send/recv
 *	  and the casts to and from bytea, which all carry the portable bytes.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include "bloom_text.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/*
 * family=other(NAME): the type NAME denotes, if a filter can hold it.  The
 * name is looked up directly rather than through the SQL parser, so that
 * any text is either a known type or a clean "no such type".  No privilege
 * is needed: pg_type is readable by everyone.
 */
static bool
resolve_type(void *arg, const char *name, size_t len, uint32 *oid)
{
	BloomTypeName tn;
	Oid			nsp;
	Oid			typid;

	if (!bloom_type_name_parse(name, len, &tn))
		return false;
	nsp = get_namespace_oid(tn.schema, true);
	if (!OidIsValid(nsp))
		return false;
	typid = GetSysCacheOid2(TYPENAMENSP, Anum_pg_type_oid,
							CStringGetDatum(tn.name), ObjectIdGetDatum(nsp));
	if (OidIsValid(typid) && tn.array)
		typid = get_array_type(typid);
	if (!OidIsValid(typid) || !bf_other_type_ok(typid))
		return false;
	*oid = typid;
	return true;
}

PG_FUNCTION_INFO_V1(bloomfilter_in);
Datum
bloomfilter_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	Node	   *escontext = fcinfo->context;
	BloomText	t;
	BloomError	err;

	if (strncmp(str, BF_GROW_TEXT_PREFIX " ", strlen(BF_GROW_TEXT_PREFIX) + 1) == 0)
		return bf_grow_text_in(str, escontext);
	err = bloom_text_parse(str, strlen(str), resolve_type, NULL, &t);
	if (err == BLOOM_OK)
	{
		struct varlena *vl = palloc_extended(BF_DATUM_SIZE(t.hdr.nblocks),
											 MCXT_ALLOC_HUGE);

		SET_VARSIZE(vl, BF_DATUM_SIZE(t.hdr.nblocks));
		err = bloom_text_decode(&t, BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl));
		if (err == BLOOM_OK)
			PG_RETURN_POINTER(vl);
		pfree(vl);
	}
	if (err == BLOOM_ERR_TEXT_TYPE)
		BF_INPUT_ERROR(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloomfilter"),
						errdetail("Type \"%s\" does not exist in this database or cannot be the element type of a non-portable filter.",
								  pnstrdup(t.typname, t.typnamelen)),
						errhint("Create the type before loading filters of it; a non-portable filter names its type as format_type() prints it, schema-qualified.")));
	BF_INPUT_ERROR(escontext,
				   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					errmsg("invalid input syntax for type bloomfilter"),
					errdetail_internal("%s", bloom_error_message(err)),
					err >= BLOOM_ERR_TEXT_PREFIX ?
					errhint("The form is \"" BLOOM_TEXT_PREFIX " layout=blocked hash=xxh3_64 family=... nhashes=... nbits=... seed=... capacity=... fpr=... inserted=... bits=...\", exactly as bloomfilter output prints it.") : 0));
}

PG_FUNCTION_INFO_V1(bloomfilter_out);
Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch_any(PG_GETARG_DATUM(0));
	size_t		nbytes = f.hdr.nblocks * BLOOM_BLOCK_BYTES;
	size_t		b64len = bloom_base64_encoded_len(nbytes);
	char	   *typname = NULL;
	char	   *out;
	size_t		headlen;

	/* a growing filter prints its layers, each through this function */
	if (f.hdr.family == BF_FAMILY_GROWING)
		PG_RETURN_CSTRING(bf_grow_text_out(f.vl));

	/*
	 * A text form must read back: refuse rather than print a type that the
	 * input function would not accept, so that pg_dump fails loudly instead
	 * of writing a dump that cannot be restored.
	 */
	if (f.hdr.family == BF_FAMILY_OTHER)
	{
		if (!bf_other_type_ok((Oid) f.hdr.detail))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("cannot output a bloomfilter whose element type no longer exists"),
					 errdetail("The filter holds hashes of values of the non-portable type with OID %u, which no longer exists or cannot be the element type of a filter, so its text form could not be read back.",
							   f.hdr.detail),
					 errhint("Delete or rebuild the filter; its bytes remain available as filter::bytea.")));
		typname = format_type_be_qualified((Oid) f.hdr.detail);
	}
	headlen = bloom_text_format_head(&f.hdr, typname, NULL, 0);
	/* the bits may be hundreds of MB: encode straight into the result */
	out = palloc_extended(headlen + b64len + 1, MCXT_ALLOC_HUGE);
	bloom_text_format_head(&f.hdr, typname, out, headlen + 1);
	bloom_base64_encode(BF_BITS(f.vl), nbytes, out + headlen);
	out[headlen + b64len] = '\0';
	PG_RETURN_CSTRING(out);
}

/* copy and validate portable bytes into a new bloomfilter datum */
static struct varlena *
from_bytes(const uint8 *data, size_t len, int sqlstate)
{
	BloomHeader hdr;
	BloomError	err;
	struct varlena *vl;

	if (bloom_is_growing(data, len))
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
