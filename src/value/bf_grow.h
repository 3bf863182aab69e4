/*-------------------------------------------------------------------------
 *
 * bf_grow.h
 *	  Growing bloomfilter values (docs/FORMAT.md section 9): layers of
 *	  plain filters, each larger than the one before.  Their bytes are
 *	  read and written by bloom_grow.c; validation of a value of either
 *	  form is bf_value_base.c's.  bf_grow.c: the constructor, the adder,
 *	  lookups, clearing, layers and the summed estimates.  The text form
 *	  (bf_grow_io.c) and the union form (bf_grow_union.c) are declared in
 *	  bf_value.h.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_GROW_H
#define BF_GROW_H

#include "bf_value.h"

/* bf_grow.c */
typedef struct BfGrowAdder
{
	struct varlena *vl;			/* the value, reallocated as it grows */
	BloomGrowHeader gh;
	BfTypeInfo *ti;
	bool		checked;
	int			n;				/* hashes waiting, their blocks prefetched */
	uint64		hashes[BF_ADDER_BATCH];
	bool	   *touched;		/* as BfAdder.touched, for the value's length
								 * at the start (a growth changes it) */
	uint16		start_layers;
	uint64		changed;		/* adds that set a bit */
} BfGrowAdder;

typedef void (*BfLayerFn) (void *arg, int layer, const BloomHeader *hdr,
						   const uint8 *bits);

extern struct varlena *bf_grow_new(int64 capacity, double fpr, int32 growth,
								   int64 seed);
extern void bf_grow_adder_init(BfGrowAdder *a, struct varlena *vl, BfTypeInfo *ti);
extern void bf_grow_adder_add(BfGrowAdder *a, Datum value);
extern void bf_grow_adder_add_hash(BfGrowAdder *a, uint64 h);
extern struct varlena *bf_grow_adder_finish(BfGrowAdder *a);
extern bool bf_grow_test(const BfFilter *f, BfTypeInfo *ti, Datum value);
extern struct varlena *bf_grow_clear(struct varlena *vl);
extern void bf_for_each_layer(const BfFilter *f, BfLayerFn fn, void *arg);
extern Datum bf_layers_rows(FunctionCallInfo fcinfo, Datum value);
extern bool bf_datum_is_growing(struct varlena *raw);

/*
 * A filter's fill and estimates: a growing one's summed over its layers
 * (bf_grow_summary), a plain one's for its one layer (bf_info).
 */
typedef struct BfGrowSummary
{
	int			nlayers;
	uint64		nbits;
	int64		capacity;		/* of all layers */
	uint64		inserted;
	uint64		bits_set;
	double		cardinality;
	double		fpr;			/* estimated from the fill */
	double		target_fpr;
	bool		saturated;
} BfGrowSummary;

extern BfGrowSummary bf_grow_summary(const BfFilter *f);

#endif							/* BF_GROW_H */
