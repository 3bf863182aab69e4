/*-------------------------------------------------------------------------
 *
 * bf_index_am.c
 *	  The bloomfilter index access method: a per-table Bloom filter kept in
 *	  pages of the index relation and maintained by the server on every
 *	  INSERT, COPY and (non-HOT) UPDATE, with generic WAL.  This file has
 *	  the handler, the reloptions and the operator class validation; the
 *	  other callbacks are in bf_index_build.c, bf_index_insert.c, bf_index_scan.c and
 *	  bf_index_vacuum.c.
 *
 * A filter's bits only ever turn on, so the index needs no tuples, no
 * visibility and nothing to vacuum: inserting a key sets k bits of one
 * 512-bit block, on exactly one data page, under that page's exclusive
 * buffer lock.  Deleted keys disappear at REINDEX.  It is read by
 * bf_index_contains() and friends (bf_index_funcs.c), and the planner uses it
 * only to skip the table for col = const when the key is definitely
 * absent (bfcostestimate, bfgetbitmap).  See bf_index.h for the layout.
 *
 *-------------------------------------------------------------------------
 */
#include "bf_index.h"

#include <limits.h>

#include "access/amvalidate.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_amproc.h"
#include "catalog/pg_opclass.h"
#include "catalog/pg_type.h"
#include "commands/vacuum.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"

static relopt_kind bf_relopt_kind;
static bool bf_relopt_ready = false;

static void
bf_init_reloptions(void)
{
	if (bf_relopt_ready)
		return;
	bf_relopt_kind = add_reloption_kind();
	add_int_reloption(bf_relopt_kind, "capacity",
					  "Number of distinct keys the filter is sized for (0 = twice the table's rows at build time, at least 100000)",
					  0, 0, INT_MAX, AccessExclusiveLock);
	add_real_reloption(bf_relopt_kind, "fpr",
					   "False-positive rate at capacity keys, between 0 and 1 exclusive",
					   0.01, 0.0, 1.0, AccessExclusiveLock);
	add_int_reloption(bf_relopt_kind, "growth",
					  "0 = a filter of fixed size; 2 to 16 = add a layer this many times larger whenever the newest holds its capacity",
					  0, 0, BLOOM_GROW_MAX_GROWTH, AccessExclusiveLock);
	bf_relopt_ready = true;
}

static bytea *
bfoptions(Datum reloptions, bool validate)
{
	static const relopt_parse_elt tab[] = {
		{.optname = "capacity", .opttype = RELOPT_TYPE_INT,
		.offset = offsetof(BfOptions, capacity)},
		{.optname = "fpr", .opttype = RELOPT_TYPE_REAL,
		.offset = offsetof(BfOptions, fpr)},
		{.optname = "growth", .opttype = RELOPT_TYPE_INT,
		.offset = offsetof(BfOptions, growth)},
	};
	BfOptions  *opts;

	bf_init_reloptions();
	opts = (BfOptions *) build_reloptions(reloptions, validate, bf_relopt_kind,
										  sizeof(BfOptions), tab, lengthof(tab));
	if (validate && opts)
	{
		if (!(opts->fpr > 0.0 && opts->fpr < 1.0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("value %g out of bounds for option \"fpr\"", opts->fpr),
					 errdetail("The false-positive rate must be greater than 0 and less than 1."),
					 errhint("Give a rate such as 0.01 for 1 %%.")));
		if (opts->growth == 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("value 1 out of bounds for option \"growth\""),
					 errdetail("Growth is 0 (the filter does not grow) or from %d to %d.",
							   BLOOM_GROW_MIN_GROWTH, BLOOM_GROW_MAX_GROWTH)));
		if (opts->capacity > 0)
		{
			uint64		nblocks;
			int			nhashes;

			/* refuse now what the build could not allocate */
			bf_size_or_error(opts->capacity,
							 opts->growth ? opts->fpr * (1.0 - BLOOM_GROW_RATIO) : opts->fpr,
							 &nblocks, &nhashes);
		}
	}
	return (bytea *) opts;
}


/* ---- operator classes ---- */

/*
 * An operator class of this method has one operator, strategy 1, an
 * equality returning bool, and no support functions (keys are hashed by
 * the extension's own typed hashing).  Every operator of a family must
 * compare types of one element family, so that a probe of any of them
 * hashes like the indexed values.
 */
static bool
bfvalidate(Oid opclassoid)
{
	bool		result = true;
	HeapTuple	classtup;
	Form_pg_opclass classform;
	Oid			opfamilyoid;
	Oid			opcintype;
	char	   *opclassname;
	CatCList   *oprlist;
	CatCList   *proclist;
	bool		has_self = false;

	classtup = SearchSysCache1(CLAOID, ObjectIdGetDatum(opclassoid));
	if (!HeapTupleIsValid(classtup))
		elog(ERROR, "cache lookup failed for operator class %u", opclassoid);
	classform = (Form_pg_opclass) GETSTRUCT(classtup);
	opfamilyoid = classform->opcfamily;
	opcintype = classform->opcintype;
	opclassname = NameStr(classform->opcname);

	oprlist = SearchSysCacheList1(AMOPSTRATEGY, ObjectIdGetDatum(opfamilyoid));
	proclist = SearchSysCacheList1(AMPROCNUM, ObjectIdGetDatum(opfamilyoid));

	if (proclist->n_members > 0)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomfilter operator family of operator class \"%s\" has support functions, which are not used",
						opclassname)));
		result = false;
	}
	for (int i = 0; i < oprlist->n_members; i++)
	{
		HeapTuple	oprtup = &oprlist->members[i]->tuple;
		Form_pg_amop oprform = (Form_pg_amop) GETSTRUCT(oprtup);
		int			lf,
					rf;

		if (oprform->amopstrategy != 1 || oprform->amoppurpose != AMOP_SEARCH ||
			!check_amop_signature(oprform->amopopr, BOOLOID,
								  oprform->amoplefttype, oprform->amoprighttype))
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomfilter operator family of operator class \"%s\" contains invalid operator %s with strategy %d",
							opclassname, format_operator(oprform->amopopr),
							oprform->amopstrategy)));
			result = false;
			continue;
		}
		lf = oprform->amoplefttype == ANYENUMOID ? BF_FAMILY_ENUM :
			bf_family_of_type(getBaseType(oprform->amoplefttype));
		rf = oprform->amoprighttype == ANYENUMOID ? BF_FAMILY_ENUM :
			bf_family_of_type(getBaseType(oprform->amoprighttype));
		if (lf != rf || lf == BF_FAMILY_OTHER || lf == BF_FAMILY_RECORD)
		{
			ereport(INFO,
					(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
					 errmsg("bloomfilter operator family of operator class \"%s\" contains operator %s comparing types that do not hash alike",
							opclassname, format_operator(oprform->amopopr))));
			result = false;
		}
		if (oprform->amoplefttype == opcintype && oprform->amoprighttype == opcintype)
			has_self = true;
	}
	if (!has_self)
	{
		ereport(INFO,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("bloomfilter operator class \"%s\" is missing an equality operator for its type",
						opclassname)));
		result = false;
	}
	ReleaseCatCacheList(proclist);
	ReleaseCatCacheList(oprlist);
	ReleaseSysCache(classtup);
	return result;
}


PG_FUNCTION_INFO_V1(bloomfilter_am_handler);

/*
 * The routine is a constant: 19 keeps the handler's pointer (relcache,
 * amvalidate) and never copies or frees it; bf_amroutine_result hands
 * earlier versions the palloc'd copy they own.
 */
static const IndexAmRoutine bf_amroutine = {
	.type = T_IndexAmRoutine,
	.amstrategies = 1,
	.amsupport = 0,
	.amoptsprocnum = 0,
	.amcanorder = false,
	.amcanorderbyop = false,
	.amcanbackward = false,
	.amcanunique = false,
	.amcanmulticol = true,
	.amoptionalkey = true,
	.amsearcharray = false,
	.amsearchnulls = false,
	.amstorage = false,
	.amclusterable = false,
	.ampredlocks = false,
	.amcanparallel = false,
	.amcaninclude = false,
	.amusemaintenanceworkmem = false,
	.amparallelvacuumoptions = VACUUM_OPTION_NO_PARALLEL,
	BF_AMROUTINE_NEWER_FIELDS
	.amkeytype = InvalidOid,

	.ambuild = bfbuild,
	.ambuildempty = bfbuildempty,
	.aminsert = bfinsert,
	.ambulkdelete = bfbulkdelete,
	.amvacuumcleanup = bfvacuumcleanup,
	.amcanreturn = NULL,
	.amcostestimate = bfcostestimate,
	.amoptions = bfoptions,
	.amproperty = NULL,
	.ambuildphasename = NULL,
	.amvalidate = bfvalidate,
	.amadjustmembers = NULL,
	/* bitmap scans only, to rule out an absent key (bfcostestimate) */
	.ambeginscan = bfbeginscan,
	.amrescan = bfrescan,
	.amgettuple = NULL,
	.amgetbitmap = bfgetbitmap,
	.amendscan = bfendscan,
	.ammarkpos = NULL,
	.amrestrpos = NULL,
	.amestimateparallelscan = NULL,
	.aminitparallelscan = NULL,
	.amparallelrescan = NULL,
};

Datum
bloomfilter_am_handler(PG_FUNCTION_ARGS)
{
	bf_init_reloptions();
	PG_RETURN_POINTER(bf_amroutine_result(&bf_amroutine));
}
