# bloomfilter: PGXS build
MODULE_big = bloomfilter
OBJS = \
	src/bloom_core.o \
	src/bf_hash.o \
	src/bf_io.o \
	src/bf_funcs.o \
	src/bf_ops.o \
	src/bf_agg.o \
	src/bf_am.o \
	src/bf_index.o \
	src/bf_track.o \
	src/bf_trigger.o

EXTENSION = bloomfilter
DATA = sql/bloomfilter--1.0.sql
PGFILEDESC = "bloomfilter - Bloom filter type for PostgreSQL"

REGRESS = setup hashing core io errors accuracy setops aggregates index track track_index
ISOLATION = index_concurrency track_concurrency
ISOLATION_OPTS = --load-extension=bloomfilter

PG_CPPFLAGS = -I$(srcdir)/src
# -Wno-unused-parameter: the server headers (bufpage.h) and fmgr signatures trip it
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter
SHLIB_LINK = -lm

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# unit tests of the PostgreSQL-free core
test/unit/test_core: test/unit/test_core.c src/bloom_core.c src/bloom_core.h
	$(CC) -std=c99 -O2 -Wall -Wextra -Werror -Isrc -o $@ test/unit/test_core.c src/bloom_core.c -lm

unitcheck: test/unit/test_core
	test/unit/test_core

.PHONY: unitcheck
