/*-------------------------------------------------------------------------
 *
 * bf_value_text.c
 *	  The text form of a plain bloomfilter (docs/FORMAT.md section 5) as C
 *	  functions: bf_text_in and bf_text_out, which the type's I/O and the
 *	  text forms made of several filters (a bloomwindow's slots, a growing
 *	  filter's layers) share; and the pieces of those larger forms:
 *	  " key=value" fields, integers as the output functions print them,
 *	  and the plain filters inside.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "bloom_text.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

/* ---- a plain filter's text form (docs/FORMAT.md section 5) ---- */

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

/*
 * The plain filter whose text form is str, or NULL after a soft error
 * reported to escontext.
 */
struct varlena *
bf_text_in(const char *str, Node *escontext)
{
	BloomText	t;
	BloomError	err;

	err = bloom_text_parse(str, strlen(str), resolve_type, NULL, &t);
	if (err == BLOOM_OK)
	{
		struct varlena *vl = palloc_extended(BF_DATUM_SIZE(t.hdr.nblocks),
											 MCXT_ALLOC_HUGE);

		SET_VARSIZE(vl, BF_DATUM_SIZE(t.hdr.nblocks));
		err = bloom_text_decode(&t, BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl));
		if (err == BLOOM_OK)
			return vl;
		pfree(vl);
	}
	if (err == BLOOM_ERR_TEXT_TYPE)
		BF_INPUT_ERROR_NULL(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type bloomfilter"),
						errdetail("Type \"%s\" does not exist in this database or cannot be the element type of a non-portable filter.",
								  pnstrdup(t.typname, t.typnamelen)),
						errhint("Create the type before loading filters of it; a non-portable filter names its type as format_type() prints it, schema-qualified.")));
	BF_INPUT_ERROR_NULL(escontext,
				   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					errmsg("invalid input syntax for type bloomfilter"),
					errdetail_internal("%s", bloom_error_message(err)),
					err >= BLOOM_ERR_TEXT_PREFIX ?
					errhint("The form is \"" BLOOM_TEXT_PREFIX " layout=blocked hash=xxh3_64 family=... nhashes=... nbits=... seed=... capacity=... fpr=... inserted=... bits=...\", exactly as bloomfilter output prints it.") : 0));
}

/* the text form of plain filter f */
char *
bf_text_out(const BfFilter *f)
{
	size_t		nbytes = f->hdr.nblocks * BLOOM_BLOCK_BYTES;
	size_t		b64len = bloom_base64_encoded_len(nbytes);
	char	   *typname = NULL;
	char	   *out;
	size_t		headlen;

	/*
	 * A text form must read back: refuse rather than print a type that the
	 * input function would not accept, so that pg_dump fails loudly instead
	 * of writing a dump that cannot be restored.
	 */
	if (f->hdr.family == BF_FAMILY_OTHER)
	{
		if (!bf_other_type_ok((Oid) f->hdr.detail))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("cannot output a bloomfilter whose element type no longer exists"),
					 errdetail("The filter holds hashes of values of the non-portable type with OID %u, which no longer exists or cannot be the element type of a filter, so its text form could not be read back.",
							   f->hdr.detail),
					 errhint("Delete or rebuild the filter; its bytes remain available as filter::bytea.")));
		typname = format_type_be_qualified((Oid) f->hdr.detail);
	}
	headlen = bloom_text_format_head(&f->hdr, typname, NULL, 0);
	/* the bits may be hundreds of MB: encode straight into the result */
	out = palloc_extended(headlen + b64len + 1, MCXT_ALLOC_HUGE);
	bloom_text_format_head(&f->hdr, typname, out, headlen + 1);
	bloom_base64_encode(BF_BITS(f->vl), nbytes, out + headlen);
	out[headlen + b64len] = '\0';
	return out;
}


/* ---- pieces of text forms made of several filters ---- */

/*
 * Take " key=value" at *p into val (NUL-terminated, at most vsize - 1
 * bytes); on success *p points after the value.
 */
bool
bf_take_field(const char **p, const char *key, char *val, size_t vsize)
{
	size_t		klen = strlen(key);
	const char *s = *p;
	size_t		n;

	if (s[0] != ' ' || strncmp(s + 1, key, klen) != 0 || s[klen + 1] != '=')
		return false;
	s += klen + 2;
	n = strcspn(s, " ");
	if (n == 0 || n >= vsize)
		return false;
	memcpy(val, s, n);
	val[n] = '\0';
	*p = s + n;
	return true;
}

/* a decimal integer as printed by the output function: [-]digits */
bool
bf_int_field(const char *val, int64 lo, int64 hi, int64 *out)
{
	char	   *end;
	long long	v;

	if (!(isdigit((unsigned char) val[0]) ||
		  (val[0] == '-' && isdigit((unsigned char) val[1]))))
		return false;
	errno = 0;
	v = strtoll(val, &end, 10);
	if (errno != 0 || *end != '\0' || v < lo || v > hi)
		return false;
	*out = (int64) v;
	return true;
}

/* the text form of one filter at s: up to the end of its "bits=" field */
const char *
bf_filter_text_end(const char *s)
{
	const char *bits = strstr(s, " bits=");

	if (bits == NULL)
		return NULL;
	return bits + strcspn(bits + 1, " ") + 1;
}

typedef struct PartContext
{
	const char *part;
	int			index;
	const char *typname;
} PartContext;

static void
part_context(void *arg)
{
	PartContext *pc = (PartContext *) arg;

	errcontext("%s %d of a %s value", pc->part, pc->index, pc->typname);
}

/*
 * Parse part `index` of a value of type typname (a bloomwindow's slot, a
 * growing filter's layer), len bytes of text that must be a plain
 * bloomfilter's text form; NULL after a soft error.
 */
struct varlena *
bf_read_filter_text(const char *text, size_t len, const char *part, int index,
					const char *typname, Node *escontext)
{
	char	   *s;
	ErrorContextCallback errcb;
	PartContext pc = {part, index, typname};
	struct varlena *vl;

	if (len < strlen(BLOOM_TEXT_PREFIX) || strncmp(text, BLOOM_TEXT_PREFIX, strlen(BLOOM_TEXT_PREFIX)) != 0)
		BF_INPUT_ERROR_NULL(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type %s", typname),
						errdetail("The text of %s %d does not start with \"%s\".",
								  part, index, BLOOM_TEXT_PREFIX)));
	s = pnstrdup(text, len);
	errcb.callback = part_context;
	errcb.arg = &pc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	vl = bf_text_in(s, escontext);
	error_context_stack = errcb.previous;
	pfree(s);
	return vl;
}
