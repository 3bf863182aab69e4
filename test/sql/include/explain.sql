-- EXPLAIN ANALYZE, keeping what every supported version prints alike: the
-- lines matching keep (by default the nodes with their actual row counts,
-- and the heap blocks read), without the fractions of rows and the loops
-- that later versions print.  Included by the tests that need it; each
-- drops it.
CREATE FUNCTION test_explain(q text, keep text DEFAULT '(Scan|Heap Blocks|Removed by Index Recheck)')
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	l text;
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF l ~ keep THEN
			RETURN NEXT regexp_replace(regexp_replace(l, '(rows=\d+)\.\d+', '\1', 'g'),
									   ' loops=\d+', '', 'g');
		END IF;
	END LOOP;
END $$;
