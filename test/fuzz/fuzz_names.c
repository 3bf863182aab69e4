/*
 * fuzz_names.c
 *	  libFuzzer harness of the name parsers of the text form: element family
 *	  names, the type names of non-portable filters, and the shortest
 *	  printing of a false-positive rate (the input's first 8 bytes as a
 *	  double must print as text that reads back to the same double).
 */
#include "fuzz_common.h"

#include <math.h>

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* an identifier as format_type would write it, always double-quoted */
static size_t
quote(const char *id, char *out)
{
	size_t		n = 0;

	out[n++] = '"';
	for (; *id; id++)
	{
		if (*id == '"')
			out[n++] = '"';
		out[n++] = *id;
	}
	out[n++] = '"';
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *) data;
	int			f = bloom_family_from_name(s, size);
	BloomTypeName tn,
				tn2;

	if (f >= 0)
	{
		const char *name = bloom_family_name(f);

		FUZZ_ASSERT(f <= BF_FAMILY_MAX && strlen(name) == size && memcmp(name, s, size) == 0);
	}

	if (bloom_type_name_parse(s, size, &tn))
	{
		char		q[4 * (BLOOM_IDENT_MAX + 2) + 8];
		size_t		n;

		FUZZ_ASSERT(strlen(tn.schema) > 0 && strlen(tn.schema) <= BLOOM_IDENT_MAX);
		FUZZ_ASSERT(strlen(tn.name) > 0 && strlen(tn.name) <= BLOOM_IDENT_MAX);
		/* the same name fully quoted denotes the same type */
		n = quote(tn.schema, q);
		q[n++] = '.';
		n += quote(tn.name, q + n);
		if (tn.array)
		{
			memcpy(q + n, "[]", 2);
			n += 2;
		}
		FUZZ_ASSERT(bloom_type_name_parse(q, n, &tn2));
		FUZZ_ASSERT(strcmp(tn.schema, tn2.schema) == 0 && strcmp(tn.name, tn2.name) == 0 &&
					tn.array == tn2.array);
	}

	if (size >= 8)
	{
		double		x;
		char		buf[BLOOM_FPR_BUFLEN];
		int			n;

		memcpy(&x, data, 8);
		if (isfinite(x))
		{
			n = bloom_fpr_format(x, buf);
			FUZZ_ASSERT(n > 0 && n < BLOOM_FPR_BUFLEN && (size_t) n == strlen(buf));
			FUZZ_ASSERT(strtod(buf, NULL) == x && signbit(strtod(buf, NULL)) == signbit(x));
		}
	}
	return 0;
}
