/*-------------------------------------------------------------------------
 *
 * bf_text_fields.c
 *	  Pieces of the text forms that hold whole filters (a bloomwindow, a
 *	  growing bloomfilter): " key=value" fields, integers as the output
 *	  functions print them, and the plain filters inside, read by
 *	  bloomfilter_in.
 *
 *-------------------------------------------------------------------------
 */
#include "bloomfilter.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "bloom_text.h"

extern Datum bloomfilter_in(PG_FUNCTION_ARGS);

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
 * bloomfilter's text form, with bloomfilter_in; NULL after a soft error.
 */
struct varlena *
bf_read_filter_text(const char *text, size_t len, const char *part, int index,
					const char *typname, Node *escontext)
{
	LOCAL_FCINFO(fc, 1);
	char	   *s;
	ErrorContextCallback errcb;
	PartContext pc = {part, index, typname};
	Datum		d;

	if (len < strlen(BLOOM_TEXT_PREFIX) || strncmp(text, BLOOM_TEXT_PREFIX, strlen(BLOOM_TEXT_PREFIX)) != 0)
		BF_INPUT_ERROR(escontext,
					   (errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
						errmsg("invalid input syntax for type %s", typname),
						errdetail("The text of %s %d does not start with \"%s\".",
								  part, index, BLOOM_TEXT_PREFIX)));
	s = pnstrdup(text, len);
	errcb.callback = part_context;
	errcb.arg = &pc;
	errcb.previous = error_context_stack;
	error_context_stack = &errcb;
	InitFunctionCallInfoData(*fc, NULL, 1, InvalidOid, escontext, NULL);
	fc->args[0].value = CStringGetDatum(s);
	fc->args[0].isnull = false;
	d = bloomfilter_in(fc);
	error_context_stack = errcb.previous;
	pfree(s);
	return d == (Datum) 0 ? NULL : (struct varlena *) DatumGetPointer(d);
}
