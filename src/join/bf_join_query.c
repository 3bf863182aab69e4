/*-------------------------------------------------------------------------
 *
 * bf_join_query.c
 *	  What join filters keep for one execution of a query: the run-time
 *	  filters that build nodes make (bf_join_runtime.c), found by their
 *	  number, and the copies of indexes that pre-filters read
 *	  (bf_join_filter.c), found by the index.  Entries are found by the
 *	  query's memory context, where the executor made the quals' FmgrInfos
 *	  (each execution of a plan -- a cursor, a nested execution of a cached
 *	  plan, a parallel worker -- has its own), and forgotten when that
 *	  context is reset or deleted.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_join.h"

#include "utils/memutils.h"

typedef struct QueryEntry
{
	MemoryContext cxt;
	BfQueryKind kind;
	uint32		key;
	void	   *value;
	struct QueryEntry *next;
	MemoryContextCallback gone;
} QueryEntry;

static QueryEntry *entries = NULL;

static void
forget(void *arg)
{
	QueryEntry **p = &entries;

	while (*p != NULL && *p != (QueryEntry *) arg)
		p = &(*p)->next;
	if (*p != NULL)
		*p = (*p)->next;
}

/* keep value, in cxt (the executor's query context), under kind and key */
void
bf_query_put(MemoryContext cxt, BfQueryKind kind, uint32 key, void *value)
{
	QueryEntry *e = MemoryContextAllocZero(cxt, sizeof(QueryEntry));

	e->cxt = cxt;
	e->kind = kind;
	e->key = key;
	e->value = value;
	e->next = entries;
	e->gone.func = forget;
	e->gone.arg = e;
	MemoryContextRegisterResetCallback(cxt, &e->gone);
	entries = e;
}

/* the value kept under kind and key for the query of cxt, or NULL */
void *
bf_query_get(MemoryContext cxt, BfQueryKind kind, uint32 key)
{
	for (QueryEntry *e = entries; e != NULL; e = e->next)
		if (e->cxt == cxt && e->kind == kind && e->key == key)
			return e->value;
	return NULL;
}
