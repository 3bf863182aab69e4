--
-- Statistical checks: 100 000 distinct members, zero false negatives, and
-- a false-positive rate on non-members of at most 1.1 x the target, for
-- several value types at fpr 0.01 and 0.001.  Hash inputs are fixed, so the
-- results are deterministic.
--
CREATE TABLE acc (typ text, fpr float8, f bloomfilter);

-- integers: members 1..100000, non-members 100001..1100000 (1 M probes)
INSERT INTO acc SELECT 'int8', p, bf_add_all(bf_create(100000, p), ARRAY(SELECT g::int8 FROM generate_series(1, 100000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- text
INSERT INTO acc SELECT 'text', p, bf_add_all(bf_create(100000, p), ARRAY(SELECT 'user-' || g || '@example.com' FROM generate_series(1, 100000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- uuid (md5-derived, deterministic)
INSERT INTO acc SELECT 'uuid', p, bf_add_all(bf_create(100000, p), ARRAY(SELECT md5(g::text)::uuid FROM generate_series(1, 100000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;
-- numeric
INSERT INTO acc SELECT 'numeric', p, bf_add_all(bf_create(100000, p), ARRAY(SELECT g / 100.0 FROM generate_series(1, 100000) g))
FROM unnest(ARRAY[0.01, 0.001]) p;

-- false negatives: must be zero
SELECT typ, fpr,
	CASE typ
		WHEN 'int8' THEN (SELECT count(*) FROM generate_series(1, 100000) g WHERE NOT bf_contains(f, g::int8))
		WHEN 'text' THEN (SELECT count(*) FROM generate_series(1, 100000) g WHERE NOT bf_contains(f, 'user-' || g || '@example.com'))
		WHEN 'uuid' THEN (SELECT count(*) FROM generate_series(1, 100000) g WHERE NOT bf_contains(f, md5(g::text)::uuid))
		WHEN 'numeric' THEN (SELECT count(*) FROM generate_series(1, 100000) g WHERE NOT bf_contains(f, g / 100.0))
	END AS false_negatives
FROM acc ORDER BY typ, fpr;

-- false positives over 1 M non-members (100 k for the slower types)
CREATE TABLE fp AS
SELECT typ, fpr,
	CASE typ
		WHEN 'int8' THEN (SELECT count(*) FROM generate_series(100001, 1100000) g WHERE bf_contains(f, g::int8))::float8 / 1000000
		WHEN 'text' THEN (SELECT count(*) FROM generate_series(100001, 1100000) g WHERE bf_contains(f, 'user-' || g || '@example.com'))::float8 / 1000000
		WHEN 'uuid' THEN (SELECT count(*) FROM generate_series(100001, 1100000) g WHERE bf_contains(f, md5(g::text)::uuid))::float8 / 1000000
		WHEN 'numeric' THEN (SELECT count(*) FROM generate_series(100001, 200000) g WHERE bf_contains(f, g / 100.0))::float8 / 100000
	END AS measured
FROM acc;
SELECT typ, fpr, measured <= 1.1 * fpr AS within_target, measured > 0.3 * fpr AS not_trivially_empty
FROM fp ORDER BY typ, fpr;

-- with the filter overfilled 4x the rate must go up (the filter is not lying about its size)
WITH o AS MATERIALIZED (
	SELECT bf_add_all(bf_create(100000, 0.01), ARRAY(SELECT generate_series(1, 400000))) AS f)
SELECT (SELECT count(*) FROM generate_series(400001, 500000) g WHERE bf_contains((SELECT f FROM o), g))::float8 / 100000 > 0.05
       AS overfilled_degrades;
