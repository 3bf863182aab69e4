/*-------------------------------------------------------------------------
 *
 * bf_value_filter.c
 *	  Work on a filter of either form (plain, or growing: bf_grow.c) for
 *	  every caller in C: adding values in batches (BfAdder), the lookup's
 *	  slow path (bf_filter_test_other; the fast path is inline in
 *	  bf_value.h) and clearing.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_value.h"

#include "miscadmin.h"

#include "bf_grow.h"

/*
 * A growing filter (f's family BF_FAMILY_GROWING) is added to by a
 * BfGrowAdder; f->vl then changes when it grows, and bf_adder_finish
 * reads f's header again.
 */
void
bf_adder_init(BfAdder *a, BfFilter *f, BfTypeInfo *ti)
{
	a->f = f;
	a->ti = ti;
	a->n = 0;
	a->checked = false;
	a->touched = NULL;
	a->grow = NULL;
	a->inserted_before = f->hdr.inserted;
	if (f->hdr.family == BF_FAMILY_GROWING)
	{
		a->grow = palloc(sizeof(BfGrowAdder));
		bf_grow_adder_init(a->grow, f->vl, ti);
	}
}

static void
adder_flush(BfAdder *a)
{
	BfFilter   *f = a->f;

	/* every BF_ADDER_BATCH values: loops over many values stay cancellable */
	CHECK_FOR_INTERRUPTS();

	for (int i = 0; i < a->n; i++)
		if (bloom_set_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes, a->hashes[i]))
		{
			BLOOM_COUNT_INSERT(&f->hdr);
			if (a->touched)
				a->touched[(BLOOM_HEADER_SIZE + BLOOM_BLOCK_BYTES *
							bloom_block_of(a->hashes[i], f->hdr.nblocks)) / BF_CHANGE_CHUNK] = true;
		}
	a->n = 0;
}

void
bf_adder_add(BfAdder *a, Datum value)
{
	BfFilter   *f = a->f;

	if (a->grow)
	{
		a->grow->touched = a->touched;
		bf_grow_adder_add(a->grow, value);
		return;
	}
	/* a record's row type may vary per value: check each one */
	if (a->ti->family == BF_FAMILY_RECORD || !a->checked)
	{
		bf_prepare_value(a->ti, value);
		bf_check_family(&f->hdr, BF_PAYLOAD(f->vl), a->ti, true);
		a->checked = true;
	}
	bf_adder_add_hash(a, bf_hash_datum(a->ti, value, f->hdr.seed));
}

/*
 * Add a hash the caller computed with the filter's seed, to a filter
 * whose family is set already (the family is not checked)
 */
void
bf_adder_add_hash(BfAdder *a, uint64 h)
{
	if (a->grow)
	{
		a->grow->touched = a->touched;
		bf_grow_adder_add_hash(a->grow, h);
		return;
	}
	bloom_prefetch_hash(BF_BITS(a->f->vl), a->f->hdr.nblocks, h);
	a->hashes[a->n++] = h;
	if (a->n == BF_ADDER_BATCH)
		adder_flush(a);
}

/* set the pending bits and store the "inserted" count in the header */
void
bf_adder_finish(BfAdder *a)
{
	if (a->grow)
	{
		a->grow->touched = a->touched;
		a->f->vl = bf_grow_adder_finish(a->grow);
		bf_read_any_header(a->f->vl, &a->f->hdr);
		return;
	}
	adder_flush(a);
	bf_store_inserted(a->f);
}

/* did the adds set any bit?  (after bf_adder_finish) */
bool
bf_adder_changed(const BfAdder *a)
{
	if (a->grow)
		return a->grow->changed > 0;
	return a->f->hdr.inserted != a->inserted_before;
}

/* did a growing filter get a new layer (so its length changed)? */
bool
bf_adder_grew(const BfAdder *a)
{
	return a->grow != NULL && a->grow->gh.nlayers != a->grow->start_layers;
}

/*
 * bf_filter_test when the filter's family is not the value's: an empty
 * filter, a growing one, or a mismatch (an error, or a compatible family)
 */
bool
bf_filter_test_other(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	if (f->hdr.family == BF_FAMILY_NONE)
		return false;			/* nothing was ever added */
	if (f->hdr.family == BF_FAMILY_GROWING)
		return bf_grow_test(f, ti, value);
	bf_check_family((BloomHeader *) &f->hdr, NULL, ti, false);
	return bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes,
						   bf_hash_datum(ti, value, f->hdr.seed));
}

/* a copy of filter d (either form), emptied: a growing one keeps one layer */
struct varlena *
bf_filter_clear(Datum d)
{
	struct varlena *vl = PG_DETOAST_DATUM_COPY(d);
	BloomHeader hdr;

	if (bloom_is_layered(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl)))
		return bf_grow_clear(vl);
	bf_read_header(vl, &hdr);
	hdr.inserted = 0;
	bloom_header_write(BF_PAYLOAD(vl), &hdr);
	memset(BF_BITS(vl), 0, hdr.nblocks * BLOOM_BLOCK_BYTES);
	return vl;
}
