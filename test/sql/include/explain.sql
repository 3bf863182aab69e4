-- EXPLAIN ANALYZE, keeping what every supported version prints alike: the
-- lines matching keep (by default the nodes with their actual row counts,
-- and the heap blocks read), with the rows per loop rounded as 15 to 17
-- print them (later versions print two decimals), and without the loops
-- unless asked for.  Included by the tests that need it; each
-- drops it.
CREATE FUNCTION test_explain(q text, keep text DEFAULT '(Scan|Heap Blocks|Removed by Index Recheck)',
							 loops boolean DEFAULT false)
RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
	l text;
	m text[];
BEGIN
	FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		IF l ~ keep THEN
			LOOP
				m := regexp_match(l, 'rows=(\d+)\.(\d+)');
				EXIT WHEN m IS NULL;
				l := regexp_replace(l, 'rows=' || m[1] || '\.' || m[2],
									'rows=' || round((m[1] || '.' || m[2])::numeric));
			END LOOP;
			RETURN NEXT CASE WHEN loops THEN l ELSE regexp_replace(l, ' loops=\d+', '', 'g') END;
		END IF;
	END LOOP;
END $$;
