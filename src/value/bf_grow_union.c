/*-------------------------------------------------------------------------
 *
 * bf_grow_union.c
 *	  The union form of a bloomfilter (docs/FORMAT.md section 10): filters
 *	  of any sizes side by side, a key "probably" there when any of them
 *	  says so.  It is how the filters of a table's shards, each sized for
 *	  its own keys, reach a client as one value (bf_index_dist_filter.c),
 *	  and bf_union_layered makes one from any filters of one family.
 *
 * Its bytes are those of a growing filter under another magic, without
 * the sizing chain (bloom_grow.c validates both), so testing, printing and
 * the estimates are the growing form's.  It is read only: its layers were
 * sized for other key sets, so there is no layer a new key belongs in.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_grow.h"

#include "utils/array.h"

/* the layers of a union being made, each a plain filter's bytes */
typedef struct UnionParts
{
	int			n;
	const uint8 *layer[BLOOM_GROW_MAX_LAYERS];
	BloomHeader hdr[BLOOM_GROW_MAX_LAYERS];
	uint64		blocks;
	int			kind;			/* the first layer with a family, or 0 */
} UnionParts;

static void
add_layer(UnionParts *u, const uint8 *bytes, const BloomHeader *h)
{
	if (u->n == BLOOM_GROW_MAX_LAYERS || u->blocks + h->nblocks > BLOOM_MAX_BLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("union of bloomfilters too large"),
				 errdetail("A union holds at most %d layers of %llu blocks in all.",
						   BLOOM_GROW_MAX_LAYERS, (unsigned long long) BLOOM_MAX_BLOCKS),
				 errhint("Combine fewer filters (a growing filter counts one layer per layer it has).")));
	if (u->n > 0)
	{
		/*
		 * the same kind of filter apart from the sizing, as the first layer
		 * with a family (an empty one takes any)
		 */
		const BloomHeader *kind = &u->hdr[u->kind];
		BloomHeader sized = *h;

		sized.nblocks = kind->nblocks;
		sized.nhashes = kind->nhashes;
		bf_check_compatible(kind, &sized);
		if (kind->family == BF_FAMILY_NONE && h->family != BF_FAMILY_NONE)
			u->kind = u->n;
	}
	u->layer[u->n] = bytes;
	u->hdr[u->n] = *h;
	u->blocks += h->nblocks;
	u->n++;
}

/* the layers of one filter of any form (validated) */
static void
add_filter(UnionParts *u, const BfFilter *f)
{
	const uint8 *payload = BF_PAYLOAD(f->vl);
	BloomGrowHeader gh;
	BloomHeader h;
	size_t		next = 0;
	size_t		off;

	if (f->hdr.family != BF_FAMILY_GROWING)
	{
		add_layer(u, payload, &f->hdr);
		return;
	}
	bf_grow_read(f->vl, &gh, ERRCODE_DATA_CORRUPTED);
	while ((off = bloom_grow_next_layer(payload, &gh, &next, &h)) != 0)
		add_layer(u, payload + off, &h);
}

/*
 * The union of filters[0 .. n-1] (detoasted, any form; NULL entries are
 * skipped): every layer of each, in order.  Layers whose family is not yet
 * set (nothing was added to them) take the others' family, as every layer
 * of a value must have the same one; its bits say nothing of another
 * family's keys but can only add false positives.  NULL when there is no
 * filter.
 */
struct varlena *
bf_union_of(struct varlena **filters, int n)
{
	UnionParts *u = palloc0(sizeof(UnionParts));
	BloomGrowHeader gh;
	const BloomHeader *kind;
	double		pass = 1.0;
	Size		size = VARHDRSZ + BLOOM_GROW_HEADER_SIZE;
	Size		off = BLOOM_GROW_HEADER_SIZE;
	struct varlena *vl;

	for (int i = 0; i < n; i++)
	{
		BfFilter	f;

		if (filters[i] == NULL)
			continue;
		f = bf_fetch_any(PointerGetDatum(filters[i]));
		add_filter(u, &f);
	}
	if (u->n == 0)
		return NULL;

	memset(&gh, 0, sizeof(gh));
	gh.is_union = true;
	gh.version = BLOOM_GROW_VERSION;
	gh.nlayers = (uint16) u->n;
	for (int i = 0; i < u->n; i++)
	{
		size += bloom_total_size(u->hdr[i].nblocks);
		/* section 1 allows any capacity >= 0; the sum must fit */
		if (u->hdr[i].capacity > PG_INT64_MAX - gh.capacity)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("union of bloomfilters too large"),
					 errdetail("The capacities of the filters add up to more than the largest bigint.")));
		gh.capacity += u->hdr[i].capacity;
		/* a non-member passes when any layer passes it */
		if (u->hdr[i].fpr > 0.0)
			pass *= 1.0 - Min(u->hdr[i].fpr, 1.0);
	}
	gh.fpr = 1.0 - pass;
	kind = &u->hdr[u->kind];

	vl = palloc_extended(size, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, size);
	bloom_grow_header_write(BF_PAYLOAD(vl), &gh);
	for (int i = 0; i < u->n; i++)
	{
		BloomHeader h = u->hdr[i];
		Size		len = bloom_total_size(h.nblocks);

		memcpy(BF_PAYLOAD(vl) + off, u->layer[i], len);
		if (h.family == BF_FAMILY_NONE && kind->family != BF_FAMILY_NONE)
		{
			bloom_adopt_family(&h, kind);
			bloom_header_write(BF_PAYLOAD(vl) + off, &h);
		}
		off += len;
	}
	/* what any reader will check */
	bf_grow_read(vl, &gh, ERRCODE_INTERNAL_ERROR);
	pfree(u);
	return vl;
}

PG_FUNCTION_INFO_V1(bf_union_layered);

/* bf_union_layered(VARIADIC bloomfilter[]) */
Datum
bf_union_layered(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	struct varlena **filters;
	struct varlena *vl;

	deconstruct_array(arr, ARR_ELEMTYPE(arr), -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	filters = palloc0(sizeof(struct varlena *) * Max(n, 1));
	for (int i = 0; i < n; i++)
		if (!nulls[i])
			filters[i] = PG_DETOAST_DATUM(elems[i]);
	vl = bf_union_of(filters, n);
	if (vl == NULL)
		PG_RETURN_NULL();
	PG_RETURN_POINTER(vl);
}
