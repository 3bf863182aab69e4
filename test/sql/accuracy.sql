--
-- Statistical checks: 10 000 distinct members, zero false negatives, and
-- a false-positive rate on non-members of at most 1.1 x the target, for
-- several value types at fpr 0.01 and 0.001.  Hash inputs are fixed, so the
-- results are deterministic.
--
-- Sample size: over N non-members a filter whose true rate is r shows
-- r*N +- sqrt(r*N) false positives.  The check allows that sampling error
-- (three standard errors above 1.1 x the target): with N = 100 000 it
-- still fails for a filter at 2 x the target at p = 0.001 and at 1.5 x
-- the target at p = 0.01, each by more than three standard errors.
--
CREATE TABLE acc (typ text, fpr float8, f bloomfilter);

-- integers: members 1..10000
INSERT INTO acc SELECT 'int8', p, bf_add_all(bf_create(10000, p), ARRAY(SELECT g::int8 FROM generate_series(1, 10000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- text
INSERT INTO acc SELECT 'text', p, bf_add_all(bf_create(10000, p), ARRAY(SELECT 'user-' || g || '@example.com' FROM generate_series(1, 10000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- uuid (md5-derived, deterministic)
INSERT INTO acc SELECT 'uuid', p, bf_add_all(bf_create(10000, p), ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 10000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- numeric
INSERT INTO acc SELECT 'numeric', p, bf_add_all(bf_create(10000, p), ARRAY(SELECT g / 100.0 FROM generate_series(1, 10000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;

-- false negatives: must be zero
SELECT typ, fpr,
	CASE typ
		WHEN 'int8' THEN (SELECT count(*) FROM generate_series(1, 10000) g WHERE NOT bf_contains(f, g::int8))
		WHEN 'text' THEN (SELECT count(*) FROM generate_series(1, 10000) g WHERE NOT bf_contains(f, 'user-' || g || '@example.com'))
		WHEN 'uuid' THEN (SELECT count(*) FROM generate_series(1, 10000) g WHERE NOT bf_contains(f, md5(g::text)::uuid))
		WHEN 'numeric' THEN (SELECT count(*) FROM generate_series(1, 10000) g WHERE NOT bf_contains(f, g / 100.0))
	END AS false_negatives
FROM acc ORDER BY typ, fpr;

-- false positives over 100 000 non-members
CREATE TABLE fp AS
SELECT typ, fpr,
	CASE typ
		WHEN 'int8' THEN (SELECT count(*) FROM generate_series(10001, 110000) g WHERE bf_contains(f, g::int8))::float8 / 100000
		WHEN 'text' THEN (SELECT count(*) FROM generate_series(10001, 110000) g WHERE bf_contains(f, 'user-' || g || '@example.com'))::float8 / 100000
		WHEN 'uuid' THEN (SELECT count(*) FROM generate_series(10001, 110000) g WHERE bf_contains(f, md5(g::text)::uuid))::float8 / 100000
		WHEN 'numeric' THEN (SELECT count(*) FROM generate_series(10001, 110000) g WHERE bf_contains(f, g / 100.0))::float8 / 100000
	END AS measured
FROM acc;
SELECT typ, fpr, measured <= 1.1 * fpr + 3 * sqrt(1.1 * fpr / 100000) AS within_target,
	   measured > 0.3 * fpr AS not_trivially_empty
FROM fp ORDER BY typ, fpr;

-- with the filter overfilled 4x the rate must go up (the filter is not
-- lying about its size): 4x overfilled at k = 7 the rate is about 0.4,
-- so 10 000 probes tell it from 0.05 beyond any doubt
WITH o AS MATERIALIZED (
	SELECT bf_add_all(bf_create(10000, 0.01), ARRAY(SELECT generate_series(1, 40000))) AS f)
SELECT (SELECT count(*) FROM generate_series(40001, 50000) g WHERE bf_contains((SELECT f FROM o), g))::float8 / 10000 > 0.05
       AS overfilled_degrades;
