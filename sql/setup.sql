-- Creates the extension for the suites that follow; checks the objects it owns.
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
-- every function is IMMUTABLE or (for the two I/O functions naming types) STABLE, and parallel safe,
-- except those of tracked filters (VOLATILE management and trigger functions, STABLE lookups)
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
ORDER BY p.proname, p.oid;
