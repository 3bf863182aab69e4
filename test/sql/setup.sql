-- Creates the extension for the suites that follow; checks the objects it owns.
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
RESET client_min_messages;
SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
-- functions are IMMUTABLE PARALLEL SAFE; these are the deliberate exceptions
SELECT p.proname, p.provolatile, p.proparallel
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
  AND (p.provolatile <> 'i' OR p.proparallel <> 's')
ORDER BY p.proname, p.oid;
-- every function that is not STRICT (each says why in the install script)
SELECT p.proname, count(*)
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomfilter')
  AND NOT p.proisstrict AND p.prokind = 'f'
GROUP BY p.proname ORDER BY p.proname;
