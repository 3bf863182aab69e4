/*-------------------------------------------------------------------------
 *
 * bloomfilter.h
 *	  Declarations shared by the PostgreSQL glue of the bloomfilter
 *	  extension: the varlena wrapper around the format of bloom_core.h,
 *	  typed hashing of SQL values, and error reporting.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BLOOMFILTER_H
#define BLOOMFILTER_H

#include "bf_compat.h"

#include "fmgr.h"
#include "catalog/pg_type_d.h"
#include "access/tupdesc.h"

#include "bloom_core.h"
#include "bloom_grow.h"

/*
 * A bloomfilter datum is a varlena whose payload is exactly the bytes of
 * docs/FORMAT.md: a 64-byte little-endian header and the bit array.
 */
#define BF_PAYLOAD(vl)		((uint8 *) VARDATA(vl))
#define BF_PAYLOAD_LEN(vl)	((size_t) (VARSIZE(vl) - VARHDRSZ))
#define BF_BITS(vl)			(BF_PAYLOAD(vl) + BLOOM_HEADER_SIZE)
#define BF_DATUM_SIZE(nblocks) (VARHDRSZ + bloom_total_size(nblocks))

/*
 * The family that bf_fetch_any() puts in the header of a growing filter
 * (bloom_grow.h), a value no header of section 1 has: code that handles a
 * BfFilter tells the two forms apart by it, and the hot path of a lookup
 * sends a growing filter to its family-mismatch branch.
 */
#define BF_FAMILY_GROWING	0xFF

/* a detoasted, validated filter (for a growing one, see BF_FAMILY_GROWING) */
typedef struct BfFilter
{
	struct varlena *vl;
	BloomHeader hdr;
} BfFilter;

/*
 * How to hash values of one SQL type.  Built once per call site and kept
 * in fn_extra; records carry one entry per field, rebuilt when the row
 * type changes.
 */
typedef struct BfTypeInfo
{
	Oid			typid;			/* as passed, domains resolved */
	Oid			collation;
	int			family;
	uint32		detail;			/* record nibbles or type OID for "other" */
	int16		typlen;
	bool		typbyval;
	char		typalign;
	bool		hash_ready;		/* hashproc looked up (family "other") */
	FmgrInfo	hashproc;
	/* records */
	Oid			rec_typid;
	int32		rec_typmod;
	int			nfields;
	struct BfTypeInfo *fields;
	MemoryContext mcxt;
} BfTypeInfo;

/* bf_hash.c */
extern int	bf_family_of_type(Oid base);
extern bool bf_other_type_ok(Oid typid);
extern void bf_typeinfo_init(BfTypeInfo *ti, Oid typid, Oid collation,
							 MemoryContext mcxt);
extern uint64 bf_hash_datum_any(BfTypeInfo *ti, Datum value, int64 seed);

/*
 * The filter hash of a non-NULL value (docs/FORMAT.md section 2).  Integers,
 * the commonest keys, are hashed inline: every per-row loop calls this.
 */
static inline uint64
bf_hash_datum(BfTypeInfo *ti, Datum value, int64 seed)
{
	if (ti->family == BF_FAMILY_INTEGER)
		return bloom_hash_int64(ti->typid == INT8OID ? DatumGetInt64(value) :
								ti->typid == INT4OID ? DatumGetInt32(value) :
								DatumGetInt16(value), seed);
	return bf_hash_datum_any(ti, value, seed);
}
extern void bf_check_family(BloomHeader *hdr, uint8 *payload, BfTypeInfo *ti,
							bool setting);
extern char *bf_family_text(int family, uint32 detail);
extern void bf_record_prepare(BfTypeInfo *ti, Datum value);

/* ready a value for bf_hash_datum: a record's field types are per value */
static inline void
bf_prepare_value(BfTypeInfo *ti, Datum value)
{
	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
}
extern uint64 bf_hash_fields(BfTypeInfo *fields, int nfields,
							 const Datum *values, const bool *isnull,
							 int64 seed);

/* a call site's hashing of one argument, kept in fn_extra */
typedef struct BfTypeCache
{
	bool		valid;
	Oid			argtype;
	Oid			collation;
	BfTypeInfo	ti;
} BfTypeCache;

/* bf_funcs.c */
extern void _PG_init(void);
extern BfTypeInfo *bf_typecache_lookup(BfTypeCache *tc, FunctionCallInfo fcinfo,
									   int argno, bool element);
extern void bf_read_header(struct varlena *vl, BloomHeader *hdr);
extern BfFilter bf_fetch(Datum d);
extern void bf_read_any_header(struct varlena *vl, BloomHeader *hdr);
extern BfFilter bf_fetch_any(Datum d);
extern struct varlena *bf_new(uint64 nblocks, int nhashes, int64 seed,
							  int64 capacity, double fpr);
extern void bf_report_error(BloomError err, int sqlstate);
extern void bf_check_fpr(double fpr);

/*
 * Adding values to a filter we own (bf_funcs.c).  The batched adder hashes
 * BF_ADDER_BATCH values and prefetches their blocks before setting bits, so
 * that the cache misses of a large filter overlap; bits are set in the
 * order the values came, so "inserted" counts as one-by-one adds would.
 * A growing filter (read with bf_read_any_header) is added to by the
 * BfGrowAdder it holds; f->vl moves when the filter grows.
 */
#define BF_ADDER_BATCH 32
#define BF_CHANGE_CHUNK 8192	/* bytes of the value per touched flag */
typedef struct BfAdder
{
	BfFilter   *f;
	BfTypeInfo *ti;
	int			n;
	bool		checked;
	bool	   *touched;		/* NULL, or one flag per BF_CHANGE_CHUNK bytes
								 * of the value, set where a bit was set */
	uint64		hashes[BF_ADDER_BATCH];
	struct BfGrowAdder *grow;	/* a growing filter's adder, or NULL */
	uint64		inserted_before;	/* the count of a plain filter at the start */
} BfAdder;

extern void bf_adder_init(BfAdder *a, BfFilter *f, BfTypeInfo *ti);
extern void bf_adder_add(BfAdder *a, Datum value);
extern void bf_adder_finish(BfAdder *a);
extern bool bf_adder_changed(const BfAdder *a);
extern bool bf_filter_test(const BfFilter *f, BfTypeInfo *ti, Datum value);
extern bool bf_adder_grew(const BfAdder *a);
extern void bf_store_inserted(BfFilter *f);
extern void bf_size_or_error(int64 capacity, double fpr, uint64 *nblocks,
							 int *nhashes);

/* bf_text_fields.c: text forms made of several filters */
extern bool bf_take_field(const char **p, const char *key, char *val, size_t vsize);
extern bool bf_int_field(const char *val, int64 lo, int64 hi, int64 *out);
extern const char *bf_filter_text_end(const char *s);
extern struct varlena *bf_read_filter_text(const char *text, size_t len,
										   const char *part, int index,
										   const char *typname, Node *escontext);

/* bf_grow.c: growing filters */
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

extern void bf_grow_check(const uint8 *data, size_t len, BloomGrowHeader *gh,
						  int sqlstate);

/* validate a detoasted growing value */
static inline void
bf_grow_read(const struct varlena *vl, BloomGrowHeader *gh, int sqlstate)
{
	bf_grow_check(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), gh, sqlstate);
}
extern void bf_grow_refuse(void);
extern void bf_grow_adder_init(BfGrowAdder *a, struct varlena *vl, BfTypeInfo *ti);
extern void bf_grow_adder_add(BfGrowAdder *a, Datum value);
extern void bf_grow_adder_add_hash(BfGrowAdder *a, uint64 h);
extern struct varlena *bf_grow_adder_finish(BfGrowAdder *a);
extern bool bf_grow_test(const BfFilter *f, BfTypeInfo *ti, Datum value);
extern struct varlena *bf_grow_clear(const struct varlena *vl);
extern void bf_for_each_layer(const BfFilter *f, BfLayerFn fn, void *arg);
extern Datum bf_layers_rows(FunctionCallInfo fcinfo, Datum value);

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
extern bool bf_datum_is_growing(struct varlena *raw);

/* bf_grow_io.c: the text form of a growing filter */
#define BF_GROW_TEXT_PREFIX "bloomgrowing:1"
extern Datum bf_grow_text_in(const char *str, Node *escontext);
extern char *bf_grow_text_out(struct varlena *vl);

/* bf_ops.c */
extern void bf_check_compatible(const BloomHeader *a, const BloomHeader *b);
extern void bf_combine(BloomHeader *dst, uint8 *dstbits,
					   const BloomHeader *src, const uint8 *srcbits,
					   bool intersect);
extern void bf_finish_combined(BloomHeader *hdr, uint8 *payload, bool intersect);

/* bf_agg.c */
extern void bf_agg_define_gucs(void);

/* bf_cache.c */
typedef struct BfCachedFilter BfCachedFilter;
extern void bf_filter_cache_define_gucs(void);
extern struct varlena *bf_copy_aligned(MemoryContext mcxt, const struct varlena *vl,
									   void **alloc);
extern BfCachedFilter *bf_filter_cache_get(struct varlena *raw);
extern const BfFilter *bf_cached_filter(const BfCachedFilter *cf);
extern void bf_filter_cache_release(BfCachedFilter *cf);

#endif							/* BLOOMFILTER_H */
