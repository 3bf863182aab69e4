/*-------------------------------------------------------------------------
 *
 * bf_compat.h
 *	  The one place where the extension's code differs between the
 *	  PostgreSQL major versions it supports (15 to 19).  Every
 *	  PG_VERSION_NUM test lives here; the rest of the code calls the
 *	  wrappers below.
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_COMPAT_H
#define BF_COMPAT_H

#include "postgres.h"

#if PG_VERSION_NUM < 150000
#error "bloomfilter supports PostgreSQL 15 and later"
#endif

/* 16 moved the varlena macros (VARSIZE, SET_VARSIZE, VARDATA...) here */
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

#include "access/amapi.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "nodes/pg_list.h"
#include "parser/parse_type.h"
#include "storage/bufmgr.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/acl.h"
#include "utils/regproc.h"
#include "utils/rel.h"

/* is userid the owner of relation relid? */
static inline bool
bf_rel_ownercheck(Oid relid, Oid userid)
{
#if PG_VERSION_NUM >= 160000
	return object_ownercheck(RelationRelationId, relid, userid);
#else
	return pg_class_ownercheck(relid, userid);
#endif
}

/* "schema.name" (quoted parts allowed) into a list of String nodes */
static inline List *
bf_qualified_name_list(const char *str)
{
#if PG_VERSION_NUM >= 160000
	return stringToQualifiedNameList(str, NULL);
#else
	return stringToQualifiedNameList(str);
#endif
}

/*
 * ReadRecentBuffer: try the buffer that held this block last time.  16
 * renamed the relation's RelFileNode to RelFileLocator.
 */
static inline bool
bf_read_recent_buffer(Relation rel, BlockNumber blkno, Buffer recent)
{
#if PG_VERSION_NUM >= 160000
	return ReadRecentBuffer(rel->rd_locator, MAIN_FORKNUM, blkno, recent);
#else
	return ReadRecentBuffer(rel->rd_node, MAIN_FORKNUM, blkno, recent);
#endif
}

/* the relation's physical file number: it changes at REINDEX and TRUNCATE */
static inline Oid
bf_rel_filenumber(Relation rel)
{
#if PG_VERSION_NUM >= 160000
	return rel->rd_locator.relNumber;
#else
	return rel->rd_node.relNode;
#endif
}

/* a new, exclusively locked page at the end of a fork */
static inline Buffer
bf_extend_relation(Relation rel, ForkNumber fork)
{
#if PG_VERSION_NUM >= 160000
	return ExtendBufferedRel(BMR_REL(rel), fork, NULL, EB_LOCK_FIRST);
#else
	Buffer		buf;
	bool		needlock = !RELATION_IS_LOCAL(rel);

	if (needlock)
		LockRelationForExtension(rel, ExclusiveLock);
	buf = ReadBufferExtended(rel, fork, P_NEW, RBM_NORMAL, NULL);
	LockBuffer(buf, BUFFER_LOCK_EXCLUSIVE);
	if (needlock)
		UnlockRelationForExtension(rel, ExclusiveLock);
	return buf;
#endif
}

/*
 * Input errors are soft where the server supports it (16+), so that
 * pg_input_is_valid() and COPY ... ON_ERROR can use them; on 15 they are
 * ordinary errors.  BF_INPUT_ERROR returns (Datum) 0 from the calling
 * function after a soft error, BF_INPUT_ERROR_NULL returns NULL.
 */
#if PG_VERSION_NUM >= 160000
#define BF_INPUT_ERROR(ctx, ...) ereturn((ctx), (Datum) 0, __VA_ARGS__)
#define BF_INPUT_ERROR_NULL(ctx, ...) ereturn((ctx), NULL, __VA_ARGS__)
#else
#define BF_INPUT_ERROR(ctx, ...) \
	do { (void) (ctx); ereport(ERROR, __VA_ARGS__); } while (0)
#define BF_INPUT_ERROR_NULL(ctx, ...) BF_INPUT_ERROR(ctx, __VA_ARGS__)
#endif

/*
 * parseTypeString: false for a name that is not a type.  On 15 an unknown
 * name raises its own error (there are no soft errors there).
 */
static inline bool
bf_parse_type_string(const char *str, Oid *typid, int32 *typmod, Node *escontext)
{
#if PG_VERSION_NUM >= 160000
	return parseTypeString(str, typid, typmod, escontext);
#else
	(void) escontext;
	parseTypeString(str, typid, typmod, false);
	return true;
#endif
}

/*
 * IndexAmRoutine fields added after 15, each set deliberately (designated
 * initialisers of the constant routine, bf_index_am.c): the bloomfilter
 * index summarizes nothing, builds serially (the build is one table scan
 * that sets bits in memory, bounded by the scan, not by CPU), needs no
 * cleanup after a batch of inserts, and offers no hashing, ordering or
 * comparison-type translation to the planner.
 */
#if PG_VERSION_NUM >= 160000
#define BF_AMROUTINE_FIELDS_16 .amsummarizing = false,
#else
#define BF_AMROUTINE_FIELDS_16
#endif
#if PG_VERSION_NUM >= 170000
#define BF_AMROUTINE_FIELDS_17 .amcanbuildparallel = false, .aminsertcleanup = NULL,
#else
#define BF_AMROUTINE_FIELDS_17
#endif
#if PG_VERSION_NUM >= 180000
#define BF_AMROUTINE_FIELDS_18 \
	.amcanhash = false, .amconsistentequality = false, \
	.amconsistentordering = false, .amgettreeheight = NULL, \
	.amtranslatestrategy = NULL, .amtranslatecmptype = NULL,
#else
#define BF_AMROUTINE_FIELDS_18
#endif
#define BF_AMROUTINE_NEWER_FIELDS \
	BF_AMROUTINE_FIELDS_16 BF_AMROUTINE_FIELDS_17 BF_AMROUTINE_FIELDS_18

/*
 * What an index AM handler returns.  19 keeps the pointer it is given
 * (GetIndexAmRoutine returns it const, relcache stores it, nothing frees
 * it): the routine itself, a static constant.  Earlier versions own the
 * struct (relcache copies it, amvalidate pfrees it): a palloc'd copy.
 */
static inline void *
bf_amroutine_result(const IndexAmRoutine *routine)
{
#if PG_VERSION_NUM >= 190000
	return unconstify(IndexAmRoutine *, routine);
#else
	IndexAmRoutine *copy = palloc(sizeof(IndexAmRoutine));

	memcpy(copy, routine, sizeof(IndexAmRoutine));
	return copy;
#endif
}

/* a bitmap scan of another index (18 added an instrumentation argument) */
static inline IndexScanDesc
bf_index_beginscan_bitmap(Relation index, Snapshot snapshot, int nkeys)
{
#if PG_VERSION_NUM >= 180000
	return index_beginscan_bitmap(index, snapshot, NULL, nkeys);
#else
	return index_beginscan_bitmap(index, snapshot, nkeys);
#endif
}

/*
 * Iterating over an array in place (utils/arrayaccess.h): 19 takes the
 * element type's length, by-value flag and alignment once, in
 * array_iter_setup, where earlier versions take them at each
 * array_iter_next.  Callers pass them to both wrappers.
 */
#if PG_VERSION_NUM >= 190000
#define bf_array_iter_setup(it, a, elmlen, elmbyval, elmalign) \
	array_iter_setup((it), (a), (elmlen), (elmbyval), (elmalign))
#define bf_array_iter_next(it, isnull, i, elmlen, elmbyval, elmalign) \
	array_iter_next((it), (isnull), (i))
#else
#define bf_array_iter_setup(it, a, elmlen, elmbyval, elmalign) \
	array_iter_setup((it), (a))
#define bf_array_iter_next(it, isnull, i, elmlen, elmbyval, elmalign) \
	array_iter_next((it), (isnull), (i), (elmlen), (elmbyval), (elmalign))
#endif

/*
 * The parameters of a planner_hook function, and the arguments it passes
 * on to the previous hook or standard_planner: 19 added the ExplainState
 * of an EXPLAIN (NULL otherwise).
 */
#if PG_VERSION_NUM >= 190000
#define BF_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, \
	ParamListInfo boundParams, ExplainState *es
#define BF_PLANNER_ARGS parse, query_string, cursorOptions, boundParams, es
#else
#define BF_PLANNER_PARAMS \
	Query *parse, const char *query_string, int cursorOptions, \
	ParamListInfo boundParams
#define BF_PLANNER_ARGS parse, query_string, cursorOptions, boundParams
#endif

/*
 * index_beginscan without instrumentation: 18 added its instrumentation
 * argument, 19 a word of scan options
 */
#if PG_VERSION_NUM >= 190000
#define bf_index_beginscan(heap, index, snap, nkeys, norderbys) \
	index_beginscan((heap), (index), (snap), NULL, (nkeys), (norderbys), SO_NONE)
#elif PG_VERSION_NUM >= 180000
#define bf_index_beginscan(heap, index, snap, nkeys, norderbys) \
	index_beginscan((heap), (index), (snap), NULL, (nkeys), (norderbys))
#else
#define bf_index_beginscan(heap, index, snap, nkeys, norderbys) \
	index_beginscan((heap), (index), (snap), (nkeys), (norderbys))
#endif

/* a fixed-size shared hash (19 dropped ShmemInitHash's initial size) */
#if PG_VERSION_NUM >= 190000
#define bf_shmem_init_hash(name, n, ctl, flags) ShmemInitHash((name), (n), (ctl), (flags))
#else
#define bf_shmem_init_hash(name, n, ctl, flags) ShmemInitHash((name), (n), (n), (ctl), (flags))
#endif

/* this backend's local transaction id (17 moved it into vxid) */
static inline LocalTransactionId
bf_local_xid(void)
{
#if PG_VERSION_NUM >= 170000
	return MyProc->vxid.lxid;
#else
	return MyProc->lxid;
#endif
}

/*
 * heap_update, waiting for a concurrent updater; *needs_index: the new
 * version needs index entries (not a HOT update), which 16 made
 * heap_update report.
 */
static inline TM_Result
bf_heap_try_update(Relation rel, ItemPointer otid, HeapTuple tup, CommandId cid,
				   bool *needs_index)
{
	TM_FailureData tmfd;
	LockTupleMode lockmode;
	TM_Result	res;
#if PG_VERSION_NUM >= 190000
	TU_UpdateIndexes update_indexes = TU_None;

	/* 19 added an options word (TABLE_UPDATE_*): none, logically decoded */
	res = heap_update(rel, otid, tup, cid, 0, InvalidSnapshot, true, &tmfd, &lockmode,
					  &update_indexes);
	*needs_index = update_indexes != TU_None;
#elif PG_VERSION_NUM >= 160000
	TU_UpdateIndexes update_indexes = TU_None;

	res = heap_update(rel, otid, tup, cid, InvalidSnapshot, true, &tmfd, &lockmode,
					  &update_indexes);
	*needs_index = update_indexes != TU_None;
#else
	res = heap_update(rel, otid, tup, cid, InvalidSnapshot, true, &tmfd, &lockmode);
	*needs_index = !HeapTupleIsHeapOnly(tup);
#endif
	return res;
}


/* 18 moved ExplainPropertyText and its kin out of commands/explain.h */
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#endif

#endif							/* BF_COMPAT_H */
