--
-- Keys inserted into a bloomfilter index are buffered by the inserting
-- backend and set page by page: at commit, when the buffer fills, and
-- before the backend reads the index.  No committed key may be missing,
-- whatever happened to the index in the meantime.
--
SET client_min_messages = warning;
CREATE TABLE bb (id int, k text);
CREATE INDEX bb_k ON bb USING bloomfilter (k) WITH (capacity = 400000);
CREATE FUNCTION bb_missing() RETURNS bigint LANGUAGE sql AS
$$ SELECT count(*) FROM bb WHERE NOT bf_index_contains('bb_k', k) $$;

-- a bulk load in one transaction (more keys than the buffer holds, so it
-- is written when full and again at commit), then every key is there
BEGIN;
INSERT INTO bb SELECT g, 'k' || g FROM generate_series(1, 300000) g;
COMMIT;
SELECT bb_missing() AS missing_after_bulk;

-- the inserting transaction sees its own keys: in lookups, in plan-time
-- probes and in scans
BEGIN;
INSERT INTO bb VALUES (-1, 'mine');
SELECT bf_index_contains('bb_k', 'mine') AS own_key;
EXPLAIN (COSTS OFF) SELECT id FROM bb WHERE k = 'mine2';
INSERT INTO bb VALUES (-2, 'mine2');
EXPLAIN (COSTS OFF) SELECT id FROM bb WHERE k = 'mine2';
SELECT id FROM bb WHERE k = 'mine2';
PREPARE bb_q AS SELECT id FROM bb WHERE k = 'mine3';
EXECUTE bb_q;
INSERT INTO bb VALUES (-3, 'mine3');
EXECUTE bb_q;
DEALLOCATE bb_q;
COMMIT;

-- subtransactions: keys of a rolled-back savepoint may stay ("probably"),
-- keys of the released ones must
BEGIN;
INSERT INTO bb VALUES (-4, 'outer');
SAVEPOINT a;
INSERT INTO bb VALUES (-5, 'rolled back');
ROLLBACK TO a;
SAVEPOINT b;
INSERT INTO bb VALUES (-6, 'released');
RELEASE b;
COMMIT;
SELECT bf_index_contains('bb_k', 'outer') AS outer_key, bf_index_contains('bb_k', 'released') AS released;
SELECT bb_missing() AS missing;

-- an error after the inserts: nothing committed, nothing to check; the
-- next transaction works normally
BEGIN;
INSERT INTO bb VALUES (-7, 'doomed');
SELECT 1 / 0;
COMMIT;
INSERT INTO bb VALUES (-8, 'after error');
SELECT bf_index_contains('bb_k', 'after error') AS after_error;

-- the index rebuilt, copied or dropped in the inserting transaction
BEGIN;
INSERT INTO bb VALUES (-9, 'before reindex');
REINDEX INDEX bb_k;
INSERT INTO bb VALUES (-10, 'after reindex');
COMMIT;
SELECT bf_index_contains('bb_k', 'before reindex') AS before_reindex,
       bf_index_contains('bb_k', 'after reindex') AS after_reindex;
SET allow_in_place_tablespaces = on;
CREATE TABLESPACE bb_space LOCATION '';
RESET allow_in_place_tablespaces;
BEGIN;
INSERT INTO bb SELECT -g, 'moved' || g FROM generate_series(11, 2000) g;
ALTER INDEX bb_k SET TABLESPACE bb_space;
COMMIT;
SELECT count(*) FILTER (WHERE NOT bf_index_contains('bb_k', 'moved' || g)) AS missing_after_set_tablespace
FROM generate_series(11, 2000) g;
ALTER INDEX bb_k SET TABLESPACE pg_default;
DROP TABLESPACE bb_space;
BEGIN;
INSERT INTO bb VALUES (-20000, 'dropped with its index');
DROP INDEX bb_k;
COMMIT;
CREATE INDEX bb_k ON bb USING bloomfilter (k) WITH (capacity = 400000);
BEGIN;
INSERT INTO bb VALUES (-20001, 'truncated');
TRUNCATE bb;
INSERT INTO bb VALUES (1, 'after truncate');
COMMIT;
SELECT bf_index_contains('bb_k', 'after truncate') AS after_truncate, count(*) FROM bb;

-- a parallel worker cannot see its leader's buffered keys: the lookup
-- functions are parallel restricted (setup checks it), and a worker made
-- to call one (through a wrapper wrongly labelled parallel safe, the
-- query forced into a worker) answers "probably"
INSERT INTO bb SELECT g, 'p' || g FROM generate_series(2, 2000) g;
CREATE FUNCTION bb_has(k text) RETURNS bool LANGUAGE plpgsql STABLE PARALLEL SAFE AS
$$ BEGIN RETURN bf_index_contains('bb_k', k); END $$;
DO $$ BEGIN
	IF current_setting('server_version_num')::int >= 160000 THEN
		SET debug_parallel_query = on;
	ELSE
		SET force_parallel_mode = on;
	END IF;
END $$;
BEGIN;
INSERT INTO bb SELECT g, 'q' || g FROM generate_series(2001, 4000) g;
SELECT count(*) AS not_found FROM bb WHERE NOT bb_has(k);
COMMIT;
RESET ALL;
SET client_min_messages = warning;

-- unlogged and temporary tables set keys at once (no WAL to save)
CREATE UNLOGGED TABLE bb_ul (k text);
CREATE INDEX bb_ul_k ON bb_ul USING bloomfilter (k);
CREATE TEMP TABLE bb_tmp (k text);
CREATE INDEX bb_tmp_k ON bb_tmp USING bloomfilter (k);
BEGIN;
INSERT INTO bb_ul SELECT 'u' || g FROM generate_series(1, 1000) g;
INSERT INTO bb_tmp SELECT 't' || g FROM generate_series(1, 1000) g;
COMMIT;
SELECT (SELECT count(*) FROM bb_ul WHERE NOT bf_index_contains('bb_ul_k', k)) AS unlogged_missing,
       (SELECT count(*) FROM bb_tmp WHERE NOT bf_index_contains('bb_tmp_k', k)) AS temp_missing;

DROP TABLE bb, bb_ul, bb_tmp;
DROP FUNCTION bb_missing(), bb_has(text);
