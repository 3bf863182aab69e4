-- Drift: a filter never forgets a key, so a table whose rows are deleted
-- and replaced keeps answering "maybe" for keys that are gone.  bf_tracked
-- shows the table's live rows, the rate a rebuilt filter would have for
-- them, and whether a rebuild is due.
SET client_min_messages = warning;
CREATE TABLE drift_i (k int);
INSERT INTO drift_i SELECT g FROM generate_series(1, 10000) g;
SELECT bf_track('drift_i', 'k', 10000, 0.01);
CREATE TABLE drift_t (k int);
INSERT INTO drift_t SELECT g FROM generate_series(1, 10000) g;
SELECT bf_track('drift_t', 'k', 10000, 0.01, method => 'trigger');
SELECT pg_stat_force_next_flush();
-- as tracked: the rows it was sized for, at about its rate; no rebuild due
SELECT tbl, live_rows, rebuilt_fpr BETWEEN 0.005 AND 0.01 AS rebuilt_at_target,
       estimated_fpr < 0.02 AS fpr_ok, rebuild_due
FROM bf_tracked WHERE tbl IN ('drift_i'::regclass, 'drift_t'::regclass) ORDER BY tbl::text;

-- 90 % of the rows replaced by new keys: the filter holds 19 000 keys
DELETE FROM drift_i WHERE k > 1000;
INSERT INTO drift_i SELECT g FROM generate_series(100001, 109000) g;
DELETE FROM drift_t WHERE k > 1000;
INSERT INTO drift_t SELECT g FROM generate_series(100001, 109000) g;
SELECT pg_stat_force_next_flush();
SELECT tbl, live_rows, estimated_fpr > 0.02 AS drifted, rebuilt_fpr <= 0.01 AS rebuild_helps,
       rebuild_due
FROM bf_tracked WHERE tbl IN ('drift_i'::regclass, 'drift_t'::regclass) ORDER BY tbl::text;
-- the measured rate of absent keys agrees
SELECT count(*) FILTER (WHERE bf_might_contain('drift_i', 'k', g)) > 400 AS drifted_i,
       count(*) FILTER (WHERE bf_might_contain('drift_t', 'k', g)) > 400 AS drifted_t
FROM generate_series(1000001, 1020000) g;

-- rebuilt at the same size: the rate is back near the target, no rebuild due
SELECT bf_rebuild('drift_i', 'k', 10000, 0.01);
SELECT bf_rebuild('drift_t', 'k', 10000, 0.01);
SELECT tbl, estimated_fpr < 0.02 AS fpr_ok, rebuild_due
FROM bf_tracked WHERE tbl IN ('drift_i'::regclass, 'drift_t'::regclass) ORDER BY tbl::text;
SELECT count(*) FILTER (WHERE bf_might_contain('drift_i', 'k', g)) < 220 AS back_i,
       count(*) FILTER (WHERE bf_might_contain('drift_t', 'k', g)) < 220 AS back_t
FROM generate_series(1000001, 1020000) g;
SELECT count(*) AS missing FROM drift_i WHERE NOT bf_might_contain('drift_i', 'k', k);

-- concurrently: the trigger method's rebuild keeps writers out only for
-- the swap, at the same size or another (writers log their keys for it
-- meanwhile: test/specs/track_reshape.spec); an index is rebuilt by
-- REINDEX CONCURRENTLY, which the error names
DELETE FROM drift_t WHERE k > 100000;
INSERT INTO drift_t SELECT g FROM generate_series(300001, 309000) g;
SELECT bf_rebuild('drift_t', 'k', concurrently => true);
SELECT estimated_fpr < 0.02 AS fpr_ok, rebuild_due FROM bf_tracked WHERE tbl = 'drift_t'::regclass;
SELECT count(*) AS missing FROM drift_t WHERE NOT bf_might_contain('drift_t', 'k', k);
SELECT bf_rebuild('drift_t', 'k', 20000, concurrently => true);
SELECT capacity, target_fpr FROM bf_tracked WHERE tbl = 'drift_t'::regclass;
SELECT count(*) AS missing FROM drift_t WHERE NOT bf_might_contain('drift_t', 'k', k);
SELECT count(*) AS logs_left FROM bf_registry_pending;
-- not in a transaction that changed the filter itself: writers would not
-- see the rebuild's lock on a version of its registry row they cannot see
BEGIN;
SELECT bf_rebuild('drift_t', 'k');
SELECT bf_rebuild('drift_t', 'k', concurrently => true);
ROLLBACK;
SELECT bf_rebuild('drift_i', 'k', concurrently => true);

-- a table that outgrew its capacity is saturated, not due for a rebuild:
-- a rebuild at the same size would not help
INSERT INTO drift_i SELECT g FROM generate_series(200001, 230000) g;
SELECT pg_stat_force_next_flush();
SELECT saturated, rebuilt_fpr > 0.01 AS rebuild_would_not_help, rebuild_due
FROM bf_tracked WHERE tbl = 'drift_i'::regclass;

-- the formula: bf_expected_fpr agrees with a filter's own estimate
SELECT abs(bf_expected_fpr(e.nbits, e.nhashes, 10000) - 0.01) < 0.003 AS near_target,
       bf_expected_fpr(e.nbits, e.nhashes, 0) AS empty,
       bf_expected_fpr(e.nbits, e.nhashes, 1e15) AS full
FROM bf_estimate(10000, 0.01) e;
SELECT bf_expected_fpr(1024, 7, 10) < bf_expected_fpr(1024, 7, 20) AS grows_with_keys;
SELECT bf_expected_fpr(512, 7, -1);
SELECT bf_expected_fpr(512, 7, 'NaN');

SELECT bf_untrack('drift_i', 'k');
SELECT bf_untrack('drift_t', 'k');
DROP TABLE drift_i, drift_t;
