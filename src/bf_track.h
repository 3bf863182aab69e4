/*-------------------------------------------------------------------------
 *
 * bf_track.h
 *	  Declarations shared by the tracked-filter code: the registry
 *	  (bf_track.c) and the trigger functions (bf_trigger.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_TRACK_H
#define BF_TRACK_H

#include "bloomfilter.h"

/* attribute numbers of bf_registry (sql/bloomfilter--1.0.sql) */
#define Anum_bf_registry_id			1
#define Anum_bf_registry_tbl		2
#define Anum_bf_registry_col		3
#define Anum_bf_registry_method		4
#define Anum_bf_registry_capacity	5
#define Anum_bf_registry_fpr		6
#define Anum_bf_registry_filter		7
#define Anum_bf_registry_deleted	8
#define Natts_bf_registry			8

/* names of the sync triggers of registry row id: bf_sync_<id>_<suffix> */
#define BF_TRIGGER_SUFFIXES {"ins", "upd", "del", "trunc"}

/* the search_path every SPI query of the extension runs under */
#define BF_SAFE_SEARCH_PATH "pg_catalog, pg_temp"

/*
 * SPI context of the extension: the schema, the qualified registry name,
 * the registry owner, and the saved user / GUC state to restore.
 */
typedef struct BfSpiContext
{
	Oid			nsp;
	char	   *nspname;		/* quoted */
	char	   *registry;		/* quoted and qualified */
	char	   *registry_attnum;	/* quoted and qualified */
	Oid			save_userid;
	int			save_sec_context;
	int			save_nestlevel;
} BfSpiContext;

/* a registry row as read by bf_registry_fetch */
typedef struct RegRow
{
	int64		id;
	Oid			tbl;
	NameData	col;
	struct varlena *filter_raw; /* as stored (maybe a TOAST pointer), or NULL */
	bool		use_index;		/* method 'index': the filter is an index */
	Oid			index;			/* that index, once looked up */
} RegRow;

extern bool bf_registry_fetch(Oid nsp, int64 id, Oid relid, const char *colname,
							  bool latest, RegRow *out);
extern BfFilter bf_registry_filter(RegRow *r);
extern bool bf_registry_filter_cached(RegRow *r, BfFilter *f);
extern Oid	bf_ext_namespace(Oid fn_oid);
extern Oid	bf_type_oid(Oid nsp);
extern void bf_spi_begin(BfSpiContext *cx, Oid fn_oid, bool as_owner);
extern void bf_spi_end(BfSpiContext *cx);
extern int64 bf_fill_from_rel(BfSpiContext *cx, BfFilter *f, Oid relid,
							  const char *colname, bool only, const char *what);
extern void bf_install_triggers(BfSpiContext *cx, int64 id, Oid relid);
extern BfFilter bf_detoast_copy(Datum d);

#endif							/* BF_TRACK_H */
