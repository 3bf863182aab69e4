/*
 * fuzz_common.h
 *	  Shared by the libFuzzer harnesses of test/fuzz/: a type-name resolver
 *	  standing in for the server's catalog, and a failure that libFuzzer
 *	  reports as a crash.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "bloom_core.h"
#include "bloom_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an invariant broken: report it and abort, which libFuzzer records */
#define FUZZ_ASSERT(cond) \
	do { \
		if (!(cond)) \
		{ \
			fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
			abort(); \
		} \
	} while (0)

/*
 * Every well-formed type name is a type; its OID is derived from the name
 * so that the same name always gives the same OID (never 0).
 */
static inline bool
fuzz_resolver(void *arg, const char *name, size_t len, uint32_t *oid)
{
	BloomTypeName tn;
	uint32_t	h = 2166136261u;

	(void) arg;
	if (!bloom_type_name_parse(name, len, &tn))
		return false;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t) name[i]) * 16777619u;
	*oid = h | 1;
	return true;
}

#endif
