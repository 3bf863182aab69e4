--
-- bf_might_contain answers from any usable bloomfilter index on the
-- column, bf_track adopts such an index, bf_untrack drops only the index
-- bf_track created, and an index that is not valid never answers.
--
SET client_min_messages = notice;
CREATE TABLE ad_users (id int, email text);
INSERT INTO ad_users SELECT g, 'u' || g FROM generate_series(1, 1000) g;

-- ---- an index of the user's answers without bf_track
CREATE INDEX ad_users_mine ON ad_users USING bloomfilter (email);
SELECT bf_might_contain('ad_users', 'email', 'u7') AS member,
       bf_might_contain('ad_users', 'email', 'nobody') AS stranger;
SELECT count(*) FILTER (WHERE NOT bf_might_contain('ad_users', 'email', email)) AS false_negatives
FROM ad_users;
-- and so does the filter as a value
SELECT bf_contains(bf_tracked_filter('ad_users', 'email'), 'u8');
-- not for another column, nor for an index with an expression or a predicate
CREATE INDEX ad_users_lower ON ad_users USING bloomfilter (lower(email));
CREATE INDEX ad_users_some ON ad_users USING bloomfilter (id) WHERE id > 10;
SELECT bf_might_contain('ad_users', 'id', 5);
DROP INDEX ad_users_lower, ad_users_some;

-- ---- bf_track adopts it instead of building a second index
SELECT bf_track('ad_users', 'email');
SELECT count(*) AS bloomfilter_indexes FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'ad_users'::regclass AND a.amname = 'bloomfilter';
SELECT method, created_index FROM bf_registry WHERE tbl = 'ad_users'::regclass;
SELECT col, method, stale FROM bf_tracked WHERE tbl = 'ad_users'::regclass;
-- ... and bf_untrack leaves the user's index in place
SELECT bf_untrack('ad_users', 'email');
SELECT to_regclass('ad_users_mine') IS NOT NULL AS kept;
SELECT bf_might_contain('ad_users', 'email', 'u9') AS still_answers;
-- the index bf_track creates itself is the one bf_untrack drops
SELECT bf_track('ad_users', 'id');
SELECT created_index FROM bf_registry WHERE tbl = 'ad_users'::regclass;
CREATE INDEX ad_users_id_mine ON ad_users USING bloomfilter (id);
SELECT bf_untrack('ad_users', 'id');
SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  JOIN pg_am a ON a.oid = c.relam
WHERE i.indrelid = 'ad_users'::regclass AND a.amname = 'bloomfilter' ORDER BY 1;
DROP INDEX ad_users_id_mine;

-- ---- an index that is not valid (as a cancelled CREATE INDEX
-- CONCURRENTLY leaves it) never answers: an error says to REINDEX
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ad_users_mine'::regclass;
SELECT bf_might_contain('ad_users', 'email', 'u7');
SELECT bf_track('ad_users', 'email');
REINDEX INDEX ad_users_mine;
SELECT bf_might_contain('ad_users', 'email', 'u7');
-- also while tracked: bf_rebuild repairs it
SELECT bf_track('ad_users', 'email');
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'ad_users_mine'::regclass;
SELECT bf_might_contain('ad_users', 'email', 'u7');
SELECT bf_rebuild('ad_users', 'email');
SELECT bf_might_contain('ad_users', 'email', 'u7');
SELECT bf_untrack('ad_users', 'email');
DROP TABLE ad_users;

-- ---- partitioned: a leaf index that is not valid
CREATE TABLE ad_events (id int) PARTITION BY RANGE (id);
CREATE TABLE ad_events_1 PARTITION OF ad_events FOR VALUES FROM (0) TO (100);
CREATE TABLE ad_events_2 PARTITION OF ad_events FOR VALUES FROM (100) TO (200);
INSERT INTO ad_events SELECT generate_series(0, 199);
SELECT bf_track('ad_events', 'id');
SELECT bf_might_contain('ad_events', 'id', 150);
UPDATE pg_index SET indisvalid = false
WHERE indexrelid = (SELECT indexrelid FROM pg_index WHERE indrelid = 'ad_events_2'::regclass);
SELECT bf_might_contain('ad_events', 'id', 150);
SELECT bf_rebuild('ad_events', 'id');
SELECT bf_might_contain('ad_events', 'id', 150);
SELECT bf_untrack('ad_events', 'id');
DROP TABLE ad_events;
