/*-------------------------------------------------------------------------
 *
 * bf_hash.c
 *	  Typed hashing for the bloomfilter extension: maps an SQL value to the
 *	  canonical bytes of docs/FORMAT.md section 3 (so that values equal in
 *	  SQL hash alike, across types of one family and across dump/restore),
 *	  and checks that a value's family matches the filter's.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "access/htup_details.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_enum.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/uuid.h"

/* an example type per family, for hints */
static const char *const family_example[] = {
	"", "bigint", "double precision", "numeric", "text", "bytea", "uuid",
	"boolean", "date", "timestamp", "timestamptz", "the filter's enum type",
	"a row of the filter's field types", ""
};

/* the element family of a type (domains already resolved) */
int
bf_family_of_type(Oid base)
{
	switch (base)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
			return BF_FAMILY_INTEGER;
		case FLOAT4OID:
		case FLOAT8OID:
			return BF_FAMILY_FLOAT;
		case NUMERICOID:
			return BF_FAMILY_NUMERIC;
		case TEXTOID:
		case VARCHAROID:
		case NAMEOID:
		case BPCHAROID:
		case UNKNOWNOID:		/* an untyped literal inside ROW(...) */
			return BF_FAMILY_TEXT;
		case BYTEAOID:
			return BF_FAMILY_BYTEA;
		case UUIDOID:
			return BF_FAMILY_UUID;
		case BOOLOID:
			return BF_FAMILY_BOOL;
		case DATEOID:
			return BF_FAMILY_DATE;
		case TIMESTAMPOID:
			return BF_FAMILY_TIMESTAMP;
		case TIMESTAMPTZOID:
			return BF_FAMILY_TIMESTAMPTZ;
		default:
			break;
	}
	if (type_is_enum(base))
		return BF_FAMILY_ENUM;
	if (type_is_rowtype(base))
		return BF_FAMILY_RECORD;
	return BF_FAMILY_OTHER;
}

/*
 * Whether typid can be the element type of a non-portable filter (family
 * "other", its OID in the family detail): a defined type that is not a
 * domain, a pseudo-type or a type of a portable family.  Every input path
 * and the output function ask this, so that what one accepts the other
 * can print and read back.
 */
bool
bf_other_type_ok(Oid typid)
{
	HeapTuple	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(typid));
	Form_pg_type typ;
	bool		ok;

	if (!HeapTupleIsValid(tup))
		return false;
	typ = (Form_pg_type) GETSTRUCT(tup);
	ok = typ->typisdefined && typ->typtype != TYPTYPE_DOMAIN &&
		typ->typtype != TYPTYPE_PSEUDO;
	ReleaseSysCache(tup);
	return ok && bf_family_of_type(typid) == BF_FAMILY_OTHER;
}

/*
 * Fill *ti for values of type typid under the given collation.  Errors
 * here (no hash support, nondeterministic collation) are raised before
 * any filter is touched.
 */
void
bf_typeinfo_init(BfTypeInfo *ti, Oid typid, Oid collation, MemoryContext mcxt)
{
	Oid			base = getBaseType(typid);

	memset(ti, 0, sizeof(*ti));
	ti->typid = base;
	ti->collation = collation;
	ti->mcxt = mcxt;
	ti->family = bf_family_of_type(base);
	ti->rec_typid = InvalidOid;
	get_typlenbyvalalign(base, &ti->typlen, &ti->typbyval, &ti->typalign);

	if (ti->family == BF_FAMILY_TEXT && OidIsValid(collation) &&
		!get_collation_isdeterministic(collation))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot hash a value under nondeterministic collation \"%s\"",
						get_collation_name(collation)),
				 errdetail("Strings that are equal under a nondeterministic collation have different bytes, so a Bloom filter would give false negatives."),
				 errhint("Apply a deterministic collation, e.g. value COLLATE \"C\".")));

	if (ti->family == BF_FAMILY_OTHER)
	{
		TypeCacheEntry *tce = lookup_type_cache(base, TYPECACHE_HASH_EXTENDED_PROC_FINFO);

		if (!OidIsValid(tce->hash_extended_proc))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("type %s cannot be added to a bloomfilter", format_type_be(base)),
					 errdetail("The type has no hash operator class with an extended hash function."),
					 errhint("Cast the value to a type that can be hashed, such as text.")));
		fmgr_info_cxt(tce->hash_extended_proc, &ti->hashproc, mcxt);
		ti->hash_ready = true;
		ti->detail = base;
	}
}

/*
 * For a record value, (re)build the per-field type info when the row type
 * differs from the cached one, and compute the family detail nibbles.
 */
void
bf_record_prepare(BfTypeInfo *ti, Datum value)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(value);
	Oid			tuptype = HeapTupleHeaderGetTypeId(th);
	int32		tuptypmod = HeapTupleHeaderGetTypMod(th);
	TupleDesc	tupdesc;
	int			nfields = 0;
	uint32		detail = 0;

	if (OidIsValid(ti->rec_typid) && ti->rec_typid == tuptype &&
		ti->rec_typmod == tuptypmod)
		return;

	tupdesc = lookup_rowtype_tupdesc(tuptype, tuptypmod);
	if (ti->fields == NULL)
		ti->fields = MemoryContextAllocZero(ti->mcxt,
											sizeof(BfTypeInfo) * BLOOM_MAX_RECORD_FIELDS);
	for (int i = 0; i < tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);

		if (att->attisdropped)
			continue;
		if (nfields >= BLOOM_MAX_RECORD_FIELDS)
		{
			ReleaseTupleDesc(tupdesc);
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("a record added to a bloomfilter can have at most %d fields",
							BLOOM_MAX_RECORD_FIELDS)));
		}
		bf_typeinfo_init(&ti->fields[nfields], att->atttypid, att->attcollation, ti->mcxt);
		if (ti->fields[nfields].family == BF_FAMILY_RECORD)
		{
			ReleaseTupleDesc(tupdesc);
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a record added to a bloomfilter cannot contain another record"),
					 errhint("Flatten the nested row into its fields.")));
		}
		detail |= (uint32) ti->fields[nfields].family << (4 * nfields);
		nfields++;
	}
	ReleaseTupleDesc(tupdesc);
	if (nfields == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a record added to a bloomfilter must have at least one field")));
	ti->nfields = nfields;
	ti->detail = detail;
	ti->rec_typid = tuptype;
	ti->rec_typmod = tuptypmod;
}

/* bytes of a string in UTF-8; returns a palloc'd copy only if converted */
static const uint8 *
to_utf8(const char *s, size_t *len, void **tofree)
{
	int			enc = GetDatabaseEncoding();
	char	   *conv;

	if (enc == PG_UTF8 || enc == PG_SQL_ASCII || *len == 0)
		return (const uint8 *) s;
	conv = pg_server_to_any(s, (int) *len, PG_UTF8);
	if (conv != s)
	{
		*tofree = conv;
		*len = strlen(conv);
	}
	return (const uint8 *) conv;
}

/*
 * Canonical bytes of a non-record value.  scratch must hold 128 bytes;
 * the result points into scratch, into the value, or into memory that the
 * caller frees via tofree[0..1].
 */
static const uint8 *
canonical_bytes(BfTypeInfo *ti, Datum value, uint8 *scratch, size_t *len,
				void **tofree)
{
	switch (ti->family)
	{
		case BF_FAMILY_INTEGER:
			{
				int64		v;

				if (ti->typid == INT2OID)
					v = DatumGetInt16(value);
				else if (ti->typid == INT4OID)
					v = DatumGetInt32(value);
				else
					v = DatumGetInt64(value);
				bloom_encode_int64(scratch, v);
				*len = 8;
				return scratch;
			}
		case BF_FAMILY_FLOAT:
			bloom_encode_float8(scratch, ti->typid == FLOAT4OID ?
								(double) DatumGetFloat4(value) : DatumGetFloat8(value));
			*len = 8;
			return scratch;
		case BF_FAMILY_DATE:
			bloom_encode_int64(scratch, (int64) DatumGetDateADT(value));
			*len = 8;
			return scratch;
		case BF_FAMILY_TIMESTAMP:
		case BF_FAMILY_TIMESTAMPTZ:
			bloom_encode_int64(scratch, (int64) DatumGetTimestamp(value));
			*len = 8;
			return scratch;
		case BF_FAMILY_BOOL:
			scratch[0] = DatumGetBool(value) ? 1 : 0;
			*len = 1;
			return scratch;
		case BF_FAMILY_UUID:
			memcpy(scratch, DatumGetUUIDP(value)->data, UUID_LEN);
			*len = UUID_LEN;
			return scratch;
		case BF_FAMILY_NUMERIC:
			{
				Numeric		num = DatumGetNumeric(value);
				char	   *s;

				if (numeric_is_nan(num) || numeric_is_inf(num))
					s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(num)));
				else
					s = numeric_normalize(num);
				tofree[0] = s;
				*len = strlen(s);
				return (const uint8 *) s;
			}
		case BF_FAMILY_TEXT:
			{
				const char *s;

				if (ti->typid == NAMEOID)
				{
					s = NameStr(*DatumGetName(value));
					*len = strlen(s);
				}
				else if (ti->typid == UNKNOWNOID)
				{
					s = DatumGetCString(value);
					*len = strlen(s);
				}
				else
				{
					struct varlena *t = PG_DETOAST_DATUM_PACKED(value);

					if ((Pointer) t != DatumGetPointer(value))
						tofree[0] = t;
					s = VARDATA_ANY(t);
					*len = VARSIZE_ANY_EXHDR(t);
					if (ti->typid == BPCHAROID)
					{
						/* bpchar comparison ignores trailing blanks */
						while (*len > 0 && s[*len - 1] == ' ')
							(*len)--;
					}
				}
				return to_utf8(s, len, &tofree[1]);
			}
		case BF_FAMILY_BYTEA:
			{
				struct varlena *t = PG_DETOAST_DATUM_PACKED(value);

				if ((Pointer) t != DatumGetPointer(value))
					tofree[0] = t;
				*len = VARSIZE_ANY_EXHDR(t);
				return (const uint8 *) VARDATA_ANY(t);
			}
		case BF_FAMILY_ENUM:
			{
				HeapTuple	tup = SearchSysCache1(ENUMOID, value);
				const char *label;

				if (!HeapTupleIsValid(tup))
					elog(ERROR, "cache lookup failed for enum value %u",
						 DatumGetObjectId(value));
				label = NameStr(((Form_pg_enum) GETSTRUCT(tup))->enumlabel);
				*len = strlen(label);
				memcpy(scratch, label, *len);	/* < NAMEDATALEN <= 128 */
				ReleaseSysCache(tup);
				return to_utf8((const char *) scratch, len, &tofree[1]);
			}
		case BF_FAMILY_OTHER:
			/* inside a record: the type's own hash with seed 0 */
			bloom_store_u64(scratch,
							DatumGetUInt64(FunctionCall2Coll(&ti->hashproc, ti->collation,
															 value, Int64GetDatum(0))));
			*len = 8;
			return scratch;
		default:
			elog(ERROR, "unexpected bloomfilter family %d", ti->family);
	}
	return NULL;				/* keep compiler quiet */
}

static void
free_canonical(void **tofree)
{
	if (tofree[0])
		pfree(tofree[0]);
	if (tofree[1])
		pfree(tofree[1]);
}

/*
 * The hash of a record given as separate fields (docs/FORMAT.md section
 * 3.2): the concatenation of family id, length and canonical bytes of each
 * field, NULL fields as length 0xFFFFFFFF.  Both bf_add(f, ROW(...)) and
 * a multi-column bloomfilter index hash through here, so they agree.
 */
uint64
bf_hash_fields(BfTypeInfo *fields, int nfields, const Datum *values,
			   const bool *isnull, int64 seed)
{
	StringInfoData buf;
	uint64		h;

	initStringInfo(&buf);
	for (int i = 0; i < nfields; i++)
	{
		BfTypeInfo *fti = &fields[i];
		uint8		famlen[5];

		famlen[0] = (uint8) fti->family;
		if (isnull[i])
		{
			memset(famlen + 1, 0xFF, 4);
			appendBinaryStringInfo(&buf, (char *) famlen, 5);
		}
		else
		{
			uint8		scratch[128];
			void	   *tofree[2] = {NULL, NULL};
			size_t		len;
			const uint8 *p = canonical_bytes(fti, values[i], scratch, &len, tofree);

			for (int b = 0; b < 4; b++)
				famlen[1 + b] = (uint8) ((uint32) len >> (8 * b));
			appendBinaryStringInfo(&buf, (char *) famlen, 5);
			appendBinaryStringInfo(&buf, (const char *) p, (int) len);
			free_canonical(tofree);
		}
	}
	h = bloom_hash_bytes(buf.data, buf.len, seed);
	pfree(buf.data);
	return h;
}

static uint64
bf_hash_record(BfTypeInfo *ti, Datum value, int64 seed)
{
	HeapTupleHeader th = DatumGetHeapTupleHeader(value);
	TupleDesc	tupdesc;
	HeapTupleData tuple;
	Datum		values[BLOOM_MAX_RECORD_FIELDS];
	bool		isnull[BLOOM_MAX_RECORD_FIELDS];
	int			field = 0;

	bf_record_prepare(ti, value);
	tupdesc = lookup_rowtype_tupdesc(ti->rec_typid, ti->rec_typmod);
	tuple.t_len = HeapTupleHeaderGetDatumLength(th);
	ItemPointerSetInvalid(&tuple.t_self);
	tuple.t_tableOid = InvalidOid;
	tuple.t_data = th;

	for (int i = 0; i < tupdesc->natts && field < ti->nfields; i++)
	{
		if (TupleDescAttr(tupdesc, i)->attisdropped)
			continue;
		values[field] = heap_getattr(&tuple, i + 1, tupdesc, &isnull[field]);
		field++;
	}
	ReleaseTupleDesc(tupdesc);
	return bf_hash_fields(ti->fields, field, values, isnull, seed);
}

/* bf_hash_datum for every family (integers also pass canonical_bytes) */
uint64
bf_hash_datum_any(BfTypeInfo *ti, Datum value, int64 seed)
{
	uint8		scratch[128];
	void	   *tofree[2] = {NULL, NULL};
	size_t		len;
	const uint8 *p;
	uint64		h;

	switch (ti->family)
	{
		case BF_FAMILY_RECORD:
			return bf_hash_record(ti, value, seed);
		case BF_FAMILY_OTHER:
			return DatumGetUInt64(FunctionCall2Coll(&ti->hashproc, ti->collation,
													value, Int64GetDatum(seed)));
		default:
			break;
	}
	p = canonical_bytes(ti, value, scratch, &len, tofree);
	h = bloom_hash_bytes(p, len, seed);
	free_canonical(tofree);
	return h;
}

/* "integer", "record(integer,text)", "other(pg_catalog.inet)" */
char *
bf_family_text(int family, uint32 detail)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, bloom_family_name(family));
	if (family == BF_FAMILY_RECORD)
	{
		appendStringInfoChar(&buf, '(');
		for (int i = 0; i < BLOOM_MAX_RECORD_FIELDS; i++)
		{
			unsigned	f = (detail >> (4 * i)) & 0xF;

			if (f == 0)
				break;
			if (i > 0)
				appendStringInfoChar(&buf, ',');
			appendStringInfoString(&buf, bloom_family_name(f));
		}
		appendStringInfoChar(&buf, ')');
	}
	else if (family == BF_FAMILY_OTHER)
	{
		if (SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum((Oid) detail)))
			appendStringInfo(&buf, "(%s)", format_type_be_qualified((Oid) detail));
		else
			appendStringInfo(&buf, "(type with OID %u)", detail);
	}
	return buf.data;
}

/* the error for a value whose family is not the filter's */
static void
family_mismatch(const BloomHeader *hdr, const BfTypeInfo *ti)
{
	char	   *have = bf_family_text(hdr->family, hdr->detail);
	char	   *got = bf_family_text(ti->family, ti->detail);

	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("bloomfilter holds values of family %s, not %s (type %s)",
					have, got, format_type_be(ti->typid)),
			 errdetail("Values of different families hash differently, so the answer would be meaningless."),
			 hdr->family == BF_FAMILY_OTHER ?
			 errhint("Cast the value to %s.", format_type_be((Oid) hdr->detail)) :
			 errhint("Cast the value to %s.", family_example[hdr->family])));
}

/*
 * Check that values described by ti may be added to / tested against the
 * filter.  With setting = true an empty filter (family 0) adopts ti's
 * family: the header in payload is updated in place, so the caller must
 * own payload.
 */
void
bf_check_family(BloomHeader *hdr, uint8 *payload, BfTypeInfo *ti, bool setting)
{
	if (hdr->family == BF_FAMILY_NONE)
	{
		if (setting)
		{
			bool		nonportable = ti->family == BF_FAMILY_OTHER;

			if (ti->family == BF_FAMILY_RECORD)
			{
				for (int i = 0; i < ti->nfields; i++)
					if (ti->fields[i].family == BF_FAMILY_OTHER)
						nonportable = true;
			}
			hdr->family = (uint8) ti->family;
			hdr->detail = ti->detail;
			hdr->flags = nonportable ? BLOOM_FLAG_NONPORTABLE : 0;
			bloom_header_write(payload, hdr);
		}
		return;
	}
	if (hdr->family == ti->family && hdr->detail == ti->detail)
		return;
	if (hdr->family == BF_FAMILY_OTHER &&
		!SearchSysCacheExists1(TYPEOID, ObjectIdGetDatum((Oid) hdr->detail)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("bloomfilter holds values of a type that no longer exists"),
				 errdetail("The filter holds hashes of values of the non-portable type with OID %u, which has been dropped; no value can be tested against it.",
						   hdr->detail),
				 errhint("Rebuild the filter from the values it should hold.")));

	family_mismatch(hdr, ti);
}
