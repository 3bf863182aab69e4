/* bloomfilter--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION bloomfilter UPDATE TO '1.3'" to load this file. \quit

-- Every object the extension gains or changes after 1.2.  A new
-- installation runs the scripts of the chain up to this one (make
-- full-script), so a fresh 1.3 and an updated 1.2 have the same catalog
-- (test/t/003_upgrade.pl).
