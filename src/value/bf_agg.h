/*-------------------------------------------------------------------------
 *
 * bf_agg.h
 *	  The transition states of the bloomfilter aggregates, shared by the
 *	  support functions of the 1.2 catalog (states of type bloomfilter and
 *	  bytea, kept as expanded objects between rows) and those of the 1.0
 *	  and 1.1 catalogs (`internal` states), which databases keep until
 *	  ALTER EXTENSION bloomfilter UPDATE.
 *
 *	  bf_value_agg.c           the filter state: bf_agg(v, capacity, fpr),
 *	                           bf_union_agg, bf_intersect_agg
 *	  bf_value_agg_auto.c      the hash-set state of the auto-sized bf_agg
 *	  bf_value_agg_internal.c  the support functions of the 1.0 and 1.1
 *	                           catalogs, over the same states
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_AGG_H
#define BF_AGG_H

#include "bf_value.h"

#include "utils/expandeddatum.h"

/*
 * Hashes of a sized bf_agg are not applied at once: each row prefetches its
 * block and queues the hash, and a batch is applied when the queue is full
 * (and before the bits are read).  A filter larger than the CPU caches
 * then costs overlapping cache misses instead of one full miss per row.
 */
#define BF_AGG_BATCH 32

/*
 * A filter being built.  hdr is authoritative (the header bytes in payload
 * are written when the state is read out); the bits are 64-byte aligned.
 * eoh is the expanded object holding the state (1.2), NULL for an
 * `internal` state (1.0, 1.1) or a read-only view of a flat value.
 */
typedef struct BfAggFilter
{
	BloomHeader hdr;
	uint8	   *payload;		/* FORMAT.md bytes; bits 64-byte aligned */
	bool		family_ok;		/* hdr has the family of the input type */
	bool		borrowed;		/* payload points into a flat value */
	int			npending;
	ExpandedObjectHeader *eoh;
	uint64		pending[BF_AGG_BATCH];
} BfAggFilter;

/* bf_value_agg.c: the filter state */
extern BfAggFilter *bf_aggf_make(MemoryContext cxt, const BloomHeader *hdr,
								 const uint8 *payload, bool expanded);
extern void bf_aggf_flush(BfAggFilter *st);
extern void bf_aggf_view(BfAggFilter *view, const BfFilter *f);
extern BfAggFilter *bf_aggf_merge(BfAggFilter *s1, BfAggFilter *s2,
								  bool intersect, MemoryContext cxt,
								  bool expanded);
extern struct varlena *bf_aggf_flat(BfAggFilter *st);
extern struct varlena *bf_aggf_result(BfAggFilter *st, bool intersect);
extern BfAggFilter *bf_aggf_sized_step(FunctionCallInfo fcinfo, BfAggFilter *st,
									   MemoryContext cxt, bool expanded);
extern struct varlena *bf_aggf_sized_empty(FunctionCallInfo fcinfo);

/* bf_value_agg_auto.c: the hash-set state of the auto-sized bf_agg */
typedef struct BfAggHashes BfAggHashes;

extern BfAggHashes *bf_aggh_step(FunctionCallInfo fcinfo, BfAggHashes *st,
								 MemoryContext cxt, bool expanded);
extern BfAggHashes *bf_aggh_merge(BfAggHashes *s1, BfAggHashes *s2,
								  MemoryContext cxt, bool expanded);
extern struct varlena *bf_aggh_result(BfAggHashes *st);
extern bytea *bf_aggh_flat(BfAggHashes *st);
extern BfAggHashes *bf_aggh_from_flat(const bytea *flat, MemoryContext cxt,
									  bool expanded);

#endif							/* BF_AGG_H */
