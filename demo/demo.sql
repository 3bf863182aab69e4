-- bloomfilter demo: turn away lookups of keys that do not exist before they
-- reach a large table.
\set ON_ERROR_STOP on
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS users, user_filter, lookups;
RESET client_min_messages;

\echo '== a table of 1 000 000 registered e-mail addresses (no index on email)'
CREATE TABLE users (id bigint PRIMARY KEY, email text NOT NULL);
INSERT INTO users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 1000000) g;
ANALYZE users;

\echo '== one filter for the column, sized for 1 M addresses at 1 % false positives'
SELECT * FROM bf_estimate(1000000, 0.01);
CREATE TABLE user_filter AS
	SELECT bf_add_all(bf_create(1000000, 0.01), array_agg(email)) AS f FROM users;
SELECT pg_size_pretty(pg_column_size(f)::bigint) AS filter_size,
	   pg_size_pretty(pg_relation_size('users')) AS table_size FROM user_filter;

\echo '== 20 000 sign-in attempts: 2 000 real users, 18 000 addresses never registered'
CREATE TABLE lookups AS
	SELECT 'user' || (g * 487 % 1000000 + 1) || '@example.com' AS email FROM generate_series(1, 2000) g
	UNION ALL
	SELECT 'nobody' || g || '@example.org' FROM generate_series(1, 18000) g;

\echo '== what the filter says: false = definitely not registered, no table access needed'
SELECT count(*) AS lookups,
	   count(*) FILTER (WHERE NOT bf_contains((SELECT f FROM user_filter), email)) AS turned_away_by_filter,
	   count(*) FILTER (WHERE bf_contains((SELECT f FROM user_filter), email)) AS must_check_table
FROM lookups;

\echo '== no false negatives: every registered address passes the filter'
SELECT count(*) AS registered_in_sample,
	   count(*) FILTER (WHERE bf_contains((SELECT f FROM user_filter), l.email)) AS passed_filter
FROM lookups l WHERE EXISTS (SELECT 1 FROM users u WHERE u.email = l.email);

\echo '== the false positives that slipped through (about 1 % of the 18 000 unknown addresses)'
SELECT count(*) AS false_positives,
	   round(100.0 * count(*) / 18000, 2) AS percent
FROM lookups l
WHERE bf_contains((SELECT f FROM user_filter), l.email)
  AND l.email LIKE 'nobody%';

\echo '== time: 20 000 point lookups through a btree index, as an application makes them,'
\echo '   against the same lookups asked of the filter first'
CREATE INDEX ON users (email);
SET enable_hashjoin = off;
SET enable_mergejoin = off;
\timing on
SELECT count(*) AS found FROM lookups l WHERE EXISTS (SELECT 1 FROM users u WHERE u.email = l.email);
SELECT count(*) AS found FROM lookups l
WHERE bf_contains((SELECT f FROM user_filter), l.email)
  AND EXISTS (SELECT 1 FROM users u WHERE u.email = l.email);
\timing off
RESET enable_hashjoin;
RESET enable_mergejoin;

\echo '== or let the server keep the filter current: bf_track (a bloomfilter index on the column)'
SELECT bf_track('users', 'email');
INSERT INTO users VALUES (1000001, 'newcomer@example.com');
SELECT bf_might_contain('users', 'email', 'newcomer@example.com') AS newcomer,
	   bf_might_contain('users', 'email', 'nobody1@example.org') AS stranger;
SELECT tbl, col, method, capacity, round(estimated_cardinality) AS estimated_cardinality,
	   round(fill_ratio::numeric, 3) AS fill_ratio, saturated FROM bf_tracked;

\echo '== the filter travels: its portable bytes (docs/FORMAT.md) start with'
SELECT encode(substring(f::bytea FROM 1 FOR 16), 'hex') AS header_start,
	   regexp_replace(f::text, ' bits=.*', ' bits=...') AS text_form FROM user_filter;
