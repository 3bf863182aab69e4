/*-------------------------------------------------------------------------
 *
 * bf_track_lookup.c
 *	  bf_might_contain, bf_tracked_filter and bf_tracked_changes: the
 *	  answer for a table column, from its tracked filter or from any usable
 *	  bloomfilter index on the column.
 *
 * What a lookup of (table, column) needs beyond the value -- the column's
 * number, the registry row, the index and its leaves, the checks that the
 * filter covers every row -- is kept per backend and dropped by the
 * relcache invalidation of any relation it was derived from (the table,
 * its partitions, the indexes) or of the registry, which the extension
 * invalidates itself whenever it changes a row (bf_track_registry.c).  So a warm
 * lookup scans no catalog and, for method 'index', not the registry.
 * Privileges are checked again for each statement and user.  Method
 * 'trigger' reads the registry row with the statement's snapshot (the
 * filter a statement sees must be that of its snapshot), then the chunk
 * row of each layer that holds the key (bf_track_chunks.c).  The join
 * pre-filter of a column tracked by the trigger method
 * (bf_join_tracked_prefilter, bf_join_filter.c) asks through
 * bf_tracked_might_contain, on the same kept entry: "quiet", it gets no
 * answer where bf_might_contain would fail, and says "maybe" then.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_track.h"
#include "bf_stats.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"
#include "utils/rls.h"

#include "bf_cache.h"
#include "bf_index.h"
#include "bf_index_sql.h"
#include "bf_dist.h"
#include "bf_patch.h"
#include "bf_relcheck.h"

/* ---- the per-backend cache of what a lookup of (table, column) needs ---- */

typedef struct TrackKey
{
	Oid			relid;
	NameData	col;
} TrackKey;

typedef struct TrackEntry
{
	TrackKey	key;
	bool		valid;			/* false after an invalidation */
	bool		complete;		/* the checks after the privilege check done */
	bool		refused;		/* ... failed for a join pre-filter (quiet) */
	uint64		generation;		/* new with every (re)build */
	AttrNumber	attnum;
	bool		use_index;
	bool		distributed;	/* Citus's: its shards answer (bf_index_dist.c) */
	Oid			index;			/* method 'index': the index */
	int			nleaves;
	Oid		   *leaves;			/* ... and the indexes that hold bits */
	int			nmembers;
	Oid		   *members;		/* relations whose invalidation drops the entry */

	/*
	 * Method 'trigger': where the registry row and the chunks lie, and the
	 * registry row version last read there (bf_track_places.c), kept
	 * between statements; row_stamp is new with every version kept.
	 */
	BfRowPlace	place;
	bool		row_valid;
	uint64		row_stamp;
	RegRow		row;			/* in track_mcxt */
	BfChunkPlaces *chunks;
} TrackEntry;

static HTAB *track_htab = NULL;
static MemoryContext track_mcxt = NULL;
static uint64 track_generation = 0;
static uint64 track_row_stamps = 0;
static uint64 track_invals = 0;
static Oid	track_registry = InvalidOid;	/* the registry the entries read */

/* drop the entries derived from relation relid (all for InvalidOid) */
static void
lookup_invalidate(Oid relid)
{
	HASH_SEQ_STATUS seq;
	TrackEntry *e;

	if (track_htab == NULL)
		return;
	track_invals++;
	hash_seq_init(&seq, track_htab);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (!OidIsValid(relid) || e->key.relid == relid)
			e->valid = false;
		else
			for (int i = 0; i < e->nmembers && e->valid; i++)
				if (e->members[i] == relid)
					e->valid = false;
	}
}

/* a change of the registry drops every entry */
static void
lookup_relcache_callback(Datum arg, Oid relid)
{
	lookup_invalidate(relid == track_registry ? InvalidOid : relid);
}

static TrackEntry *
track_entry_lookup(Oid relid, const char *colname)
{
	TrackKey	key;
	TrackEntry *e;
	bool		found;

	if (track_htab == NULL)
	{
		HASHCTL		ctl;

		track_mcxt = AllocSetContextCreate(TopMemoryContext,
										   "bloomfilter tracked lookups",
										   ALLOCSET_SMALL_SIZES);
		ctl.keysize = sizeof(TrackKey);
		ctl.entrysize = sizeof(TrackEntry);
		ctl.hcxt = track_mcxt;
		track_htab = hash_create("bloomfilter tracked lookups", 16, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		CacheRegisterRelcacheCallback(lookup_relcache_callback, (Datum) 0);
	}
	memset(&key, 0, sizeof(key));
	key.relid = relid;
	namestrcpy(&key.col, colname);
	e = hash_search(track_htab, &key, HASH_ENTER, &found);
	if (!found)
	{
		e->valid = false;
		e->leaves = NULL;
		e->members = NULL;
		e->row_valid = false;
		memset(&e->row, 0, sizeof(RegRow));
		e->chunks = NULL;
	}
	return e;
}

static Oid *
oid_array(List *l, int *n)
{
	Oid		   *a = MemoryContextAlloc(track_mcxt, sizeof(Oid) * (list_length(l) + 1));
	ListCell   *lc;
	int			i = 0;

	foreach(lc, l)
		a[i++] = lfirst_oid(lc);
	*n = i;
	return a;
}

/* ---- errors ---- */

static void
stale_error(Oid relid, const char *colname, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the filter of column \"%s\" of table \"%s\" is stale",
					colname, get_rel_name(relid)),
			 errdetail("%s", why),
			 errhint("Call bf_rebuild('%s', '%s') to rebuild it.",
					 bf_qualified_rel(relid), colname)));
}

static void
unusable_index_error(Oid idx)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("bloomfilter index \"%s\" is not valid", get_rel_name(idx)),
			 errdetail("An index left by a cancelled CREATE INDEX CONCURRENTLY, or a partitioned index missing a partition's index, may lack keys."),
			 errhint("Run REINDEX INDEX %s.", bf_qualified_rel(idx))));
}

/*
 * The filter reveals which values exist: as sensitive as the column, and
 * more than the rows a policy lets the user see.  quiet: false instead of
 * an error, and also where row-level security is off only by the
 * environment (a plan may run under other settings).
 */
static bool
check_select(Oid relid, const char *colname, AttrNumber attnum, Oid userid, bool quiet)
{
	bool		may = pg_class_aclcheck(relid, userid, ACL_SELECT) == ACLCHECK_OK ||
		pg_attribute_aclcheck(relid, attnum, userid, ACL_SELECT) == ACLCHECK_OK;

	if (quiet)
		return may && check_enable_rls(relid, userid, true) == RLS_NONE;
	if (!may)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for column %s of table %s",
						quote_identifier(colname), get_rel_name(relid)),
				 errdetail("The filter of a tracked column reveals which values the column holds, so reading it requires SELECT on the column.")));
	bf_check_no_rls(relid);
	return true;
}

/* ---- building an entry ---- */

/* drop the index leaves and tree members an entry lists */
static void
drop_relations(TrackEntry *e)
{
	if (e->leaves)
		pfree(e->leaves);
	if (e->members)
		pfree(e->members);
	e->leaves = e->members = NULL;
	e->nleaves = e->nmembers = 0;
}

/* free what a kept registry row points to */
static void
free_row(RegRow *r)
{
	if (r->filter_raw)
		pfree(r->filter_raw);
	if (r->changes_raw)
		pfree(r->changes_raw);
	if (r->layers)
		pfree(r->layers);
	r->filter_raw = r->changes_raw = NULL;
	r->layers = NULL;
}

/* forget the registry row kept and the places of the row and its chunks */
static void
forget_row(TrackEntry *e)
{
	if (e->row_valid)
	{
		free_row(&e->row);
		if (e->row.stale)
			pfree(e->row.stale);
	}
	e->row_valid = false;
	memset(&e->place, 0, sizeof(e->place));
	if (e->chunks)
		bf_chunk_places_reset(e->chunks);
}

/*
 * Before the privilege check: only what the catalogs tell anyone.  quiet:
 * false for a missing table or column instead of an error.
 */
static bool
build_column(TrackEntry *e, Oid relid, const char *colname, bool quiet)
{
	AttrNumber	attnum;

	if (quiet && (get_rel_relkind(relid) == '\0' || get_attnum(relid, colname) <= 0))
		return false;
	if (get_rel_relkind(relid) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	attnum = bf_user_column(relid, colname);
	drop_relations(e);
	forget_row(e);
	e->attnum = attnum;
	e->complete = false;
	e->refused = false;
	e->generation = ++track_generation;
	e->valid = true;
	return true;
}

/* has the column another type or collation than registry row id's filter was built for? */
static bool
type_changed(const BfExt *ext, int64 id, Oid relid, AttrNumber attnum)
{
	AttrNumber	recorded;
	Oid			typid,
				collid,
				now_typid,
				now_collid;
	int32		typmod;

	get_atttypetypmodcoll(relid, attnum, &now_typid, &typmod, &now_collid);
	return bf_registry_attnum(ext, id, &recorded, &typid, &collid) &&
		recorded == attnum && OidIsValid(typid) &&
		(now_typid != typid || now_collid != collid);
}

/*
 * Method 'trigger': the triggers must cover every table of the tree, and
 * the column must still have the type the filter was built for (both are
 * kept so by the DDL event trigger; this catches what it could not see).
 * Why the filter is stale otherwise, or NULL.
 */
static const char *
trigger_method_problem(const BfExt *ext, RegRow *r, Oid relid, AttrNumber attnum)
{
	char	   *problem = bf_sync_trigger_problem(ext, r->id, relid);

	if (problem)
		return problem;
	if (type_changed(ext, r->id, relid, attnum))
		return "The type or collation of the column changed since the filter was built.";
	return NULL;
}

/*
 * May a join pre-filter ask this table's filter at all: a plain table of
 * its own rows (an inheritance parent's filter holds its own rows only,
 * and relhassubclass is cheaper to ask than pg_inherits) or a partitioned
 * one, not Citus's?  Checked with the rights: what build_source would
 * refuse with an error, and what the shards of a distributed table
 * answer for.
 */
static bool
join_table_ok(Oid relid)
{
	char		relkind = get_rel_relkind(relid);

	return (relkind == RELKIND_PARTITIONED_TABLE ||
			(relkind == RELKIND_RELATION && !has_subclass(relid))) &&
		!bf_citus_table(relid);
}

/*
 * May a join pre-filter ask registry row r, read with the statement's
 * snapshot: of the trigger method, neither stale nor malformed, holding a
 * filter?
 */
static bool
join_row_ok(bool tracked, const RegRow *r)
{
	return tracked && !r->use_index && !r->stale && !r->malformed &&
		(r->chunk_bytes > 0 || r->filter_raw != NULL);
}

/* method 'index', or no registry row: a usable bloomfilter index */
static List *
check_index_method(TrackEntry *e, bool tracked, Oid relid, const char *colname)
{
	Oid			invalid;
	Oid			idx = bf_find_bloom_index(relid, e->attnum, &invalid);
	List	   *leaves;
	List	   *members;
	ListCell   *lc;

	if (!OidIsValid(idx))
	{
		if (OidIsValid(invalid))
			unusable_index_error(invalid);
		if (!tracked)
			bf_not_tracked(relid, colname);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the bloomfilter index of column \"%s\" of table \"%s\" is missing",
						colname, get_rel_name(relid)),
				 errhint("Call bf_rebuild('%s', '%s') to create it again.",
						 bf_qualified_rel(relid), colname)));
	}
	leaves = bf_index_leaves(idx);
	foreach(lc, leaves)
		if (!bf_index_usable(lfirst_oid(lc)))
			unusable_index_error(lfirst_oid(lc));
	members = list_concat(bf_tree_members(relid), leaves);
	members = lappend_oid(members, idx);
	e->index = idx;
	e->leaves = oid_array(leaves, &e->nleaves);
	return members;
}

/*
 * After the privilege check: the registry, the index, the tree.  quiet (a
 * join pre-filter's, after join_table_ok): false where a filter of the
 * trigger method cannot answer (join_row_ok, a trigger method problem)
 * instead of an error.
 */
static bool
build_source(const BfExt *ext, TrackEntry *e, Oid relid, const char *colname, bool quiet)
{
	RegRow		r;
	bool		tracked;
	List	   *members;
	const char *problem = NULL;

	/* what an earlier, failed build left */
	drop_relations(e);
	tracked = quiet ? bf_registry_fetch_damaged(ext, 0, relid, colname, false, &r) :
		bf_registry_fetch(ext, 0, relid, colname, false, &r);
	if (quiet && !join_row_ok(tracked, &r))
		return false;

	/*
	 * A filter that cannot see every row would answer false for some; the
	 * shards of a distributed table answer for theirs.
	 */
	e->distributed = bf_citus_table(relid);
	if (!e->distributed)
	{
		bf_check_local_rows(relid, "bf_might_contain");
		bf_check_no_children(relid, "bf_might_contain");
	}
	if (tracked && r.stale)
		stale_error(relid, colname, r.stale);
	e->use_index = !tracked || r.use_index;
	if (e->distributed && !e->use_index)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("column \"%s\" of table \"%s\" is tracked by triggers, which cannot see the rows of its shards",
						colname, get_rel_name(relid)),
				 errdetail("The table is distributed by Citus."),
				 errhint("Track it with method 'index': bf_untrack('%s', '%s'), then bf_track('%s', '%s').",
						 bf_qualified_rel(relid), colname, bf_qualified_rel(relid), colname)));
	if (e->use_index)
		members = check_index_method(e, tracked, relid, colname);
	else
	{
		problem = trigger_method_problem(ext, &r, relid, e->attnum);
		if (problem && !quiet)
			stale_error(relid, colname, problem);
		members = bf_tree_members(relid);
	}
	/* a refusal (quiet) is kept until a relation of the tree changes too */
	e->members = oid_array(members, &e->nmembers);
	e->complete = problem == NULL;
	return e->complete;
}

/* ---- per call site ---- */

/*
 * Per-call-site state: how to hash the value, whose privileges were
 * checked against which entry, and (method 'trigger') the last registry
 * probe with the snapshot it was made under.  Within one statement the
 * snapshot does not change, so neither can the registry row it sees: the
 * probe is reused until the active snapshot sees other rows (a new
 * statement after a write or a commit, also in a PL/pgSQL loop where the
 * call site survives across statements).
 */
typedef struct LookupCall
{
	bool		ti_valid;
	BfTypeInfo	ti;
	Oid			argtype;		/* of the value, as passed */

	Oid			checked_user;
	uint64		checked_generation;

	bool		probe_valid;
	uint64		probe_generation;
	uint64		chunk_reads;	/* chunk rows read for the kept row */
	CommandId	curcid;
	TransactionId xmin;
	TransactionId xmax;
	uint32		xcnt;
	int32		subxcnt;
	bool		suboverflowed;
	TransactionId *xip;			/* xip, then subxip */
	RegRow		row;			/* filter_raw in fn_mcxt */
	uint64		row_stamp;		/* the entry's row it is a copy of */

	/* the row's filter, held in the backend's cache while the row is kept */
	bool		filter_valid;
	BfFilter	filter;
	BfCachedFilter *held;
	struct varlena *assembled;	/* a chunked filter's value, in fn_mcxt */
	MemoryContextCallback release;

	/* the caller's own state at this call site (bf_tracked_call_state) */
	void	   *caller;
} LookupCall;

/* give back the filter held for the row (also when fn_mcxt goes away) */
static void
lookup_release(void *arg)
{
	LookupCall *c = (LookupCall *) arg;

	if (c->held)
		bf_filter_cache_release(c->held);
	c->held = NULL;
	if (c->assembled)
		pfree(c->assembled);
	c->assembled = NULL;
	c->filter_valid = false;
}

static LookupCall *
lookup_call(FunctionCallInfo fcinfo)
{
	LookupCall *c = fcinfo->flinfo->fn_extra;

	if (c == NULL)
	{
		c = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(LookupCall));
		c->release.func = lookup_release;
		c->release.arg = c;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, &c->release);
		fcinfo->flinfo->fn_extra = c;
	}
	return c;
}

/*
 * The entry of (relid, colname) for userid, after the privilege check
 * (once per call site c and user; every time without c): the table is
 * locked (AccessShareLock, as by a SELECT), which also makes this backend
 * see the invalidations of everything committed before.  quiet (a join
 * pre-filter's): NULL where the filter of the trigger method may not
 * answer instead of an error, a refusal kept in the entry as its checks.
 */
static TrackEntry *
entry_for(const BfExt *ext, Oid relid, const char *colname, Oid userid, LookupCall *c,
		  bool quiet)
{
	TrackEntry *e;

	LockRelationOid(relid, AccessShareLock);
	AcceptInvalidationMessages();
	if (track_registry != ext->registry_relid)
	{
		/* another registry (the extension was made again): start afresh */
		lookup_invalidate(InvalidOid);
		track_registry = ext->registry_relid;
	}
	e = track_entry_lookup(relid, colname);
	if (!e->valid && !build_column(e, relid, colname, quiet))
		return NULL;
	if (c == NULL || c->checked_user != userid || c->checked_generation != e->generation)
	{
		if ((quiet && !join_table_ok(relid)) ||
			!check_select(relid, colname, e->attnum, userid, quiet))
			return NULL;
		if (c != NULL)
		{
			c->checked_user = userid;
			c->checked_generation = e->generation;
		}
	}
	if (!e->complete)
	{
		uint64		invals = track_invals;
		bool		built;

		if (quiet && e->refused)
			return NULL;
		built = build_source(ext, e, relid, colname, quiet);
		/* an invalidation arrived while building: use it once, then rebuild */
		if (track_invals != invals)
			e->valid = false;
		else if (!built)
			e->refused = true;
		if (!built)
			return NULL;
	}
	/* a join pre-filter asks a filter of the trigger method only */
	return quiet && (e->use_index || e->distributed) ? NULL : e;
}

/* the entry of (tbl, col) for this call of a SQL function */
static TrackEntry *
lookup_entry(FunctionCallInfo fcinfo, const BfExt *ext, LookupCall *c)
{
	return entry_for(ext, PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)), GetUserId(), c,
					 false);
}

/*
 * Can the last probe be reused?  Only under a snapshot that sees exactly
 * the same rows: same xmin, xmax, command id and in-progress (sub)xids.
 * The contents are compared, not the pointer: a later statement's snapshot
 * may be allocated at the same address.  store: remember the active one.
 */
static bool
same_snapshot(LookupCall *c, bool store, MemoryContext mcxt)
{
	Snapshot	s;

	if (!ActiveSnapshotSet())
		return false;
	s = GetActiveSnapshot();
	if (s->snapshot_type != SNAPSHOT_MVCC)
		return false;
	if (store)
	{
		c->curcid = s->curcid;
		c->xmin = s->xmin;
		c->xmax = s->xmax;
		c->xcnt = s->xcnt;
		c->subxcnt = s->subxcnt;
		c->suboverflowed = s->suboverflowed;
		if (c->xip)
			pfree(c->xip);
		c->xip = MemoryContextAlloc(mcxt, sizeof(TransactionId) * (s->xcnt + s->subxcnt + 1));
		memcpy(c->xip, s->xip, sizeof(TransactionId) * s->xcnt);
		memcpy(c->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt);
		return true;
	}
	return c->curcid == s->curcid && c->xmin == s->xmin && c->xmax == s->xmax &&
		c->xcnt == s->xcnt && c->subxcnt == s->subxcnt &&
		c->suboverflowed == s->suboverflowed &&
		memcmp(c->xip, s->xip, sizeof(TransactionId) * s->xcnt) == 0 &&
		memcmp(c->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt) == 0;
}

static struct varlena *
keep_varlena(MemoryContext mcxt, const struct varlena *v)
{
	struct varlena *copy;

	if (v == NULL)
		return NULL;
	copy = MemoryContextAlloc(mcxt, VARSIZE_ANY(v));
	memcpy(copy, v, VARSIZE_ANY(v));
	return copy;
}

/* the snapshot a lookup reads the registry row and the chunks of a filter with */
static Snapshot
lookup_snapshot(void)
{
	return ActiveSnapshotSet() ? GetActiveSnapshot() : GetTransactionSnapshot();
}

/* *dst = src, with what it points to copied into mcxt (dst's own freed) */
static void
keep_row(RegRow *dst, const RegRow *src, MemoryContext mcxt)
{
	free_row(dst);
	*dst = *src;
	if (src->layers)
	{
		dst->layers = MemoryContextAlloc(mcxt, sizeof(BfChunkLayer) * src->nlayers);
		memcpy(dst->layers, src->layers, sizeof(BfChunkLayer) * src->nlayers);
	}
	dst->filter_raw = keep_varlena(mcxt, src->filter_raw);
	dst->changes_raw = keep_varlena(mcxt, src->changes_raw);
}

static void
changed_error(Oid relid, const char *colname)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the filter of column \"%s\" of table \"%s\" changed during the lookup",
					colname, get_rel_name(relid)),
			 errhint("Retry the statement.")));
}

/*
 * Method 'trigger': the registry row the statement's snapshot sees.  The
 * entry keeps the row's place and the version last read there between
 * statements (bf_track_places.c): a statement whose snapshot sees that
 * version again reads one heap page, and neither the index nor the row's
 * columns.  quiet: NULL where the row cannot answer (untracked, stale, no
 * filter) instead of an error.
 */
static RegRow *
probe_registry(FunctionCallInfo fcinfo, const BfExt *ext, LookupCall *c,
			   TrackEntry *e, bool quiet)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *colname = NameStr(*PG_GETARG_NAME(1));
	RegRow		fresh;

	if (c->probe_valid && c->probe_generation == e->generation &&
		same_snapshot(c, false, NULL))
		return &c->row;
	c->probe_valid = false;
	if (!e->row_valid)
		ItemPointerSetInvalid(&e->place.seen);
	switch (bf_registry_fetch_kept(ext, &e->place, relid, colname, lookup_snapshot(), &fresh))
	{
		case BF_KEPT_NONE:
			/* untracked since the entry was built: start over */
			e->valid = false;
			if (quiet)
				return NULL;
			changed_error(relid, colname);
			break;
		case BF_KEPT_NEW:
			if (fresh.use_index)
			{
				e->valid = false;
				if (quiet)
					return NULL;
				changed_error(relid, colname);
			}
			if (e->row_valid && e->row.stale)
				pfree(e->row.stale);
			keep_row(&e->row, &fresh, track_mcxt);
			if (fresh.stale)
				e->row.stale = MemoryContextStrdup(track_mcxt, fresh.stale);
			e->row_valid = true;
			e->row_stamp = ++track_row_stamps;
			break;
		case BF_KEPT_SAME:
			break;
	}
	if (quiet && !join_row_ok(true, &e->row))
		return NULL;
	if (e->row.stale)
		stale_error(relid, colname, e->row.stale);
	if (e->row.filter_raw == NULL && e->row.chunk_bytes == 0)
		stale_error(relid, colname, "The registry holds no filter for the column.");

	/* keep the probe for the rest of the statement */
	lookup_release(c);
	if (c->row_stamp != e->row_stamp)
	{
		keep_row(&c->row, &e->row, fcinfo->flinfo->fn_mcxt);
		c->row.stale = NULL;
		c->row_stamp = e->row_stamp;
	}
	c->probe_generation = e->generation;
	c->chunk_reads = 0;
	c->probe_valid = same_snapshot(c, true, fcinfo->flinfo->fn_mcxt);
	return &c->row;
}

/*
 * The filter of the kept row, detoasted (or assembled from its chunks)
 * once for this call site
 */
static const BfFilter *
lookup_filter(FunctionCallInfo fcinfo, const BfExt *ext, LookupCall *c)
{
	if (!c->filter_valid)
	{
		if (c->row.chunk_bytes > 0)
		{
			MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

			c->assembled = bf_chunks_assemble(ext, &c->row, lookup_snapshot(), 0, NULL);
			MemoryContextSwitchTo(old);
			c->filter = bf_fetch_any(PointerGetDatum(c->assembled));
		}
		else
			c->held = bf_registry_filter_hold(&c->row, &c->filter);
		c->filter_valid = true;
	}
	return &c->filter;
}

/*
 * bf_might_contain(tbl, col, value) on c, fcinfo's call-site state: e the
 * entry.  quiet: false where the registry row cannot answer (probe_registry)
 * instead of an error; else true, the answer in *found.
 */
static bool
might_contain_in(FunctionCallInfo fcinfo, LookupCall *c, const BfExt *ext, TrackEntry *e,
				 bool quiet, bool *found)
{
	Datum		value = PG_GETARG_DATUM(2);
	const BfFilter *f;

	if (!c->ti_valid)
	{
		Oid			argtype = get_fn_expr_argtype(fcinfo->flinfo, 2);

		if (!OidIsValid(argtype))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("could not determine the type of the value to look up")));
		bf_typeinfo_init(&c->ti, argtype, PG_GET_COLLATION(), fcinfo->flinfo->fn_mcxt);
		c->argtype = argtype;
		c->ti_valid = true;
	}
	*found = false;
	if (e->distributed)
	{
		*found = bf_dist_might_contain(e->key.relid, e->index, c->argtype, value,
									   ext->nspname);
		return true;
	}
	if (e->use_index)
	{
		/* the leaves, not the partitioned index: no pg_inherits scan per call */
		int			n = e->nleaves;
		Oid		   *leaves = e->leaves;

		for (int i = 0; i < n && !*found; i++)
			*found = bf_index_might_contain(leaves[i], &c->ti, value);
		return true;
	}
	if (probe_registry(fcinfo, ext, c, e, quiet) == NULL)
		return false;

	/*
	 * A chunked filter: the key's chunk only, unless this call site asks
	 * many keys under one snapshot (a query over many rows).  Reading every
	 * chunk in one ordered scan costs about what reading an eighth of them
	 * one by one does, so after that many reads the whole value is read
	 * once and the rest of the keys are tested in memory.
	 */
	if (c->row.chunk_bytes > 0 && !c->filter_valid &&
		c->chunk_reads++ < (uint64) (16 + bf_chunks_count(&c->row) / (8 * c->row.nlayers)))
	{
		if (e->chunks == NULL)
			e->chunks = bf_chunk_places_new(track_mcxt);
		*found = bf_chunks_test(ext, &c->row, &c->ti, value, lookup_snapshot(),
								e->chunks);
		return true;
	}
	f = lookup_filter(fcinfo, ext, c);
	*found = bf_filter_test(f, &c->ti, value);
	return true;
}

/*
 * ... for this call's user, counted in the filter's statistics
 * (bf_stats.h); quiet as entry_for and might_contain_in
 */
static bool
might_contain(FunctionCallInfo fcinfo, bool quiet, bool *found)
{
	const BfExt *ext = bf_ext(fcinfo->flinfo->fn_oid, false);
	LookupCall *c = lookup_call(fcinfo);
	TrackEntry *e = entry_for(ext, PG_GETARG_OID(0), NameStr(*PG_GETARG_NAME(1)),
							  GetUserId(), c, quiet);

	if (e == NULL || !might_contain_in(fcinfo, c, ext, e, quiet, found))
		return false;
	bf_stats_count(e->key.relid, e->attnum, !*found);
	return true;
}

PG_FUNCTION_INFO_V1(bf_might_contain);
Datum
bf_might_contain(PG_FUNCTION_ARGS)
{
	bool		found;

	might_contain(fcinfo, false, &found);
	PG_RETURN_BOOL(found);
}

/*
 * May a join pre-filter ask the filter of column colname of table relid,
 * tracked by the trigger method, for userid: a plain table of its own
 * rows or a partitioned one, no row-level security for userid, SELECT on
 * the column, a filter that is not stale and whose sync triggers and
 * column type are as it was built for?  What bf_might_contain would
 * check, without an error: false where it would fail.  The checks but
 * the user's are kept with the backend's lookups (entry_for), as
 * bf_might_contain's are.
 */
bool
bf_tracked_join_usable(const BfExt *ext, Oid relid, const char *colname, Oid userid)
{
	return entry_for(ext, relid, colname, userid, NULL, true) != NULL;
}

/*
 * For a function of the same arguments as bf_might_contain (tbl, col,
 * value) that answers through it (the join pre-filter of a tracked column,
 * bf_join_filter.c): bf_might_contain's answer in *found, on fcinfo's
 * call-site state, with the rights checked once per call site and user;
 * false where bf_tracked_join_usable would say no, instead of an error.
 * And a slot kept with that state for the caller's own (NULL at first,
 * allocated by the caller in fn_mcxt).
 */
bool
bf_tracked_might_contain(FunctionCallInfo fcinfo, bool *found)
{
	return might_contain(fcinfo, true, found);
}

void	  **
bf_tracked_call_state(FunctionCallInfo fcinfo)
{
	return &lookup_call(fcinfo)->caller;
}

PG_FUNCTION_INFO_V1(bf_tracked_filter);
Datum
bf_tracked_filter(PG_FUNCTION_ARGS)
{
	const BfExt *ext = bf_ext(fcinfo->flinfo->fn_oid, false);
	LookupCall *c = lookup_call(fcinfo);
	TrackEntry *e = lookup_entry(fcinfo, ext, c);
	RegRow	   *r;

	if (e->use_index)
		PG_RETURN_POINTER(bf_index_value(e->index, "bf_index_filter"));
	r = probe_registry(fcinfo, ext, c, e, false);
	if (r->chunk_bytes > 0)
		PG_RETURN_POINTER(bf_chunks_assemble(ext, r, lookup_snapshot(), 0, NULL));
	PG_RETURN_POINTER(PG_DETOAST_DATUM_COPY(PointerGetDatum(r->filter_raw)));
}

PG_FUNCTION_INFO_V1(bf_tracked_changes);

/*
 * bf_tracked_changes(tbl, col, since) -> one row (next_lsn, full_refresh,
 * patch) taking a copy of bf_tracked_filter(tbl, col) from since to now.
 * For a column tracked by an index, that of bf_index_changes; for the
 * trigger method, positions are the registry row's versions
 * (bf_track_changes.c).  Rights as for bf_tracked_filter.
 */
Datum
bf_tracked_changes(PG_FUNCTION_ARGS)
{
	const BfExt *ext;
	LookupCall *c;
	TrackEntry *e;
	RegRow	   *r;
	bool		since_null = PG_ARGISNULL(2);
	uint64		since = since_null ? 0 : PG_GETARG_LSN(2);
	const BfFilter *f;
	int64		version;
	bytea	   *patch;
	bool		full;

	InitMaterializedSRF(fcinfo, 0);
	/* not STRICT for since; a NULL tbl or col gives no row, as STRICT would */
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		return (Datum) 0;
	ext = bf_ext(fcinfo->flinfo->fn_oid, false);
	c = lookup_call(fcinfo);
	e = lookup_entry(fcinfo, ext, c);
	if (e->use_index)
		return bf_index_changes_of(fcinfo, e->index, since_null, (XLogRecPtr) since);
	r = probe_registry(fcinfo, ext, c, e, false);
	if (r->chunk_bytes > 0)
	{
		uint64		next;

		patch = bf_chunks_patch(ext, r, lookup_snapshot(), since_null, since, &next, &full);
		return bf_changes_result(fcinfo, next, full, patch);
	}
	f = lookup_filter(fcinfo, ext, c);
	version = r->has_version ? r->version : 0;
	patch = bf_track_patch(f->vl, r->changes_raw, version, since_null, since, &full);
	return bf_changes_result(fcinfo, (uint64) version, full, patch);
}
