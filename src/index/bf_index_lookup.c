/*-------------------------------------------------------------------------
 *
 * bf_index_lookup.c
 *	  Probing a bloomfilter index for a key: the index opened and checked
 *	  once per transaction and command for a caller that keeps its state
 *	  (BfIndexLookup), a partitioned index's leaves, the buffers last read,
 *	  and the test of the key's block in every layer.  The SQL functions
 *	  (bf_index_funcs.c), tracked filters and the shards of a distributed
 *	  table (bf_index_dist.c) look keys up through here; join pre-filters
 *	  (bf_join_filter.c) also through a copy of the index's bits
 *	  (BfIndexCopy).
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include "access/genam.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_inherits.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

/* a probe value must have the family of the index's key */
static void
bf_check_probe(Relation index, const BfIndexMeta *meta, BfTypeInfo *ti, Datum value)
{
	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
	if (ti->family != meta->family || ti->detail != meta->detail)
	{
		char	   *have = bf_family_text(meta->family, meta->detail);
		char	   *got = bf_family_text(ti->family, ti->detail);

		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("bloomfilter index \"%s\" holds keys of family %s, not %s (type %s)",
						RelationGetRelationName(index), have, got,
						format_type_be(ti->typid)),
				 errdetail("Values of different families hash differently, so the answer would be meaningless."),
				 meta->ncols > 1 ?
				 errhint("Pass ROW(...) with one value per key column, in the index's column order.") :
				 errhint("Cast the value to the indexed column's type.")));
	}
}

/*
 * Buffers last used for the pages of one index, for ReadRecentBuffer:
 * kept per call site; validated by ReadRecentBuffer itself, so a stale
 * entry (another index, a REINDEX) only costs the normal lookup.
 */
static Buffer *
bf_recent_for(BfIndexLookup *lk, Relation index, const BfIndexLayers *layers,
			  MemoryContext mcxt)
{
	uint32		npages = bf_index_data_pages(layers);

	if (lk == NULL)
		return NULL;
	if (lk->recent_index != RelationGetRelid(index) || lk->recent_npages != npages)
	{
		if (lk->recent)
			pfree(lk->recent);
		lk->recent = MemoryContextAllocZero(mcxt, sizeof(Buffer) * npages);
		lk->recent_npages = npages;
		lk->recent_index = RelationGetRelid(index);
	}
	return lk->recent;
}

/* one leaf index: check the probe's family, hash, read one page */
static bool
bf_leaf_contains(Relation index, BfTypeInfo *ti, Datum value,
				 BfIndexLookup *lk, MemoryContext mcxt)
{
	BfIndexState st;

	bf_index_state(index, &st);
	bf_check_probe(index, &st.meta, ti, value);
	return bf_index_test_hash(index, &st.layers, st.layers.nlayers,
							  bf_hash_datum(ti, value, st.meta.seed),
							  bf_recent_for(lk, index, &st.layers, mcxt));
}

/* the indexes holding bits: the index, or the leaves of a partitioned one */
List *
bf_index_leaves(Oid indexoid)
{
	List	   *all;
	List	   *leaves = NIL;
	ListCell   *lc;

	if (get_rel_relkind(indexoid) != RELKIND_PARTITIONED_INDEX)
		return list_make1_oid(indexoid);
	all = find_all_inheritors(indexoid, AccessShareLock, NULL);
	foreach(lc, all)
		if (get_rel_relkind(lfirst_oid(lc)) == RELKIND_INDEX)
			leaves = lappend_oid(leaves, lfirst_oid(lc));
	list_free(all);
	return leaves;
}

/*
 * The leaves of a partitioned bloomfilter index (a partition's index has
 * its parent's access method), each checked complete
 */
static List *
bf_leaf_indexes(Relation index)
{
	List	   *leaves = bf_index_leaves(RelationGetRelid(index));
	ListCell   *lc;

	foreach(lc, leaves)
	{
		Relation	child = index_open(lfirst_oid(lc), NoLock);

		bf_index_check_complete(child);
		index_close(child, NoLock);
	}
	return leaves;
}

/* probe a leaf index, or the leaves of a partitioned one */
bool
bf_probe(Relation index, List *leaves, BfTypeInfo *ti, Datum value,
		 BfIndexLookup *lk, MemoryContext mcxt)
{
	ListCell   *lc;

	if (bf_pending_unknown())
		return true;			/* the leader may hold keys this worker cannot see */
	/* an index newer than the snapshot says "maybe" (bf_index_current) */
	if (index->rd_rel->relkind != RELKIND_PARTITIONED_INDEX)
		return !bf_index_current(index) || bf_leaf_contains(index, ti, value, lk, mcxt);
	foreach(lc, leaves)
	{
		Relation	child = index_open(lfirst_oid(lc), NoLock);
		bool		found;

		CHECK_FOR_INTERRUPTS();
		found = !bf_index_current(child) || bf_leaf_contains(child, ti, value, NULL, NULL);
		index_close(child, NoLock);
		if (found)
			return true;
	}
	return false;
}

/*
 * Might the index (or, for a partitioned index, the index of some
 * partition) contain the key value?  ti describes value's type (a record
 * for a multi-column index) and may be kept by the caller across calls.
 * The caller checks privileges (bf_index_check_access).
 *
 * With lk (zeroed at first, kept by the caller in mcxt across calls), the
 * opening and checking of the index is done once while its locks are
 * held: in one transaction and subtransaction, where nothing can make
 * the index invalid or drop it; later calls open it without locking and
 * probe.  bf_index_might_contain is the same without lk.
 */
Relation
bf_lookup_open(BfIndexLookup *lk, Oid indexoid, MemoryContext mcxt,
			   const char *what)
{
	Relation	index;

	if (lk->indexoid == indexoid && lk->lxid == bf_local_xid() &&
		lk->subxid == GetCurrentSubTransactionId() &&
		lk->cid == GetCurrentCommandId(false))
	{
		/*
		 * Locked and checked in this (sub)transaction, and no command of
		 * this backend since (a DROP, DETACH or ATTACH run by a function
		 * between two lookups advances the command id).
		 */
		bf_pending_flush_all();
		return index_open(indexoid, NoLock);
	}
	index = bf_index_open(indexoid, true, what);
	lk->indexoid = InvalidOid;
	list_free(lk->leaves);
	lk->leaves = NIL;
	if (index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX)
	{
		MemoryContext old = MemoryContextSwitchTo(mcxt);

		lk->leaves = bf_leaf_indexes(index);
		MemoryContextSwitchTo(old);
	}
	lk->userid = InvalidOid;
	lk->lxid = bf_local_xid();
	lk->subxid = GetCurrentSubTransactionId();
	lk->cid = GetCurrentCommandId(false);
	lk->indexoid = indexoid;
	return index;
}

bool
bf_index_might_contain_cached(BfIndexLookup *lk, Oid indexoid, BfTypeInfo *ti,
							  Datum value, MemoryContext mcxt, const char *what)
{
	Relation	index = bf_lookup_open(lk, indexoid, mcxt, what);
	bool		found = bf_probe(index, lk->leaves, ti, value, lk, mcxt);

	index_close(index, NoLock);
	return found;
}

bool
bf_index_might_contain(Oid indexoid, BfTypeInfo *ti, Datum value)
{
	Relation	index = bf_index_open(indexoid, true, "bf_might_contain");
	List	   *leaves = index->rd_rel->relkind == RELKIND_PARTITIONED_INDEX ?
		bf_leaf_indexes(index) : NIL;
	bool		found = bf_probe(index, leaves, ti, value, NULL, NULL);

	list_free(leaves);
	index_close(index, NoLock);
	return found;
}

/*
 * A copy of a leaf index's bits in backend memory, for a caller that
 * probes many keys under one snapshot (bf_join_prefilter, for one
 * execution of a query): a probe then costs a hash and a memory read
 * rather than a buffer pin and lock.  It answers for every snapshot taken
 * before it was made: a transaction inserts its keys into the index
 * before it commits, so every key such a snapshot sees is in the copy;
 * bits set since are of keys it cannot see.
 */
struct BfIndexCopy
{
	uint64		seed;
	uint32		nlayers;
	uint32		kmax;			/* the most hashes of a layer */
	struct
	{
		uint64		nblocks;
		uint32		nhashes;
		uint8	   *bits;
	}			layer[BLOOM_GROW_MAX_LAYERS];
};

/*
 * The copy of leaf index indexoid, opened through lk as the cached lookups
 * open it, in mcxt; NULL when it is a partitioned index, when the lookups
 * would not trust it (a parallel worker of a transaction that wrote,
 * bf_index_current), or when its bits take more than max_bytes: *bytes
 * gets their size then (0 in the other cases).
 */
BfIndexCopy *
bf_index_copy(BfIndexLookup *lk, Oid indexoid, Size max_bytes, MemoryContext mcxt,
			  const char *what, Size *bytes)
{
	Relation	index = bf_lookup_open(lk, indexoid, mcxt, what);
	BfIndexState st;
	BfIndexCopy *c = NULL;

	*bytes = 0;
	if (index->rd_rel->relkind != RELKIND_PARTITIONED_INDEX && !bf_pending_unknown() &&
		bf_index_current(index))
	{
		bf_index_state(index, &st);
		for (uint32 i = 0; i < st.layers.nlayers; i++)
			*bytes += st.layers.layer[i].nblocks * BLOOM_BLOCK_BYTES;
		if (*bytes <= max_bytes)
		{
			c = MemoryContextAllocZero(mcxt, sizeof(BfIndexCopy));
			c->seed = st.meta.seed;
			c->nlayers = st.layers.nlayers;
			for (uint32 i = 0; i < c->nlayers; i++)
			{
				const BfIndexLayer *l = &st.layers.layer[i];

				c->layer[i].nblocks = l->nblocks;
				c->layer[i].nhashes = l->nhashes;
				c->kmax = Max(c->kmax, l->nhashes);
				c->layer[i].bits = MemoryContextAllocExtended(mcxt, l->nblocks * BLOOM_BLOCK_BYTES,
															  MCXT_ALLOC_HUGE);
				bf_read_bits(index, l, c->layer[i].bits);
			}
		}
	}
	index_close(index, NoLock);
	return c;
}

/* bf_index_test_hash on a copy; ti as the lookups through the index had it */
bool
bf_index_copy_contains(const BfIndexCopy *c, BfTypeInfo *ti, Datum value)
{
	uint64		h;
	uint64		words[(BLOOM_MAX_HASHES + 6) / 7];

	if (ti->family == BF_FAMILY_RECORD)
		bf_record_prepare(ti, value);
	h = bf_hash_datum(ti, value, c->seed);
	bloom_block_words(h, (int) c->kmax, words);
	for (int i = (int) c->nlayers - 1; i >= 0; i--)
		if (bloom_block_test_words(c->layer[i].bits +
								   bloom_block_of(h, c->layer[i].nblocks) * BLOOM_BLOCK_BYTES,
								   (int) c->layer[i].nhashes, words))
			return true;
	return false;
}
