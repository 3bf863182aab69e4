/*-------------------------------------------------------------------------
 *
 * bf_index_dist_filter.c
 *	  bf_index_filter and bf_index_changes of the bloomfilter index of a
 *	  table of Citus's: the filter of the whole table for a client, as a
 *	  union (docs/FORMAT.md section 10) of the shards' filters, and patches
 *	  of it.
 *
 * Each shard's index is a filter sized for its own keys, so the table's
 * filter is their union, one layer per shard (a growing shard's layers
 * all), in shard id order: a key is "probably" there when its shard's
 * layer says so, and the union's rate is that of asking every shard.
 *
 * A patch of the union is made of the shards' own patches (their
 * bf_index_changes since each one's position), moved to where each shard
 * starts in the union.  A pg_lsn cannot hold a position per shard, so the
 * position handed out names a row of bf_dist_position on the coordinator
 * that holds them, with what is needed to place the shards' bytes: the
 * shards and placements asked, each shard's length and place, and the
 * union's header.  The whole union is sent when that row is missing or
 * made for other shards or placements (a move, a split, a rebalance give
 * new placement ids), when a shard sends its whole filter (rebuilt, or
 * grown) or a length other than the row's, or when the first key of a
 * table gives its filter a family (every empty layer takes it).
 *
 * The rows are written as the extension's owner (the caller may not
 * write the table, and must not be able to forge a position); a read-only
 * transaction cannot write one, and then gets position 0/0, which names
 * nothing: its next call is sent the whole union.  Rows older than a day
 * are deleted as new ones are made.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_dist.h"
#include "bf_grow.h"
#include "bf_patch.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"

/* positions of distributed filters: a tag no WAL position reaches */
#define DIST_POSITION_TAG	((uint64) 0xBF << 56)

/* one shard's answer to bf_index_changes */
typedef struct ShardPatch
{
	XLogRecPtr	next;
	bool		full;
	bytea	   *patch;
} ShardPatch;

/* where a union's layers come from, as a position row records it */
typedef struct UnionLayout
{
	int			nshards;
	int64	   *shards;
	int64	   *placements;
	int64	   *lengths;		/* each shard's value, in bytes */
	int64	   *heads;			/* bytes before its first layer: 0 or 64 */
	int64	   *starts;			/* where its first layer is in the union */
	int			nlayers;
	int64	   *layers;			/* where each layer's header is */
	int64		total;
	bytea	   *header;			/* the union's first 64 bytes */
	int64		kind;			/* family, flags and detail of its layers */
	int64	   *lsns;			/* each shard's position (a recorded layout) */
} UnionLayout;

/* family, flags and detail of a layer header, as one number */
static int64
kind_of(const uint8 *layer)
{
	return (int64) layer[BLOOM_FAMILY_OFFSET] |
		((int64) layer[BLOOM_FAMILY_OFFSET + 1] << 8) |
		((int64) bloom_load_u32(layer + 12) << 16);
}

static void
set_kind(uint8 *layer, int64 kind)
{
	layer[BLOOM_FAMILY_OFFSET] = (uint8) kind;
	layer[BLOOM_FAMILY_OFFSET + 1] = (uint8) (kind >> 8);
	bloom_store_u32(layer + 12, (uint32) (kind >> 16));
}

/* ---- asking the shards ---- */

/*
 * Ask every shard for bf_index_changes of its index since sinces[i] (all
 * NULL: sinces NULL).  Inside SPI.
 */
static ShardPatch *
ask_changes(Oid heapoid, List *shards, List *colnames, const char *nsp,
			const XLogRecPtr *sinces)
{
	int			n = list_length(shards);
	char	  **commands = palloc(sizeof(char *) * Max(n, 1));
	char	  **results;
	ShardPatch *out = palloc(sizeof(ShardPatch) * Max(n, 1));
	ListCell   *lc;

	foreach(lc, shards)
	{
		int			i = foreach_current_index(lc);
		char	   *since = sinces ?
			psprintf("'%X/%X'", LSN_FORMAT_ARGS(sinces[i])) : pstrdup("NULL");

		/* one text: the position, the flag, then the patch */
		commands[i] = psprintf("SELECT c.next_lsn::pg_catalog.text || ' ' || c.full_refresh::pg_catalog.text "
							   "|| ' ' || pg_catalog.encode(c.patch, 'base64') "
							   "FROM %s, %s.bf_index_changes(x.ix, %s::pg_catalog.pg_lsn) c",
							   bf_dist_shard_from(lfirst(lc), colnames, nsp), nsp, since);
	}
	results = bf_dist_run(heapoid, shards, commands);
	for (int i = 0; i < n; i++)
	{
		char	   *r = results[i];
		char	   *sp1 = strchr(r, ' ');
		char	   *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;

		if (sp2 == NULL)
			elog(ERROR, "a shard of relation %u sent no change set", heapoid);
		*sp1 = *sp2 = '\0';
		out[i].next = DatumGetLSN(DirectFunctionCall1(pg_lsn_in, CStringGetDatum(r)));
		out[i].full = strcmp(sp1 + 1, "true") == 0;
		out[i].patch = DatumGetByteaPP(DirectFunctionCall2(binary_decode,
														   CStringGetTextDatum(sp2 + 1),
														   CStringGetTextDatum("base64")));
	}
	return out;
}

/* a patch's runs, one by one: *pos starts at 0; false after the last */
static bool
next_run(const bytea *patch, Size *pos, uint64 *off, uint32 *len, const uint8 **bytes)
{
	const uint8 *p = (const uint8 *) VARDATA_ANY(patch);
	Size		plen = VARSIZE_ANY_EXHDR(patch);
	Size		at = *pos == 0 ? 24 : *pos;

	if (plen < 24 || memcmp(p, "BLMP", 4) != 0)
		elog(ERROR, "a shard sent a change set that is not a patch");
	if (at >= plen)
		return false;
	if (plen - at < 16)
		elog(ERROR, "a shard sent a truncated patch");
	*off = bloom_load_u64(p + at);
	*len = bloom_load_u32(p + at + 8);
	if (plen - at - 16 < *len)
		elog(ERROR, "a shard sent a truncated patch");
	*bytes = p + at + 16;
	*pos = at + 16 + *len;
	return true;
}

static uint64
patch_total(const bytea *patch)
{
	return bloom_load_u64((const uint8 *) VARDATA_ANY(patch) + 8);
}

/* the whole value a full patch holds (one run from offset 0) */
static struct varlena *
full_value(const bytea *patch)
{
	Size		pos = 0;
	uint64		off;
	uint32		len;
	const uint8 *bytes;
	struct varlena *vl;

	if (!next_run(patch, &pos, &off, &len, &bytes) || off != 0 || len != patch_total(patch))
		elog(ERROR, "a shard sent a full change set that is not its whole filter");
	vl = palloc_extended(VARHDRSZ + len, MCXT_ALLOC_HUGE);
	SET_VARSIZE(vl, VARHDRSZ + len);
	memcpy(VARDATA(vl), bytes, len);
	return vl;
}

/* ---- the union and its layout ---- */

/* the union of the shards' values (in shard order), and its layout */
static struct varlena *
union_of_shards(List *shards, struct varlena **values, UnionLayout *lay)
{
	int			n = list_length(shards);
	struct varlena *u = bf_union_of(values, n);
	Size		off = BLOOM_GROW_HEADER_SIZE;
	ListCell   *lc;

	lay->nshards = n;
	lay->shards = palloc(sizeof(int64) * n);
	lay->placements = palloc(sizeof(int64) * n);
	lay->lengths = palloc(sizeof(int64) * n);
	lay->heads = palloc(sizeof(int64) * n);
	lay->starts = palloc(sizeof(int64) * n);
	lay->layers = palloc(sizeof(int64) * BLOOM_GROW_MAX_LAYERS);
	lay->nlayers = 0;
	foreach(lc, shards)
	{
		const BfShard *s = lfirst(lc);
		int			i = foreach_current_index(lc);
		const uint8 *v = (const uint8 *) VARDATA(values[i]);
		Size		vlen = VARSIZE(values[i]) - VARHDRSZ;
		Size		voff = bloom_is_layered(v, vlen) ? BLOOM_GROW_HEADER_SIZE : 0;

		lay->shards[i] = s->shardid;
		lay->placements[i] = s->placementid;
		lay->lengths[i] = (int64) vlen;
		lay->heads[i] = (int64) voff;
		lay->starts[i] = (int64) off;
		/* its layers, in the union as in the value */
		while (voff < vlen)
		{
			Size		llen = bloom_total_size(bloom_load_u64(v + voff + 24));

			lay->layers[lay->nlayers++] = (int64) off;
			off += llen;
			voff += llen;
		}
	}
	lay->total = (int64) off;
	lay->header = (bytea *) palloc(VARHDRSZ + BLOOM_GROW_HEADER_SIZE);
	SET_VARSIZE(lay->header, VARHDRSZ + BLOOM_GROW_HEADER_SIZE);
	memcpy(VARDATA(lay->header), VARDATA(u), BLOOM_GROW_HEADER_SIZE);
	lay->kind = kind_of((const uint8 *) VARDATA(u) + BLOOM_GROW_HEADER_SIZE);
	return u;
}

/*
 * The union of the shards' current filters, from the whole values their
 * full patches hold
 */
static struct varlena *
union_of_patches(List *shards, const ShardPatch *sp, UnionLayout *lay)
{
	int			n = list_length(shards);
	struct varlena **values = palloc(sizeof(struct varlena *) * Max(n, 1));

	for (int i = 0; i < n; i++)
		values[i] = full_value(sp[i].patch);
	return union_of_shards(shards, values, lay);
}

/*
 * The patch of the union from the shards' patches, placed by lay; false
 * when they cannot be placed (a shard sent its whole filter, or has
 * another length, or the layers' family changed), and the whole union
 * must be sent.
 */
static bool
union_patch(const UnionLayout *lay, const ShardPatch *sp, bytea **out)
{
	BfPatch		pb;

	bf_patch_begin(&pb, BLOOM_GROW_HEADER_SIZE);
	memcpy(bf_patch_head(&pb), VARDATA_ANY(lay->header), BLOOM_GROW_HEADER_SIZE);
	for (int i = 0; i < lay->nshards; i++)
	{
		Size		pos = 0;
		uint64		off;
		uint32		len;
		const uint8 *bytes;
		int64		end = i + 1 < lay->nshards ? lay->starts[i + 1] : lay->total;

		if (sp[i].full || patch_total(sp[i].patch) != (uint64) lay->lengths[i])
			return false;
		while (next_run(sp[i].patch, &pos, &off, &len, &bytes))
		{
			/* the bytes of its layers: a growing value's header is not */
			uint64		skip = off < (uint64) lay->heads[i] ? Min(len, lay->heads[i] - off) : 0;
			int64		at;
			Size		placed;

			CHECK_FOR_INTERRUPTS();
			if (len == skip)
				continue;
			at = lay->starts[i] + (int64) (off + skip) - lay->heads[i];
			if (at + (int64) (len - skip) > end)
				return false;
			placed = bf_patch_range(&pb, (uint64) at, bytes + skip, len - skip);
			/* a layer header sent: the family it carries must be the union's */
			for (int l = 0; l < lay->nlayers; l++)
			{
				int64		h = lay->layers[l];

				if (h >= at && h + BLOOM_HEADER_SIZE <= at + (int64) (len - skip))
				{
					uint8	   *hdr = bf_patch_at(&pb, placed + (h - at));
					int64		k = kind_of(hdr);

					if (k != lay->kind && (k & 0xFF) != BF_FAMILY_NONE)
						return false;
					set_kind(hdr, lay->kind);
				}
			}
		}
	}
	*out = bf_patch_finish(&pb, false, false, (uint64) lay->total);
	return true;
}

/* what both entry points start from: the table, its shards, the extension */
typedef struct DistCall
{
	Oid			heapoid;
	List	   *colnames;
	int			save_nestlevel;
	const char *nsp;			/* the extension's schema, quoted */
	Oid			owner;			/* the extension's owner */
	List	   *shards;
} DistCall;

/* ---- the position rows ---- */

static ArrayType *
int8_array(const int64 *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Int64GetDatum(v[i]);
	return construct_array(d, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

static int64 *
int8_values(Datum arr, int *n)
{
	Datum	   *d;
	bool	   *nulls;
	int64	   *v;

	deconstruct_array(DatumGetArrayTypeP(arr), INT8OID, 8, FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &d, &nulls, n);
	v = palloc(sizeof(int64) * Max(*n, 1));
	for (int i = 0; i < *n; i++)
		v[i] = DatumGetInt64(d[i]);
	return v;
}

/* run a statement on the position table as the extension's owner */
static int
as_owner(const DistCall *dc, const char *sql, int nargs, Oid *types, Datum *values,
		 bool read_only)
{
	Oid			save_userid;
	int			save_sec;
	int			rc;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(dc->owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	rc = SPI_execute_with_args(sql, nargs, types, values, NULL, read_only, 0);
	SetUserIdAndSecContext(save_userid, save_sec);
	return rc;
}

/* the layout position since of indexoid recorded; false when none */
static bool
fetch_position(const DistCall *dc, Oid indexoid, uint64 since, UnionLayout *lay)
{
	Oid			types[2] = {INT8OID, OIDOID};
	Datum		args[2] = {Int64GetDatum((int64) (since & ~DIST_POSITION_TAG)),
	ObjectIdGetDatum(indexoid)};
	HeapTuple	tup;
	TupleDesc	desc;
	bool		isnull;
	int			n;

	if ((since & DIST_POSITION_TAG) != DIST_POSITION_TAG)
		return false;
	if (as_owner(dc, psprintf("SELECT shards, placements, lengths, heads, starts, layers, total, "
							  "header, kind, lsns FROM %s.bf_dist_position "
							  "WHERE position = $1 AND indexrelid = $2", dc->nsp),
				 2, types, args, true) != SPI_OK_SELECT)
		elog(ERROR, "could not read the positions of distributed filters");
	if (SPI_processed != 1)
		return false;
	tup = SPI_tuptable->vals[0];
	desc = SPI_tuptable->tupdesc;
	lay->shards = int8_values(SPI_getbinval(tup, desc, 1, &isnull), &lay->nshards);
	lay->placements = int8_values(SPI_getbinval(tup, desc, 2, &isnull), &n);
	lay->lengths = int8_values(SPI_getbinval(tup, desc, 3, &isnull), &n);
	lay->heads = int8_values(SPI_getbinval(tup, desc, 4, &isnull), &n);
	lay->starts = int8_values(SPI_getbinval(tup, desc, 5, &isnull), &n);
	lay->layers = int8_values(SPI_getbinval(tup, desc, 6, &isnull), &lay->nlayers);
	lay->total = DatumGetInt64(SPI_getbinval(tup, desc, 7, &isnull));
	lay->header = DatumGetByteaPCopy(SPI_getbinval(tup, desc, 8, &isnull));
	lay->kind = DatumGetInt64(SPI_getbinval(tup, desc, 9, &isnull));
	lay->lsns = int8_values(SPI_getbinval(tup, desc, 10, &isnull), &n);
	return true;
}

/*
 * Record the shards' positions sp with layout lay; the position to hand
 * out, or 0 where nothing can be written (a read-only transaction, a
 * standby)
 */
static uint64
record_position(const DistCall *dc, Oid indexoid, const UnionLayout *lay,
				const ShardPatch *sp)
{
	Oid			types[11] = {OIDOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	INT8ARRAYOID, INT8ARRAYOID, INT8OID, BYTEAOID, INT8OID, INT8ARRAYOID};
	Datum		args[11];
	int64	   *lsns = palloc(sizeof(int64) * Max(lay->nshards, 1));
	bool		isnull;
	int64		position;

	if (XactReadOnly || RecoveryInProgress())
		return 0;
	for (int i = 0; i < lay->nshards; i++)
		lsns[i] = (int64) sp[i].next;
	args[0] = ObjectIdGetDatum(indexoid);
	args[1] = PointerGetDatum(int8_array(lay->shards, lay->nshards));
	args[2] = PointerGetDatum(int8_array(lay->placements, lay->nshards));
	args[3] = PointerGetDatum(int8_array(lay->lengths, lay->nshards));
	args[4] = PointerGetDatum(int8_array(lay->heads, lay->nshards));
	args[5] = PointerGetDatum(int8_array(lay->starts, lay->nshards));
	args[6] = PointerGetDatum(int8_array(lay->layers, lay->nlayers));
	args[7] = Int64GetDatum(lay->total);
	args[8] = PointerGetDatum(lay->header);
	args[9] = Int64GetDatum(lay->kind);
	args[10] = PointerGetDatum(int8_array(lsns, lay->nshards));
	if (as_owner(dc, psprintf("INSERT INTO %s.bf_dist_position (indexrelid, shards, placements, "
							  "lengths, heads, starts, layers, total, header, kind, lsns) "
							  "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
							  "RETURNING position", dc->nsp),
				 11, types, args, false) != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
		elog(ERROR, "could not record the position of a distributed filter");
	position = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	/* now and then, forget the positions of more than a day ago */
	if (position % 64 == 0 &&
		as_owner(dc, psprintf("DELETE FROM %s.bf_dist_position "
							  "WHERE made < pg_catalog.now() - interval '1 day'", dc->nsp),
				 0, NULL, NULL, false) != SPI_OK_DELETE)
		elog(ERROR, "could not forget old positions of distributed filters");
	return DIST_POSITION_TAG | (uint64) position;
}

/* the same shards and placements as lay was made for? */
static bool
same_shards(const UnionLayout *lay, List *shards)
{
	ListCell   *lc;

	if (lay->nshards != list_length(shards))
		return false;
	foreach(lc, shards)
	{
		const BfShard *s = lfirst(lc);
		int			i = foreach_current_index(lc);

		if (lay->shards[i] != s->shardid || lay->placements[i] != s->placementid)
			return false;
	}
	return true;
}

/* ---- the SQL-facing entry points ---- */

/* the extension's schema (quoted) and owner, into dc; inside SPI */
static void
read_extension(DistCall *dc)
{
	bool		isnull;

	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname), e.extowner "
					"FROM pg_catalog.pg_extension e "
					"JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
					"WHERE e.extname = 'bloomfilter'", true, 1) != SPI_OK_SELECT ||
		SPI_processed != 1)
		elog(ERROR, "the extension bloomfilter is not installed");
	dc->nsp = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	dc->owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											   2, &isnull));
}

/* false when indexoid is not of a table of Citus's; else inside SPI */
static bool
dist_begin(Oid indexoid, DistCall *dc)
{
	dc->heapoid = bf_dist_index_table(indexoid);
	if (!OidIsValid(dc->heapoid))
		return false;
	dc->colnames = bf_dist_index_colnames(dc->heapoid, indexoid);
	dc->save_nestlevel = bf_dist_spi_begin();
	read_extension(dc);
	dc->shards = bf_dist_shards(dc->heapoid);
	return true;
}

/*
 * bf_index_filter for an index of a table of Citus's: false when indexoid
 * is not one; else *out is the union of its shards' filters, allocated in
 * the caller's memory context.
 */
bool
bf_dist_index_value(Oid indexoid, struct varlena **out)
{
	MemoryContext outer = CurrentMemoryContext;
	DistCall	dc;
	ShardPatch *sp;
	UnionLayout lay;
	MemoryContext old;

	if (!dist_begin(indexoid, &dc))
		return false;
	sp = ask_changes(dc.heapoid, dc.shards, dc.colnames, dc.nsp, NULL);
	old = MemoryContextSwitchTo(outer);
	*out = union_of_patches(dc.shards, sp, &lay);
	MemoryContextSwitchTo(old);
	bf_dist_spi_end(dc.save_nestlevel);
	return true;
}

/*
 * bf_index_changes for an index of a table of Citus's: false when indexoid
 * is not one; else the result row is put into fcinfo's materialized
 * result.
 */
bool
bf_dist_index_changes(FunctionCallInfo fcinfo, Oid indexoid, bool since_null,
					  XLogRecPtr since)
{
	MemoryContext outer = CurrentMemoryContext;
	DistCall	dc;
	UnionLayout lay;
	bool		known;
	ShardPatch *sp = NULL;
	bytea	   *patch = NULL;
	uint64		next;
	MemoryContext old;

	if (!dist_begin(indexoid, &dc))
		return false;
	known = !since_null && fetch_position(&dc, indexoid, since, &lay) &&
		same_shards(&lay, dc.shards);
	if (known)
	{
		XLogRecPtr *sinces = palloc(sizeof(XLogRecPtr) * Max(lay.nshards, 1));

		for (int i = 0; i < lay.nshards; i++)
			sinces[i] = (XLogRecPtr) lay.lsns[i];
		sp = ask_changes(dc.heapoid, dc.shards, dc.colnames, dc.nsp, sinces);
		old = MemoryContextSwitchTo(outer);
		known = union_patch(&lay, sp, &patch);
		MemoryContextSwitchTo(old);
	}
	if (!known)
	{
		struct varlena *u;
		BfPatch		pb;
		Size		len;

		/* every shard's whole filter: one run, the whole union */
		sp = ask_changes(dc.heapoid, dc.shards, dc.colnames, dc.nsp, NULL);
		u = union_of_patches(dc.shards, sp, &lay);
		len = VARSIZE(u) - VARHDRSZ;
		old = MemoryContextSwitchTo(outer);
		bf_patch_begin(&pb, 0);
		bf_patch_range(&pb, 0, (const uint8 *) VARDATA(u), (uint32) len);
		patch = bf_patch_finish(&pb, true, false, len);
		MemoryContextSwitchTo(old);
	}
	next = record_position(&dc, indexoid, &lay, sp);
	bf_dist_spi_end(dc.save_nestlevel);
	bf_changes_result(fcinfo, next, !known, patch);
	return true;
}
