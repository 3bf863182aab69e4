/*-------------------------------------------------------------------------
 *
 * bf_cache.h
 *	  The per-backend cache of detoasted filters (bf_cache.c), bounded in
 *	  bytes by bloomfilter.filter_cache_size and shown by
 *	  bf_filter_cache_stats().  Every caller that keeps a detoasted filter
 *	  beyond one call goes through it: the call sites of bf_contains and
 *	  friends, and the tracked filters' registry.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_CACHE_H
#define BF_CACHE_H

#include "bf_value.h"

typedef struct BfCachedFilter BfCachedFilter;

extern void bf_filter_cache_define_gucs(void);
extern Size bf_filter_cache_limit(void);
extern BfCachedFilter *bf_filter_cache_get(struct varlena *raw, int64 version);
extern BfCachedFilter *bf_filter_cache_hold(struct varlena *vl);
extern const BfFilter *bf_cached_filter(const BfCachedFilter *cf);
extern void bf_filter_cache_release(BfCachedFilter *cf);
extern const BfFilter *bf_filter_cache_use_if_cached(struct varlena *raw,
													int64 version);

#endif							/* BF_CACHE_H */
