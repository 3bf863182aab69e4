/*-------------------------------------------------------------------------
 *
 * bf_window.h
 *	  Declarations shared by the PostgreSQL glue of the bloomwindow type
 *	  (sliding-window filters): the varlena wrapper around the bytes of
 *	  bloom_window.h, parameter checks, and adding and testing values.
 *
 *	  bf_window.c       the constructor, add/contains, shared helpers
 *	  bf_window_io.c    text and binary I/O
 *	  bf_window_ops.c   union, equality, bf_window_info, bf_window_slices
 *	  bf_window_agg.c   bf_window_agg
 *
 *-------------------------------------------------------------------------
 */
#ifndef BF_WINDOW_H
#define BF_WINDOW_H

#include "bf_value.h"
#include "bloom_window.h"

#include "datatype/timestamp.h"

/* a bloomwindow datum is a varlena whose payload is the FORMAT.md bytes */
#define BW_PAYLOAD(vl)		((uint8 *) VARDATA(vl))
#define BW_PAYLOAD_LEN(vl)	((size_t) (VARSIZE(vl) - VARHDRSZ))

/* a detoasted, validated window */
typedef struct BwWindow
{
	struct varlena *vl;
	BloomWindowHeader hdr;
} BwWindow;

/* bf_window.c */
extern void bw_report_error(BloomWindowError err, BloomError slot_err,
							int sqlstate, const char *what);
extern BwWindow bw_fetch(Datum d);
extern BwWindow bw_fetch_copy(Datum d);
extern struct varlena *bw_from_bytes(const uint8 *data, size_t len, int sqlstate);
extern void bw_params(const Interval *window, int64 capacity, double fpr,
					  int32 nslices, int64 *slice_us, uint64 *nblocks,
					  int *nhashes);
extern int64 bw_slice_at(const BloomWindowHeader *hdr, TimestampTz at);
extern void bw_check_family(uint8 *buf, BloomWindowHeader *hdr,
							BfTypeInfo *ti, bool setting);
extern bool bw_add_hash(uint8 *buf, BloomWindowHeader *hdr, int64 slice,
						uint64 h, bool count);
extern void bw_check_compatible(const BloomWindowHeader *a,
								const BloomWindowHeader *b);
extern void bw_finish_combined(uint8 *buf, BloomWindowHeader *hdr);
extern TimestampTz bw_slice_time(const BloomWindowHeader *hdr, int64 slice);
extern Interval *bw_interval(int64 us);

#endif							/* BF_WINDOW_H */
