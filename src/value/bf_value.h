/*-------------------------------------------------------------------------
 *
 * bf_value.h
 *	  Declarations shared by the PostgreSQL glue of the bloomfilter type
 *	  (src/value/): the varlena wrapper around the format of bloom_core.h,
 *	  typed hashing of SQL values, reading and making values, adding and
 *	  testing.  src/README.md maps the files and the layers of the folder:
 *	  the base (bf_value_base.c, bf_hash.c, bf_value_text.c) calls no other
 *	  file of it; growing values (bf_grow*.c, bf_grow.h) call only the
 *	  base; the type's functions call both.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_VALUE_H
#define BF_VALUE_H

#include "bf_compat.h"

#include "fmgr.h"
#include "catalog/pg_type_d.h"
#include "access/tupdesc.h"
#include "utils/expandeddatum.h"

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

/* bf_value_base.c: reading and validating, sizing, making */
extern void bf_check_compatible(const BloomHeader *a, const BloomHeader *b);
extern void bf_report_error(BloomError err, int sqlstate);
extern void bf_grow_check(const uint8 *data, size_t len, BloomGrowHeader *gh,
						  int sqlstate);

/* validate a detoasted growing value */
static inline void
bf_grow_read(const struct varlena *vl, BloomGrowHeader *gh, int sqlstate)
{
	bf_grow_check(BF_PAYLOAD(vl), BF_PAYLOAD_LEN(vl), gh, sqlstate);
}
extern void bf_grow_refuse(const uint8 *payload);
extern void bf_read_header(struct varlena *vl, BloomHeader *hdr);
extern void bf_read_any_header(struct varlena *vl, BloomHeader *hdr);
extern BfFilter bf_fetch_any(Datum d);
extern BfFilter bf_fetch(Datum d);
extern void bf_check_fpr(double fpr);
extern void bf_size_or_error(int64 capacity, double fpr, uint64 *nblocks,
							 int *nhashes);
extern uint64 bf_blocks_or_error(int64 nbits, int32 nhashes);
extern struct varlena *bf_new_for(int64 capacity, double fpr, int64 seed);
extern struct varlena *bf_new(uint64 nblocks, int nhashes, int64 seed,
							  int64 capacity, double fpr);
extern void bf_store_inserted(BfFilter *f);
extern BfTypeInfo *bf_typecache_lookup(BfTypeCache *tc, FunctionCallInfo fcinfo,
									   int argno, bool element);

/*
 * bf_value_filter.c: adding values to a filter we own.  The batched adder
 * hashes BF_ADDER_BATCH values and prefetches their blocks before setting
 * bits, so that the cache misses of a large filter overlap; bits are set
 * in the order the values came, so "inserted" counts as one-by-one adds
 * would.  A growing filter (read with bf_read_any_header) is added to by
 * the BfGrowAdder it holds; f->vl moves when the filter grows.
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
extern void bf_adder_add_hash(BfAdder *a, uint64 h);
extern void bf_adder_finish(BfAdder *a);
extern bool bf_adder_changed(const BfAdder *a);
extern bool bf_adder_grew(const BfAdder *a);
extern bool bf_filter_test_other(const BfFilter *f, BfTypeInfo *ti, Datum value);
extern struct varlena *bf_filter_clear(Datum d);

/*
 * Test a value against a filter of either form (its family checked: a
 * mismatch is an error).  Always inline: a call per probe would cost as
 * much as the probe.
 */
static pg_attribute_always_inline bool
bf_filter_test(const BfFilter *f, BfTypeInfo *ti, Datum value)
{
	bf_prepare_value(ti, value);
	if (unlikely(f->hdr.family != ti->family || f->hdr.detail != ti->detail))
		return bf_filter_test_other(f, ti, value);
	return bloom_test_hash(BF_BITS(f->vl), f->hdr.nblocks, f->hdr.nhashes,
						   bf_hash_datum(ti, value, f->hdr.seed));
}

/* bf_value_text.c: a plain filter's text form; pieces of larger text forms */
extern struct varlena *bf_text_in(const char *str, Node *escontext);
extern char *bf_text_out(const BfFilter *f);
extern bool bf_take_field(const char **p, const char *key, char *val, size_t vsize);
extern bool bf_int_field(const char *val, int64 lo, int64 hi, int64 *out);
extern const char *bf_filter_text_end(const char *s);
extern struct varlena *bf_read_filter_text(const char *text, size_t len,
										   const char *part, int index,
										   const char *typname, Node *escontext);

/* bf_value_ops.c */
extern void bf_combine(BloomHeader *dst, uint8 *dstbits,
					   const BloomHeader *src, const uint8 *srcbits,
					   bool intersect);
extern void bf_finish_combined(BloomHeader *hdr, uint8 *payload, bool intersect);

/*
 * bf_value_agg.c: what every aggregate state uses (bf_agg.h has the
 * states of the bloomfilter aggregates).  The states of the 1.2 catalog
 * are expanded objects (utils/expandeddatum.h) whose memory context is
 * bf_agg_states': nodeAgg keeps, without copying, a state returned as a
 * read-write pointer whose context is a child of the aggregate context.
 */
extern MemoryContext bf_agg_context(FunctionCallInfo fcinfo, const char *fname);
extern MemoryContext bf_agg_states(FunctionCallInfo fcinfo);
extern BfTypeInfo *bf_agg_typeinfo(FunctionCallInfo fcinfo);

/*
 * The expanded object d points to, if d is an expanded datum of the kind
 * these methods make; NULL for a flat value (or another kind of object).
 * Inline: the transition functions ask once per row.
 */
static inline ExpandedObjectHeader *
bf_agg_object(Datum d, const ExpandedObjectMethods *methods)
{
	varatt_expanded ptr;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	memcpy(&ptr, VARDATA_EXTERNAL(DatumGetPointer(d)), sizeof(ptr));
	return ptr.eohptr->eoh_methods == methods ? ptr.eohptr : NULL;
}

/* bf_value_agg_auto.c */
extern void bf_agg_define_gucs(void);

/* bf_grow_io.c: the text form of a growing value (of the union form too) */
#define BF_GROW_TEXT_PREFIX "bloomgrowing:1"
#define BF_UNION_TEXT_PREFIX "bloomunion:1"
extern Datum bf_grow_text_in(const char *str, bool is_union, Node *escontext);
extern char *bf_grow_text_out(struct varlena *vl);

/* bf_grow_union.c: the union form, filters of any sizes side by side */
extern struct varlena *bf_union_of(struct varlena **filters, int n);

#endif							/* BF_VALUE_H */
