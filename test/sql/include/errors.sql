-- Errors as values, for the tests of bad input: test_err gives SQLSTATE,
-- message and detail (so that the error code is checked too), test_errcode
-- only the SQLSTATE, for errors whose text belongs to another type or to
-- PostgreSQL.  Included by the tests that need them; each drops them.
CREATE FUNCTION test_err(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM || coalesce(nullif(' -- ' || detail, ' -- '), '');
END $$;
CREATE FUNCTION test_errcode(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END $$;
