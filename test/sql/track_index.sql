--
-- bf_track with method 'index' (the default): the filter is a bloomfilter
-- index that the server keeps current; bf_might_contain, bf_tracked_filter,
-- bf_rebuild, bf_untrack and the bf_tracked view work on it.
--
CREATE TABLE ti_users (id bigint PRIMARY KEY, email text);
INSERT INTO ti_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 5000) g;
SELECT bf_track('ti_users', 'email');                        -- method 'index' by default
SELECT method, capacity, target_fpr, deleted_since_rebuild FROM bf_tracked WHERE tbl = 'ti_users'::regclass;
-- the index it made
SELECT c.relname, a.amname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'ti_users'::regclass AND a.amname = 'bloomfilter';
SELECT bf_track_index('ti_users', 'email')::text;

-- answers: members, non-members, and rows added afterwards by INSERT, COPY and UPDATE
SELECT bf_might_contain('ti_users', 'email', 'user42@example.com') AS member,
       bf_might_contain('ti_users', 'email', 'nobody@example.org') AS stranger;
SELECT count(*) AS all_members_found FROM generate_series(1, 5000) g
 WHERE bf_might_contain('ti_users', 'email', 'user' || g || '@example.com');
INSERT INTO ti_users VALUES (5001, 'new@example.com');
COPY ti_users FROM stdin;
5002	copied@example.com
\.
UPDATE ti_users SET email = 'renamed@example.com' WHERE id = 1;
SELECT bf_might_contain('ti_users', 'email', 'new@example.com') AS inserted,
       bf_might_contain('ti_users', 'email', 'copied@example.com') AS copied,
       bf_might_contain('ti_users', 'email', 'renamed@example.com') AS updated;
-- rolled back work may leave bits set (a false positive), never remove any
BEGIN;
INSERT INTO ti_users VALUES (6000, 'rolled-back@example.com');
ROLLBACK;
SELECT bf_might_contain('ti_users', 'email', 'user4999@example.com') AS still_there;

-- the filter as a value agrees with the index on every key
SELECT count(*) FILTER (WHERE bf_contains((SELECT bf_tracked_filter('ti_users', 'email')), k)
                         <> bf_might_contain('ti_users', 'email', k)) AS disagreements,
       count(*) FILTER (WHERE bf_might_contain('ti_users', 'email', k)) >= 5000 AS members_positive
FROM (SELECT 'user' || g || '@example.com' FROM generate_series(1, 5000) g
      UNION ALL SELECT 'k' || g FROM generate_series(1, 5000) g) AS keys(k);

-- the view reads its figures from the index
SELECT estimated_cardinality BETWEEN 4500 AND 5500 AS cardinality_ok, fill_ratio > 0 AS filled,
       estimated_fpr < target_fpr AS below_target, NOT saturated AS not_saturated, bytes > 0 AS has_bytes
FROM bf_tracked WHERE tbl = 'ti_users'::regclass;

-- renames are followed: the index goes with the column
ALTER TABLE ti_users RENAME COLUMN email TO mail;
SELECT col, method FROM bf_tracked WHERE tbl = 'ti_users'::regclass;
SELECT bf_might_contain('ti_users', 'mail', 'user7@example.com') AS after_rename;
-- ALTER COLUMN TYPE rebuilds the index (with a new OID), still found
ALTER TABLE ti_users ALTER COLUMN mail TYPE varchar(200);
SELECT bf_might_contain('ti_users', 'mail', 'user8@example.com') AS after_type_change;

-- bf_rebuild: REINDEX, optionally with a new size
SELECT bf_rebuild('ti_users', 'mail', 200000, 0.001);
SELECT capacity, target_fpr FROM bf_tracked WHERE tbl = 'ti_users'::regclass;
SELECT i.capacity AS index_capacity, i.fpr AS index_fpr FROM bf_index_info(bf_track_index('ti_users', 'mail')) i;
SELECT bf_might_contain('ti_users', 'mail', 'user9@example.com') AS after_rebuild;
SELECT bf_rebuild('ti_users', 'mail', 3000000000);
-- a missing index is reported, not answered
DROP INDEX ti_users_email_bf;
SELECT bf_might_contain('ti_users', 'mail', 'user9@example.com');
-- bf_untrack drops the registry row (and the index when there is one)
SELECT bf_untrack('ti_users', 'mail');
SELECT count(*) FROM bf_tracked WHERE tbl = 'ti_users'::regclass;
SELECT bf_track('ti_users', 'id', 1000, 0.01, 'index');
SELECT bf_untrack('ti_users', 'id');
SELECT count(*) AS bloomfilter_indexes_left FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'ti_users'::regclass AND a.amname = 'bloomfilter';

-- partitioned tables: one filter per partition; the parent checks them all,
-- including rows inserted into a partition directly
CREATE TABLE ti_events (id bigint, kind text) PARTITION BY RANGE (id);
CREATE TABLE ti_events_1 PARTITION OF ti_events FOR VALUES FROM (0) TO (1000);
CREATE TABLE ti_events_2 PARTITION OF ti_events FOR VALUES FROM (1000) TO (2000);
INSERT INTO ti_events SELECT g, 'k' || g FROM generate_series(0, 1499) g;
SELECT bf_track('ti_events', 'id', 10000);
INSERT INTO ti_events_2 VALUES (1999, 'direct');
CREATE TABLE ti_events_3 PARTITION OF ti_events FOR VALUES FROM (2000) TO (3000);
INSERT INTO ti_events VALUES (2500, 'later partition');
SELECT count(*) AS found FROM generate_series(0, 1499) g WHERE bf_might_contain('ti_events', 'id', g);
SELECT bf_might_contain('ti_events', 'id', 1999) AS direct, bf_might_contain('ti_events', 'id', 2500) AS new_partition;
SELECT estimated_cardinality BETWEEN 1400 AND 1650 AS cardinality_ok, bytes > 0 AS has_bytes
FROM bf_tracked WHERE tbl = 'ti_events'::regclass;
SELECT bf_rebuild('ti_events', 'id');
SELECT bf_might_contain('ti_events', 'id', 2500) AS after_rebuild;
SELECT bf_untrack('ti_events', 'id');

-- privileges: the lookup needs SELECT on the column
CREATE TABLE ti_secret (id int, secret text);
INSERT INTO ti_secret VALUES (1, 'hush');
SELECT bf_track('ti_secret', 'secret');
CREATE ROLE regress_bf_ti_reader;
GRANT SELECT (id) ON ti_secret TO regress_bf_ti_reader;
SET ROLE regress_bf_ti_reader;
SELECT bf_might_contain('ti_secret', 'secret', 'hush');
SELECT bf_tracked_filter('ti_secret', 'secret');
RESET ROLE;
SELECT bf_untrack('ti_secret', 'secret');
DROP TABLE ti_secret;
DROP ROLE regress_bf_ti_reader;
DROP TABLE ti_users, ti_events;
