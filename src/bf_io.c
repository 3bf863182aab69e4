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

#include <math.h>

#include "common/shortest_dec.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "parser/parse_type.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#define TEXT_PREFIX "bloomfilter:1"

#define BAD_TEXT(ctx, str, det) \
	BF_INPUT_ERROR(ctx, (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION), \
						 errmsg("invalid input syntax for type bloomfilter"), \
						 errdetail det, \
						 errhint("The form is \"" TEXT_PREFIX " layout=blocked hash=xxh3_64 family=... nhashes=... nbits=... seed=... capacity=... fpr=... inserted=... bits=...\", as bloomfilter output prints it.")))

/* take "key=" at *p; on success *p points at the value, *vlen its length */
static bool
next_token(const char **p, const char *key, const char **val, size_t *vlen)
{
	size_t		klen = strlen(key);
	const char *s = *p;
	const char *e;

	if (*s != ' ')
		return false;
	s++;
	if (strncmp(s, key, klen) != 0 || s[klen] != '=')
		return false;
	s += klen + 1;
	e = strchr(s, ' ');
	if (e == NULL)
		e = s + strlen(s);
	*val = s;
	*vlen = (size_t) (e - s);
	*p = e;
	return true;
}

static bool
parse_u64(const char *s, size_t len, uint64 *out)
{
	uint64		v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++)
	{
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (PG_UINT64_MAX - (uint64) (s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64) (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool
parse_i64(const char *s, size_t len, int64 *out)
{
	bool		neg = len > 0 && s[0] == '-';
	uint64		u;

	if (!parse_u64(s + neg, len - neg, &u))
		return false;
	if (neg ? u > (uint64) PG_INT64_MAX + 1 : u > (uint64) PG_INT64_MAX)
		return false;
	*out = neg ? (int64) (0 - u) : (int64) u;
	return true;
}

/*
 * Parse "integer", "record(integer,text)" or "other(schema.type)" into
 * family and detail.  Returns false on a syntax error.
 */
static bool
parse_family(const char *s, size_t len, uint8 *family, uint32 *detail)
{
	const char *paren = memchr(s, '(', len);
	size_t		namelen = paren ? (size_t) (paren - s) : len;
	int			f = bloom_family_from_name(s, namelen);

	*detail = 0;
	if (f < 0)
		return false;
	*family = (uint8) f;
	if (f != BF_FAMILY_RECORD && f != BF_FAMILY_OTHER)
		return paren == NULL;
	if (paren == NULL || s[len - 1] != ')')
		return false;

	if (f == BF_FAMILY_RECORD)
	{
		const char *p = paren + 1;
		const char *end = s + len - 1;
		int			nfields = 0;

		while (p < end)
		{
			const char *comma = memchr(p, ',', end - p);
			const char *fe = comma ? comma : end;
			int			ff = bloom_family_from_name(p, fe - p);

			if (ff <= 0 || ff == BF_FAMILY_RECORD || nfields >= BLOOM_MAX_RECORD_FIELDS)
				return false;
			*detail |= (uint32) ff << (4 * nfields++);
			p = comma ? comma + 1 : end;
		}
		return nfields > 0;
	}
	else
	{
		char	   *tname = pnstrdup(paren + 1, len - namelen - 2);
		Oid			typid;
		int32		typmod;

		if (!bf_parse_type_string(tname, &typid, &typmod, NULL))
			return false;
		pfree(tname);
		*detail = typid;
		return OidIsValid(typid);
	}
}

PG_FUNCTION_INFO_V1(bloomfilter_in);
Datum
bloomfilter_in(PG_FUNCTION_ARGS)
{
	const char *str = PG_GETARG_CSTRING(0);
	Node	   *escontext = fcinfo->context;
	const char *p = str;
	const char *v;
	size_t		vlen;
	BloomHeader hdr;
	uint64		u,
				nbits;
	int64		i64;
	char	   *fprstr,
			   *endp;
	struct varlena *vl;
	BloomError	err;

	memset(&hdr, 0, sizeof(hdr));
	hdr.version = BLOOM_VERSION;
	hdr.layout = BLOOM_LAYOUT_BLOCKED;
	hdr.hashfn = BLOOM_HASH_XXH3_64;

	if (strncmp(p, TEXT_PREFIX, strlen(TEXT_PREFIX)) != 0)
		BAD_TEXT(escontext, str, ("The value does not start with \"%s\".", TEXT_PREFIX));
	p += strlen(TEXT_PREFIX);

	if (!next_token(&p, "layout", &v, &vlen) || vlen != 7 || strncmp(v, "blocked", 7) != 0)
		BAD_TEXT(escontext, str, ("Expected \"layout=blocked\" after the version."));
	if (!next_token(&p, "hash", &v, &vlen) || vlen != 7 || strncmp(v, "xxh3_64", 7) != 0)
		BAD_TEXT(escontext, str, ("Expected \"hash=xxh3_64\" after the layout."));
	if (!next_token(&p, "family", &v, &vlen) || !parse_family(v, vlen, &hdr.family, &hdr.detail))
		BAD_TEXT(escontext, str, ("Expected \"family=\" and a known element family after the hash."));
	if (!next_token(&p, "nhashes", &v, &vlen) || !parse_u64(v, vlen, &u) ||
		u < 1 || u > BLOOM_MAX_HASHES)
		BAD_TEXT(escontext, str, ("Expected \"nhashes=\" and a number from 1 to %d.", BLOOM_MAX_HASHES));
	hdr.nhashes = (uint16) u;
	if (!next_token(&p, "nbits", &v, &vlen) || !parse_u64(v, vlen, &nbits) ||
		nbits == 0 || nbits % BLOOM_BLOCK_BITS != 0 ||
		nbits / BLOOM_BLOCK_BITS > BLOOM_MAX_BLOCKS)
		BAD_TEXT(escontext, str, ("Expected \"nbits=\" and a positive multiple of 512 of at most %llu.",
								  (unsigned long long) (BLOOM_MAX_BLOCKS * BLOOM_BLOCK_BITS)));
	hdr.nblocks = nbits / BLOOM_BLOCK_BITS;
	if (!next_token(&p, "seed", &v, &vlen) || !parse_i64(v, vlen, &hdr.seed))
		BAD_TEXT(escontext, str, ("Expected \"seed=\" and a bigint."));
	if (!next_token(&p, "capacity", &v, &vlen) || !parse_i64(v, vlen, &i64) || i64 < 0)
		BAD_TEXT(escontext, str, ("Expected \"capacity=\" and a non-negative bigint."));
	hdr.capacity = i64;
	if (!next_token(&p, "fpr", &v, &vlen) || vlen == 0)
		BAD_TEXT(escontext, str, ("Expected \"fpr=\" and a number."));
	fprstr = pnstrdup(v, vlen);
	errno = 0;
	hdr.fpr = strtod(fprstr, &endp);
	if (errno != 0 || *endp != '\0' || !(hdr.fpr >= 0.0 && hdr.fpr < 1.0))
		BAD_TEXT(escontext, str, ("Expected \"fpr=\" and a number in [0, 1)."));
	pfree(fprstr);
	if (!next_token(&p, "inserted", &v, &vlen) || !parse_u64(v, vlen, &hdr.inserted))
		BAD_TEXT(escontext, str, ("Expected \"inserted=\" and a non-negative number."));
	if (!next_token(&p, "bits", &v, &vlen) || *p != '\0')
		BAD_TEXT(escontext, str, ("Expected \"bits=\" and base64 as the last field."));
	if (vlen != bloom_base64_encoded_len(hdr.nblocks * BLOOM_BLOCK_BYTES))
		BAD_TEXT(escontext, str, ("The bits hold %zu base64 characters; %llu bits need %zu.",
								  vlen, (unsigned long long) nbits,
								  bloom_base64_encoded_len(hdr.nblocks * BLOOM_BLOCK_BYTES)));
	if (hdr.family == BF_FAMILY_OTHER)
		hdr.flags = BLOOM_FLAG_NONPORTABLE;
	if (hdr.family == BF_FAMILY_RECORD)
	{
		for (int i = 0; i < BLOOM_MAX_RECORD_FIELDS; i++)
			if (((hdr.detail >> (4 * i)) & 0xF) == BF_FAMILY_OTHER)
				hdr.flags = BLOOM_FLAG_NONPORTABLE;
	}

	vl = palloc_extended(BF_DATUM_SIZE(hdr.nblocks), MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, BF_DATUM_SIZE(hdr.nblocks));
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	if (!bloom_base64_decode(v, vlen, BF_BITS(vl), hdr.nblocks * BLOOM_BLOCK_BYTES))
	{
		pfree(vl);
		BAD_TEXT(escontext, str, ("The bits are not valid base64."));
	}
	err = bloom_header_read(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), &hdr);
	if (err != BLOOM_OK)
	{
		pfree(vl);
		BF_INPUT_ERROR(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloomfilter"),
						errdetail_internal("%s", bloom_error_message(err))));
	}
	PG_RETURN_POINTER(vl);
}

PG_FUNCTION_INFO_V1(bloomfilter_out);
Datum
bloomfilter_out(PG_FUNCTION_ARGS)
{
	BfFilter	f = bf_fetch(PG_GETARG_DATUM(0));
	size_t		nbytes = f.hdr.nblocks * BLOOM_BLOCK_BYTES;
	size_t		b64len = bloom_base64_encoded_len(nbytes);
	char		fprbuf[DOUBLE_SHORTEST_DECIMAL_LEN];
	StringInfoData buf;
	char	   *family = bf_family_text(f.hdr.family, f.hdr.detail);
	char	   *out;
	size_t		headlen;

	double_to_shortest_decimal_buf(f.hdr.fpr, fprbuf);
	initStringInfo(&buf);
	appendStringInfo(&buf,
					 TEXT_PREFIX " layout=blocked hash=xxh3_64 family=%s nhashes=%u nbits=%llu seed=%lld capacity=%lld fpr=%s inserted=%llu bits=",
					 family, (unsigned) f.hdr.nhashes,
					 (unsigned long long) (f.hdr.nblocks * BLOOM_BLOCK_BITS),
					 (long long) f.hdr.seed, (long long) f.hdr.capacity, fprbuf,
					 (unsigned long long) f.hdr.inserted);
	/* the bits may be hundreds of MB: encode straight into the result */
	headlen = buf.len;
	out = palloc_extended(headlen + b64len + 1, MCXT_ALLOC_HUGE);
	memcpy(out, buf.data, headlen);
	bloom_base64_encode(BF_BITS(f.vl), nbytes, out + headlen);
	out[headlen + b64len] = '\0';
	pfree(buf.data);
	PG_RETURN_CSTRING(out);
}

/* copy and validate portable bytes into a new bloomfilter datum */
static struct varlena *
from_bytes(const uint8 *data, size_t len, int sqlstate)
{
	BloomHeader hdr;
	BloomError	err = bloom_header_read(data, len, &hdr);
	struct varlena *vl;

	if (err != BLOOM_OK)
		bf_report_error(err, sqlstate);
	/* a non-portable filter names its type by OID: it must exist here */
	if (hdr.family == BF_FAMILY_OTHER &&
		!SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum((Oid) hdr.detail)))
		ereport(ERROR,
				(errcode(sqlstate),
				 errmsg("invalid bloomfilter value"),
				 errdetail("The filter holds values of a non-portable type with OID %u, which does not exist in this database.",
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
	BfFilter	f = bf_fetch(PG_GETARG_DATUM(0));
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
	BfFilter	f = bf_fetch(PG_GETARG_DATUM(0));

	PG_RETURN_BYTEA_P(f.vl);
}
