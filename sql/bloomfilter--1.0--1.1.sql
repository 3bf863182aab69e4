/* bloomfilter--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.1'" to load this file. \quit

-- Every object the extension gains or changes after 1.0.  A new
-- installation runs bloomfilter--1.0.sql and then this script, so a fresh
-- 1.1 and an updated 1.0 have the same catalog (test/upgrade_check.sh).
-- Names from C are schema-qualified with @extschema@.

-- ====================================================================
-- Values: validation, caches, settings
-- ====================================================================

-- (end of values)

-- ====================================================================
-- Sliding-window and scalable filters
-- ====================================================================

-- (end of windows)

-- ====================================================================
-- Index access method
-- ====================================================================

-- PARALLEL RESTRICTED: a backend buffers the keys it inserts into an
-- index and writes them before it reads one; a parallel worker cannot see
-- its leader's buffered keys (it would answer "probably" for every key).
ALTER FUNCTION bf_index_contains(regclass, anyelement) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_contains(regclass, text) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_filter(regclass) PARALLEL RESTRICTED;
ALTER FUNCTION bf_index_info(regclass) PARALLEL RESTRICTED;

-- (end of index)

-- ====================================================================
-- Tracked filters
-- ====================================================================

-- (end of tracked filters)
