-- A client's side of change sets (docs/FORMAT.md, "Change sets"), in
-- PL/pgSQL and strict as a reader must be: bfc_le reads a little-endian
-- integer, bfc_apply applies a patch to a copy, bfc_runs lists its runs.
-- Included by the tests of bf_index_changes and bf_tracked_changes.
CREATE FUNCTION bfc_le(b bytea, off int, n int) RETURNS numeric
LANGUAGE sql IMMUTABLE AS $$
	SELECT coalesce(sum(get_byte(b, off + i)::numeric * 256::numeric ^ i), 0)
	FROM generate_series(0, n - 1) i $$;
CREATE FUNCTION bfc_apply(copy bytea, patch bytea) RETURNS bytea
LANGUAGE plpgsql AS $$
DECLARE
	total bigint := bfc_le(patch, 8, 8);
	nruns int := bfc_le(patch, 16, 4);
	pos int := 24;
	prev_end bigint := 0;
	off bigint;
	len int;
BEGIN
	IF substring(patch FROM 1 FOR 4) <> '\x424c4d50'::bytea
	   OR bfc_le(patch, 4, 2) <> 1 OR get_byte(patch, 6) & ~1 <> 0
	   OR get_byte(patch, 7) <> 0 OR bfc_le(patch, 20, 4) <> 0 THEN
		RAISE EXCEPTION 'bad patch header';
	END IF;
	IF get_byte(patch, 6) & 1 = 1 THEN
		copy := decode(repeat('00', total::int), 'hex');
	ELSIF length(copy) <> total THEN
		RAISE EXCEPTION 'copy of % bytes, patch for %', length(copy), total;
	END IF;
	FOR i IN 1 .. nruns LOOP
		off := bfc_le(patch, pos, 8);
		len := bfc_le(patch, pos + 8, 4);
		IF bfc_le(patch, pos + 12, 4) <> 0 OR off < prev_end OR off + len > total
		   OR len = 0 THEN
			RAISE EXCEPTION 'bad run % (offset %, length %)', i, off, len;
		END IF;
		copy := overlay(copy PLACING substring(patch FROM pos + 17 FOR len)
						FROM off::int + 1 FOR len);
		pos := pos + 16 + len;
		prev_end := off + len;
	END LOOP;
	IF pos <> length(patch) THEN
		RAISE EXCEPTION 'trailing bytes';
	END IF;
	RETURN copy;
END $$;
-- the runs of a patch: offset and length
CREATE FUNCTION bfc_runs(patch bytea, OUT off bigint, OUT len int)
RETURNS SETOF record LANGUAGE plpgsql AS $$
DECLARE
	pos int := 24;
BEGIN
	FOR i IN 1 .. bfc_le(patch, 16, 4) LOOP
		off := bfc_le(patch, pos, 8);
		len := bfc_le(patch, pos + 8, 4);
		RETURN NEXT;
		pos := pos + 16 + len;
	END LOOP;
END $$;
