--
-- Sliding-window filters (bloomwindow): the guarantee at its boundaries,
-- idle gaps, times going backwards, the aggregate against one-by-one adds,
-- union, round trips and bad input.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
\i test/sql/include/errors.sql

--
-- parameters: the window is cut into slices; each of the N + 1 slices
-- stored is sized for the whole capacity at fpr / (N + 1)
--
SELECT * FROM bf_window_info(bf_window_create('7 days', 100000));
SELECT window_length, slices, slice_width, target_fpr, newest_slice, ignored_adds
FROM bf_window_info(bf_window_create('1 hour', 1000, 0.001, 60, 42));
-- a slice's own sizing: capacity per window at the share of the rate
SELECT s.nbits_per_slice = e.nbits AS slice_sized, s.nhashes = e.nhashes AS same_k,
	   (bf_info(f)).capacity, (bf_info(f)).target_fpr
FROM bf_window_info(bf_window_create('1 day', 5000, 0.01, 4)) s,
	 bf_estimate(5000, 0.01 / 5) e,
	 (SELECT filter AS f FROM bf_window_slices(
		 bf_window_add(bf_window_create('1 day', 5000, 0.01, 4), 1, '2024-01-01')) LIMIT 1) x;
SELECT test_err($$SELECT bf_window_create('1 month', 10)$$);
SELECT test_err($$SELECT bf_window_create('1 year 2 days', 10)$$);
SELECT test_err($$SELECT bf_window_create('0', 10)$$);
SELECT test_err($$SELECT bf_window_create('-1 day', 10)$$);
SELECT test_err($$SELECT bf_window_create('1 day -24 hours', 10)$$);
SELECT test_err($$SELECT bf_window_create('100000000 days', 10)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 10, 0.01, 0)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 10, 0.01, 1025)$$);
SELECT test_err($$SELECT bf_window_create('1 second', 10, 0.01, 7)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 0)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 10, 0)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 10, 1)$$);
SELECT test_err($$SELECT bf_window_create('1 day', 10, 'NaN')$$);
SELECT test_err($$SELECT bf_window_create('1 day', 100000000, 0.01, 1024)$$);
-- 1 microsecond slices and a day in hours are fine
SELECT slice_width FROM bf_window_info(bf_window_create('3 microseconds', 10, 0.01, 3));
SELECT window_length FROM bf_window_info(bf_window_create('48 hours', 10, 0.01, 2));

--
-- the guarantee, with W = 4 days in N = 4 slices of 1 day (slices start at
-- midnight UTC, multiples of a day from 2000-01-01): a key added at t is
-- found for t <= t' < t + W, and no longer from t + W + W/N on
--
CREATE TABLE g AS
SELECT bf_window_add(bf_window_add(bf_window_create('4 days', 100, 0.01, 4),
								   'start', '2024-01-10 00:00:00'),
					 'end', '2024-01-10 23:59:59.999999') AS w;
-- added at the first microsecond of a slice: kept for W + W/N exactly
SELECT t, bf_window_contains(w, 'start', t::timestamptz) AS found
FROM g, (VALUES ('2024-01-09 23:59:59.999999'),        -- before its slice
				('2024-01-10 00:00:00'),               -- t
				('2024-01-13 23:59:59.999999'),        -- t + W - 1us
				('2024-01-14 00:00:00'),               -- t + W
				('2024-01-14 23:59:59.999999'),        -- t + W + W/N - 1us
				('2024-01-15 00:00:00'),               -- t + W + W/N
				('2024-02-01 00:00:00')) v(t);
-- added at the last microsecond of a slice: kept for W and 1us
SELECT t, bf_window_contains(w, 'end', t::timestamptz) AS found
FROM g, (VALUES ('2024-01-10 00:00:00'),               -- same slice, before t
				('2024-01-10 23:59:59.999999'),        -- t
				('2024-01-14 23:59:59.999998'),        -- t + W - 1us
				('2024-01-14 23:59:59.999999'),        -- t + W
				('2024-01-15 00:00:00'),               -- t + W + 1us: gone
				('2024-01-15 23:59:59.999999')) v(t);  -- t + W + W/N - 1us
-- the slices stored and when each stops being consulted
SELECT slice_start, slice_end, expires, inserted, bits_set > 0 AS has_bits
FROM g, bf_window_slices(w);
SELECT newest_slice, ignored_adds, element_type FROM g, bf_window_info(w);
-- an absent key and a key of another family
SELECT bf_window_contains(w, 'other', '2024-01-11') AS absent FROM g;
SELECT test_err($$SELECT bf_window_contains(w, 42, '2024-01-11') FROM g$$);
SELECT test_err($$SELECT bf_window_add(w, 42, '2024-01-11') FROM g$$);
-- infinite and NULL times
SELECT test_err($$SELECT bf_window_contains(w, 'start', 'infinity') FROM g$$);
SELECT test_err($$SELECT bf_window_add(w, 'start', '-infinity') FROM g$$);
SELECT test_err($$SELECT bf_window_add(w, 'start', NULL) FROM g$$);
SELECT bf_window_contains(w, 'start', NULL) IS NULL AS null_time_is_null FROM g;
-- NULL values and NULL windows
SELECT bf_window_add(w, NULL::text, '2024-01-11') = w AS null_value_unchanged,
	   bf_window_add(NULL::bloomwindow, 'x', '2024-01-11') IS NULL AS null_window,
	   bf_window_add_all(w, NULL::text[], '2024-01-11') = w AS null_array_unchanged,
	   bf_window_add_all(w, ARRAY[NULL, NULL]::text[], '2099-01-01') = w AS null_elements_unchanged
FROM g;
-- the default time is the caller's now(): a key added now is found now
SELECT bf_window_contains(bf_window_add(bf_window_create('1 hour', 10), 'now'), 'now') AS found_now,
	   bf_window_contains(bf_window_add(bf_window_create('1 hour', 10), 'now'), 'now',
						  now() + interval '2 hours') AS gone_later;
-- an empty window answers false at any time
SELECT bf_window_contains(bf_window_create('1 day', 10), 'x', '2024-01-01') AS empty;

--
-- idle gaps: a window untouched for 10 windows answers false for every old
-- key the moment it is read, whatever happened before
--
CREATE TABLE idle AS
SELECT bf_window_add_all(bf_window_create('4 days', 1000, 0.01, 4),
						 ARRAY(SELECT g FROM generate_series(1, 500) g),
						 '2024-01-10 12:00') AS w;
SELECT count(*) FILTER (WHERE bf_window_contains(w, g, '2024-01-12')) AS found_inside,
	   count(*) FILTER (WHERE bf_window_contains(w, g, timestamptz '2024-01-10 12:00' + 10 * interval '4 days')) AS found_after_gap
FROM idle, generate_series(1, 500) g;
-- the next add, 10 windows later, drops every old slice
UPDATE idle SET w = bf_window_add(w, 100000, timestamptz '2024-01-10 12:00' + 10 * interval '4 days');
SELECT count(*) FILTER (WHERE bf_window_contains(w, g, '2024-01-12')) AS found_in_the_past
FROM idle, generate_series(1, 500) g;
SELECT bf_window_contains(w, 100000, timestamptz '2024-01-10 12:00' + 10 * interval '4 days') AS new_key
FROM idle;
SELECT sum(inserted) AS inserted, sum(bits_set) > 0 AS bits, count(*) AS slices
FROM idle, bf_window_slices(w);

--
-- windows stored out of line (TOAST) are read once per query, and each
-- stored value answers for itself
--
CREATE TABLE stored_w (id int, w bloomwindow);
ALTER TABLE stored_w ALTER COLUMN w SET STORAGE external;
INSERT INTO stored_w
SELECT i, bf_window_add_all(bf_window_create('4 days', 20000, 0.01, 4),
							ARRAY(SELECT g FROM generate_series(i * 10000 + 1, i * 10000 + 10000) g),
							'2024-01-10 12:00')
FROM generate_series(0, 1) i;
SELECT id, bool_and(pg_column_size(w) > 2000) AS toasted,
	   count(*) FILTER (WHERE (g - 1) / 10000 = id AND bf_window_contains(w, g, '2024-01-11')) AS own_found,
	   count(*) FILTER (WHERE (g - 1) / 10000 <> id AND bf_window_contains(w, g, '2024-01-11')) AS others_found,
	   count(*) FILTER (WHERE bf_window_contains(w, g, '2024-01-16')) AS found_at_16th
FROM stored_w, generate_series(1, 20000) g GROUP BY id ORDER BY id;
SELECT count(*) AS found_through_subquery
FROM generate_series(1, 20000) g
WHERE bf_window_contains((SELECT w FROM stored_w WHERE id = 1), g, '2024-01-11');

--
-- times going backwards: an add older than the newest slice goes to its own
-- slice while that slice is stored, and is ignored (and counted) once it
-- is older than the oldest slice stored
--
CREATE TABLE back AS
SELECT bf_window_add(bf_window_create('4 days', 100, 0.01, 4), 'late', '2024-01-20 12:00') AS w;
UPDATE back SET w = bf_window_add(w, 'older', '2024-01-17 08:00');   -- 3 slices back: stored
UPDATE back SET w = bf_window_add(w, 'oldest', '2024-01-16 08:00');  -- 4 slices back: stored
UPDATE back SET w = bf_window_add(w, 'too old', '2024-01-15 23:00'); -- 5 slices back: ignored
UPDATE back SET w = bf_window_add_all(w, ARRAY['a', NULL, 'b'], '2023-01-01'); -- ignored twice
SELECT k, bf_window_contains(w, k, '2024-01-17 09:00') AS at_17th,
	   bf_window_contains(w, k, '2024-01-20 23:00') AS at_20th,
	   bf_window_contains(w, k, '2024-01-21 00:00') AS at_21st,
	   bf_window_contains(w, k, '2024-01-22 00:00') AS at_22nd
FROM back, unnest(ARRAY['late', 'older', 'oldest', 'too old', 'a', 'b']) k;
SELECT ignored_adds, newest_slice FROM back, bf_window_info(w);
SELECT slice_start, inserted FROM back, bf_window_slices(w);

--
-- the aggregate equals one-by-one adds in time order, whatever the order of
-- the rows; one-by-one adds in another order store the same slices too,
-- only the counters differ
--
CREATE TABLE events AS
SELECT (g * 7919) % 1000 AS k,
	   timestamptz '2024-03-01' + ((g * 104729) % 20000) * interval '1 minute' AS at
FROM generate_series(1, 3000) g;
CREATE FUNCTION fold_events(ord text) RETURNS bloomwindow LANGUAGE plpgsql AS $$
DECLARE
	w bloomwindow := bf_window_create('3 days', 2000, 0.01, 3);
	r record;
BEGIN
	FOR r IN EXECUTE 'SELECT k, at FROM events ORDER BY ' || ord LOOP
		w := bf_window_add(w, r.k, r.at);
	END LOOP;
	RETURN w;
END $$;
CREATE TABLE folds AS
SELECT o, fold_events(o) AS w
FROM unnest(ARRAY['at, k', 'at DESC, k', 'k, at', 'md5(k::text || at::text)']) o;
SELECT o, w = (SELECT bf_window_agg(k, at, '3 days', 2000, 0.01, 3) FROM events) AS agg_equal,
	   (bf_window_info(w)).ignored_adds > 0 AS some_ignored
FROM folds;
-- the aggregate's bytes, counters included, do not depend on the order of the rows
SELECT md5(bf_window_agg(k, at, '3 days', 2000, 0.01, 3 ORDER BY at)::bytea) =
		   md5(bf_window_agg(k, at, '3 days', 2000, 0.01, 3 ORDER BY at DESC)::bytea) AS asc_desc,
	   md5(bf_window_agg(k, at, '3 days', 2000, 0.01, 3 ORDER BY at)::bytea) =
		   md5(bf_window_agg(k, at, '3 days', 2000, 0.01, 3 ORDER BY md5(k::text))::bytea) AS asc_hashed,
	   (bf_window_info(bf_window_agg(k, at, '3 days', 2000, 0.01, 3 ORDER BY at DESC))).ignored_adds
FROM events;
-- every key of the last 3 days is found at the end, none older than 3 days + 1 slice
SELECT bool_and(bf_window_contains(w, k, (SELECT max(at) FROM events)))
		   FILTER (WHERE at > (SELECT max(at) FROM events) - interval '3 days') AS recent_found,
	   count(*) FILTER (WHERE at < (SELECT max(at) FROM events) - interval '4 days'
						AND bf_window_contains(w, k, (SELECT max(at) FROM events))
						AND k NOT IN (SELECT k FROM events e2
									  WHERE e2.at >= (SELECT max(at) FROM events) - interval '4 days')) AS stale_found
FROM folds, events WHERE o = 'at, k';
-- the shorter forms use fpr 0.01 and 4 slices
SELECT bf_window_agg(k, at, '4 days', 2000) = bf_window_agg(k, at, '4 days', 2000, 0.01, 4) AS short_form,
	   bf_window_agg(k, at, '4 days', 2000, 0.01) = bf_window_agg(k, at, '4 days', 2000, 0.01, 4) AS mid_form,
	   bf_window_agg(k, at, '96 hours', 2000) = bf_window_agg(k, at, '4 days', 2000) AS hours_or_days
FROM events;
-- zero rows give NULL; NULL values are skipped; a NULL time is an error
SELECT bf_window_agg(k, at, '1 day', 10) IS NULL AS no_rows FROM events WHERE false;
SELECT bf_window_agg(NULL::int, at, '1 day', 10) = bf_window_create('1 day', 10) AS all_null_values
FROM events;
SELECT test_err($$SELECT bf_window_agg(k, NULL, '1 day', 10) FROM events$$);
SELECT test_err($$SELECT bf_window_agg(k, at, NULL, 10) FROM events$$);
SELECT test_err($$SELECT bf_window_agg(k, at, CASE WHEN k = 500 THEN interval '2 days' ELSE '1 day' END, 10) FROM events$$);
SELECT test_err($$SELECT bf_window_agg(k, at, '1 month', 10) FROM events$$);

-- and in parallel: the same bytes
CREATE TABLE events_big AS
SELECT (g * 7919) % 20000 AS k,
	   timestamptz '2024-03-01' + ((g::bigint * 104729) % 200000) * interval '1 second' AS at
FROM generate_series(1, 60000) g;
ANALYZE events_big;
SELECT md5(bf_window_agg(k, at, '1 day', 20000, 0.01, 8)::bytea) AS serial_md5 FROM events_big \gset
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT bf_window_agg(k, at, '1 day', 20000, 0.01, 8) FROM events_big;
SELECT md5(bf_window_agg(k, at, '1 day', 20000, 0.01, 8)::bytea) = :'serial_md5' AS parallel_same_bytes
FROM events_big;
-- groups in parallel, each as one-by-one adds would give
SELECT count(*) AS groups,
	   bool_and(w = bf_window_agg_check) AS all_equal
FROM (SELECT k % 4 AS grp, bf_window_agg(k, at, '1 day', 20000, 0.01, 8) AS w
	  FROM events_big GROUP BY k % 4) p
JOIN LATERAL (SELECT bf_window_agg(k, at, '1 day', 20000, 0.01, 8) AS bf_window_agg_check
			  FROM (SELECT k, at FROM events_big WHERE k % 4 = p.grp ORDER BY at) s) c ON true;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

--
-- union: the keys of both, as if added to one window in time order
--
CREATE TABLE halves AS
SELECT bf_window_agg(k, at, '3 days', 2000, 0.01, 3) FILTER (WHERE k % 2 = 0) AS a,
	   bf_window_agg(k, at, '3 days', 2000, 0.01, 3) FILTER (WHERE k % 2 = 1) AS b,
	   bf_window_agg(k, at, '3 days', 2000, 0.01, 3) AS whole
FROM events;
SELECT bf_window_union(a, b) = whole AS union_is_whole, (a | b) = (b | a) AS commutes,
	   (a | b)::bytea = (b | a)::bytea AS same_bytes,
	   (a | bf_window_create('3 days', 2000, 0.01, 3)) = a AS empty_right,
	   (bf_window_create('3 days', 2000, 0.01, 3) | a) = a AS empty_left
FROM halves;
-- a union with an older window drops what the newer one no longer holds
SELECT (w_new | w_old) = w_new AS old_dropped, (bf_window_info(w_new | w_old)).newest_slice
FROM (SELECT bf_window_add(bf_window_create('2 days', 10, 0.01, 2), 1, '2024-05-10') AS w_new,
			 bf_window_add(bf_window_create('2 days', 10, 0.01, 2), 2, '2024-05-01') AS w_old) x;
SELECT (bf_window_info(a | b)).ignored_adds
FROM (SELECT bf_window_add(bf_window_add(bf_window_create('2 days', 10, 0.01, 2), 1, '2024-05-10'), 5, '2024-01-01') AS a,
			 bf_window_add(bf_window_add(bf_window_create('2 days', 10, 0.01, 2), 2, '2024-05-10'), 6, '2024-01-01') AS b) x;
SELECT test_err($$SELECT bf_window_create('3 days', 10, 0.01, 3) | bf_window_create('3 days', 10, 0.01, 1)$$);
SELECT test_err($$SELECT bf_window_create('3 days', 10, 0.01, 3) | bf_window_create('6 days', 10, 0.01, 3)$$);
SELECT test_err($$SELECT bf_window_create('3 days', 10, 0.01, 3) | bf_window_create('3 days', 20, 0.01, 3)$$);
SELECT test_err($$SELECT bf_window_create('3 days', 10, 0.01, 3) | bf_window_create('3 days', 10, 0.02, 3)$$);
SELECT test_err($$SELECT bf_window_create('3 days', 10, 0.01, 3, 1) | bf_window_create('3 days', 10, 0.01, 3, 2)$$);
SELECT test_err($$SELECT bf_window_add(bf_window_create('3 days', 10), 1, '2024-01-01') | bf_window_add(bf_window_create('3 days', 10), 'x', '2024-01-01')$$);

--
-- records, as in "user x attribute": ROW(user_id, attr)
--
SELECT bf_window_contains(w, ROW(7, 'sports'::text), '2024-06-02') AS seen,
	   bf_window_contains(w, ROW(7, 'music'::text), '2024-06-02') AS not_seen,
	   (bf_window_info(w)).element_type
FROM (SELECT bf_window_add(bf_window_create('7 days', 1000), ROW(7, 'sports'::text), '2024-06-01') AS w) x;

--
-- round trips: text, binary COPY, bytea
--
CREATE TABLE io_w (id int, w bloomwindow);
INSERT INTO io_w
SELECT 1, bf_window_create('1 day', 10)
UNION ALL SELECT 2, w FROM g
UNION ALL SELECT 3, w FROM back
UNION ALL SELECT 4, bf_window_add(bf_window_create('1 day', 10, 0.001, 2, -5), '10.1.2.3'::inet, '2024-01-01')
UNION ALL SELECT 5, bf_window_add(bf_window_create('1 day', 10), ROW(1, 'x'::text), '1999-12-31 23:00')
UNION ALL SELECT 6, bf_window_add(bf_window_create('10 days', 10, 0.01, 10), 1, '4714-11-24 00:00:00+00 BC')
UNION ALL SELECT 8, bf_window_add(bf_window_create('10 days', 10, 0.01, 2), 1, '294276-12-31 23:59:59.999999+00')
UNION ALL SELECT 7, bf_window_agg(k, at, '1 day', 20000, 0.01, 8) FROM events_big;
SELECT id, w::text::bloomwindow::bytea = w::bytea AS text_roundtrip,
	   w::bytea::bloomwindow::bytea = w::bytea AS bytea_roundtrip,
	   bloomwindow_send(w) = w::bytea AS send_is_bytes
FROM io_w ORDER BY id;
COPY io_w TO '/tmp/bloomfilter_regress_window.bin' WITH (FORMAT binary);
CREATE TABLE io_w2 (LIKE io_w);
COPY io_w2 FROM '/tmp/bloomfilter_regress_window.bin' WITH (FORMAT binary);
SELECT a.id, a.w::bytea = b.w::bytea AS binary_roundtrip FROM io_w a JOIN io_w2 b USING (id) ORDER BY id;
-- the text form of a small window, read by eye
SELECT w FROM io_w WHERE id = 5;
SELECT bf_window_contains(w, '10.1.2.3'::inet, '2024-01-01') AS inet_found,
	   (bf_window_info(w)).portable, (bf_window_info(w)).element_type
FROM io_w WHERE id = 4;
SELECT id, slice_start, slice_end, expires FROM io_w, bf_window_slices(w) WHERE id IN (6, 8) ORDER BY id, slice_end;

--
-- bad input: text and bytes
--
SELECT test_err($$SELECT 'garbage'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=0'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=0'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=+5'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=5 capacity=0'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=5 capacity=1 fpr=1'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=5 capacity=1 fpr=0.01 newest=x'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=5 capacity=1 fpr=0.01 newest=none ignored=-1'::bloomwindow$$);
SELECT test_err($$SELECT 'bloomwindow:1 slices=2 slice_us=5 capacity=1 fpr=0.01 newest=none ignored=0'::bloomwindow$$);
-- a slot that is not a bloomfilter: the bloomfilter type's own error
SELECT test_errcode($$SELECT 'bloomwindow:1 slices=1 slice_us=5 capacity=1 fpr=0.01 newest=none ignored=0 slot=bloomfilter:1 layout=blocked hash=md5 bits=AA slot=x'::bloomwindow$$);
-- edits of a valid text form
CREATE TABLE good_w AS SELECT w::text AS t, w::bytea AS b FROM io_w WHERE id = 5;
SELECT test_err(format('SELECT %L::bloomwindow', t || ' slot=x')) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', t || ' x')) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', replace(t, 'slices=4', 'slices=3'))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', replace(t, 'fpr=0.01 ', 'fpr=0.02 '))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', replace(t, 'capacity=10 fpr=0.01 newest', 'capacity=11 fpr=0.01 newest'))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', regexp_replace(t, 'newest=-?[0-9]+', 'newest=none'))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', regexp_replace(t, 'newest=-?[0-9]+', 'newest=9223372036854775807'))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', regexp_replace(t, 'ignored=0', 'ignored=9223372036854775808'))) FROM good_w;
SELECT test_err(format('SELECT %L::bloomwindow', regexp_replace(t, 'seed=0', 'seed=1'))) FROM good_w;
SELECT test_errcode(format('SELECT %L::bloomwindow', regexp_replace(t, 'nbits=512', 'nbits=1024'))) FROM good_w;
-- bytes: header fields (offsets 0-63), then slot headers
SELECT test_err($$SELECT ''::bytea::bloomwindow$$);
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x58' FROM 1))) FROM good_w;                  -- magic
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0200' FROM 5))) FROM good_w;                -- version
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000' FROM 7))) FROM good_w;                -- 0 slices
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0104' FROM 7))) FROM good_w;                -- 1025 slices
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000000000000000' FROM 9))) FROM good_w;    -- slice width 0
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000000000000040' FROM 9))) FROM good_w;    -- window > 2^61
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\xffffffffffffff7f' FROM 17))) FROM good_w;   -- newest beyond timestamptz
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000000000000080' FROM 17))) FROM good_w;   -- "nothing added" with a family
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000000000000080' FROM 25))) FROM good_w;   -- ignored >= 2^63
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0000000000000000' FROM 33))) FROM good_w;   -- capacity 0
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x000000000000f87f' FROM 41))) FROM good_w;   -- fpr NaN
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x01' FROM 49))) FROM good_w;                 -- reserved
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x01' FROM 64))) FROM good_w;                 -- reserved
SELECT test_errcode(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x58' FROM 65))) FROM good_w;           -- slot 0 magic
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x02' FROM 65 + 24))) FROM good_w;       -- slot 0 nblocks vs length
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x07' FROM 65 + 128 + 10))) FROM good_w;      -- slot 1 nhashes
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x07' FROM 65 + 128 + 16))) FROM good_w;      -- slot 1 seed
SELECT test_errcode(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x00' FROM 65 + 128 + 8))) FROM good_w;    -- slot 1 family
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x0b00000000000000' FROM 65 + 40))) FROM good_w; -- slot 0 capacity
SELECT test_err(format('SELECT %L::bytea::bloomwindow', overlay(b PLACING '\x7b14ae47e17a843f' FROM 65 + 48))) FROM good_w; -- slot 0 fpr 0.01
SELECT test_err(format('SELECT %L::bytea::bloomwindow', substring(b FROM 1 FOR length(b) - 1))) FROM good_w;             -- short
SELECT test_err(format('SELECT %L::bytea::bloomwindow', b || '\x00'::bytea)) FROM good_w;                                -- long
-- the "inserted" counters are free, as in a bloomfilter
SELECT overlay(b PLACING '\x0500000000000000' FROM 65 + 128 + 32)::bloomwindow = b::bloomwindow AS inserted_free
FROM good_w;
-- a non-portable window naming a type OID that does not exist
SELECT test_err(format('SELECT %L::bytea::bloomwindow',
	overlay(overlay(overlay(w::bytea PLACING '\x00286bee' FROM 65 + 12)
		PLACING '\x00286bee' FROM 65 + 64 + 64 + 12)
		PLACING '\x00286bee' FROM 65 + 2 * (64 + 64) + 12)))
FROM io_w WHERE id = 4;
-- or a type no non-portable window can hold (int4 has a portable family):
-- the rule of a plain filter, whose text form the slots print
SELECT test_err(format('SELECT %L::bytea::bloomwindow',
	overlay(overlay(overlay(w::bytea PLACING '\x17000000' FROM 65 + 12)
		PLACING '\x17000000' FROM 65 + 64 + 64 + 12)
		PLACING '\x17000000' FROM 65 + 2 * (64 + 64) + 12)))
FROM io_w WHERE id = 4;

-- leave nothing behind for the suites after this one
DROP TABLE g, idle, stored_w, back, events, folds, events_big, halves, io_w, io_w2, good_w;
DROP FUNCTION test_err(text), test_errcode(text);
