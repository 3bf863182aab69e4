# bloomfilter: PGXS build
#
# Each folder of src/ (src/README.md maps them and the directions between
# them) lists its objects on lines of its own, and each area its tests, so
# that work on one area does not touch the lines of another.
MODULE_big = bloomfilter
EXTENSION = bloomfilter
PGFILEDESC = "bloomfilter - Bloom filter type for PostgreSQL"

# the entry point (_PG_init), alone
OBJS_ENTRY = src/bloomfilter.o

# helpers several folders share: relation checks, change-set results,
# per-filter statistics, plan nodes that pass their child's tuples on
OBJS_COMMON = src/common/bf_relcheck.o src/common/bf_patch.o src/common/bf_stats.o src/common/bf_stats_shmem.o \
	src/common/bf_stats_pgstat.o \
	src/common/bf_passthrough.o

# the PostgreSQL-free core: plain, growing and window filters' bytes, text
OBJS_CORE = src/core/bloom_core.o src/core/bloom_text.o src/core/bloom_grow.o \
	src/core/bloom_window.o

# the value type: hashing, I/O, functions, aggregates, growing values, and
# the cache of detoasted filters
OBJS_VALUE = src/value/bf_hash.o src/value/bf_value_base.o \
	src/value/bf_value_filter.o src/value/bf_value_text.o src/value/bf_value_io.o \
	src/value/bf_value_funcs.o src/value/bf_value_ops.o src/value/bf_value_agg.o \
	src/value/bf_value_agg_auto.o src/value/bf_value_agg_internal.o src/value/bf_cache.o \
	src/value/bf_grow.o src/value/bf_grow_io.o src/value/bf_grow_union.o

# sliding-window filters
OBJS_WINDOW = src/window/bf_window.o src/window/bf_window_io.o \
	src/window/bf_window_ops.o src/window/bf_window_agg.o

# the index access method
OBJS_INDEX = src/index/bf_index_am.o src/index/bf_index_meta.o src/index/bf_index_layers.o \
	src/index/bf_index_page.o src/index/bf_index_build.o src/index/bf_index_insert.o \
	src/index/bf_index_pending.o src/index/bf_index_scan.o src/index/bf_index_vacuum.o \
	src/index/bf_index_access.o src/index/bf_index_lookup.o

# Citus: indexes and filters of distributed tables
OBJS_DIST = src/dist/bf_index_dist.o src/dist/bf_index_dist_shards.o \
	src/dist/bf_index_dist_info.o src/dist/bf_index_dist_filter.o

# the SQL functions that read an index, local or distributed
OBJS_INDEX_SQL = src/index_sql/bf_index_funcs.o src/index_sql/bf_index_changes.o

# join filters: planner pre-filters and run-time filters
OBJS_JOIN = src/join/bf_join_keys.o src/join/bf_join_fkey.o src/join/bf_join_early.o src/join/bf_join_plan.o src/join/bf_join_filter.o \
	src/join/bf_join_runtime.o src/join/bf_join_query.o

# tracked filters: registry, management, lookups, the sync trigger, DDL
# upkeep; and bf_sync_into, the trigger helper for users' own tables
OBJS_TRACK = src/track/bf_track_registry.o src/track/bf_track_objects.o \
	src/track/bf_track_manage.o src/track/bf_track_lookup.o src/track/bf_track_view.o \
	src/track/bf_track_ddl.o src/track/bf_track_sync.o src/track/bf_track_changes.o \
	src/track/bf_track_chunks.o src/track/bf_track_chunks_write.o src/track/bf_track_grow.o \
	src/track/bf_track_places.o \
	src/track/bf_track_rebuild.o src/track/bf_track_worker.o src/track/bf_trigger.o \
	src/track/bf_sync_into.o

# scan guards: the planner hook and the node that asks a filter before a scan
OBJS_GUARD = src/guard/bf_guard_plan.o src/guard/bf_guard_node.o

OBJS = $(OBJS_ENTRY) $(OBJS_COMMON) $(OBJS_CORE) $(OBJS_VALUE) $(OBJS_WINDOW) \
	$(OBJS_INDEX) $(OBJS_DIST) $(OBJS_INDEX_SQL) $(OBJS_JOIN) $(OBJS_TRACK) $(OBJS_GUARD)

# The install script of 1.0 (released: never edited), the update scripts
# in order, and the full install script of default_version, which CREATE
# EXTENSION runs when it exists (it makes the catalog that 1.0 and the
# updates make: the upgrade suite compares the two).
UPDATE_CHAIN = sql/bloomfilter--1.0.sql sql/bloomfilter--1.0--1.1.sql sql/bloomfilter--1.1--1.2.sql \
	sql/bloomfilter--1.2--1.3.sql
FULL_SCRIPT = sql/bloomfilter--1.3.sql
DATA = $(UPDATE_CHAIN) $(FULL_SCRIPT)

# pg_regress suites, in order (setup creates the extension)
REGRESS_VALUE = setup hashing core io errors accuracy setops aggregates filter_cache

REGRESS_WINDOW = window growing union

REGRESS_INDEX = index index_security index_batch index_plan index_changes index_growing \
	join_filter join_filter_choice

REGRESS_TRACK = track track_index track_security track_ddl track_adopt track_foreign \
	tracked_changes track_drift track_grow stat_filters

# scan guards: by an index and by a tracked filter
REGRESS_GUARD = scan_guard

REGRESS_DOCS =

REGRESS = $(REGRESS_VALUE) $(REGRESS_WINDOW) $(REGRESS_INDEX) $(REGRESS_TRACK) $(REGRESS_GUARD) \
	$(REGRESS_DOCS)
# inputs in test/sql, expected outputs in test/expected; results/ and
# regression.diffs are written in the current directory
REGRESS_OPTS = --inputdir=test

ISOLATION_INDEX = index_concurrency index_invalid index_growth index_rebuild index_checkxmin

ISOLATION_TRACK = track_concurrency track_rebuild track_reshape track_upgrade track_growth \
	track_places

ISOLATION_GUARD = guard_concurrency

ISOLATION = $(ISOLATION_INDEX) $(ISOLATION_TRACK) $(ISOLATION_GUARD)
# specs in test/specs, expected outputs in test/expected; results and
# regression.diffs are written under output_iso/
ISOLATION_OPTS = --load-extension=bloomfilter --inputdir=test

# TAP tests (PostgreSQL::Test::Cluster), each with clusters of its own: the
# crash test with a streaming replica, tracked filters across pg_dump and
# pg_restore, the upgrade from the released 1.0.  "make installcheck" runs
# them after the suites above, "make prove_installcheck" alone; one of them:
# make prove_installcheck PROVE_TESTS=test/t/001_crash_replica.pl
TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

# one folder per family (src/README.md); a source names a header by its
# file name alone
SRC_DIRS = core common value window index dist index_sql join track guard
PG_CPPFLAGS = $(addprefix -I$(srcdir)/src/,$(SRC_DIRS))
# -Wno-unused-parameter: fmgr and index AM callback signatures trip it
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter
SHLIB_LINK = -lm

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# prove through test/lib/tap_prove.sh (after PGXS's include, which sets
# PROVE): as the user postgres when run as root, since PostgreSQL refuses
# to run as root and the TAP tests make clusters of their own; and with
# the files of an installation into DESTDIR (a Debian package build's
# checks) in those clusters
PROVE := $(abspath $(srcdir))/test/lib/tap_prove.sh $(PROVE)
export BF_TAP_DESTDIR = $(DESTDIR)
export BF_TAP_PKGLIBDIR = $(pkglibdir)
export BF_TAP_SHAREDIR = $(datadir)

# the clang pass that makes LLVM bitcode (with_llvm=yes) warns as the gcc
# pass does: the no-warning rule holds for both (test/bitcode_check.sh)
override BITCODE_CFLAGS += $(PG_CFLAGS)

# PGXS tracks no header dependencies unless the server was configured with
# --enable-depend; inline code in the headers must rebuild every object
$(OBJS): $(wildcard src/*/*.h)

# unit tests of the PostgreSQL-free core
test/unit/test_core: test/unit/test_core.c src/core/bloom_core.c src/core/bloom_core.h \
		src/core/bloom_text.c src/core/bloom_text.h
	$(CC) -std=c99 -O2 -Wall -Wextra -Werror -Isrc/core -o $@ test/unit/test_core.c \
		src/core/bloom_core.c src/core/bloom_text.c -lm

unitcheck: test/unit/test_core
	test/unit/test_core

# PGXS has the recipe of the TAP tests (Makefile.global's prove_installcheck,
# which installcheck runs) but no target of that name
ifeq ($(enable_tap_tests),yes)
prove_installcheck:
	$(prove_installcheck)
else
prove_installcheck:
	@echo "this PostgreSQL was built without TAP support (--enable-tap-tests)" >&2; exit 1
endif

# The full install script is generated from the chain and committed, so
# that the current API reads as one file in the tree and in a source
# package (META.json names it) and PGXS installs it as it is.  After a
# change to the chain: make full-script (FULL_SCRIPT_OUT=file writes it
# elsewhere, which the upgrade suite uses to check that it is current).
# A new version adds its update script to UPDATE_CHAIN and renames
# FULL_SCRIPT.
FULL_SCRIPT_OUT ?= $(FULL_SCRIPT)
full-script:
	{ printf '%s\n' '/* $(notdir $(FULL_SCRIPT)) */' '' \
		'-- complain if script is sourced in psql, rather than via CREATE EXTENSION' \
		'\echo Use "CREATE EXTENSION $(EXTENSION)" to load this file. \quit' '' \
		'-- The full install script, generated by "make full-script" from the' \
		'-- install script of 1.0 and the update scripts, in order: edit those,' \
		'-- never this file.  CREATE EXTENSION runs it, and it makes the catalog' \
		'-- that installing 1.0 and updating makes (test/t/003_upgrade.pl).'; \
	  for f in $(UPDATE_CHAIN); do \
		printf '\n%s\n' "-- ======== $$(basename $$f) ========"; \
		sed -e '1{/^\/\*.*\*\/$$/d}' -e '/^-- complain if script is sourced in psql/d' \
			-e '/^\\echo Use /d' $$f; \
	  done; } >$(FULL_SCRIPT_OUT)

.PHONY: unitcheck prove_installcheck full-script
