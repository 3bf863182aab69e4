-- Per-filter statistics in a cluster that does not preload the library
-- (this suite's): nothing is counted and bf_stat_available() says so,
-- every lookup works, the view is empty, and resetting is still
-- restricted to superusers and those granted EXECUTE (the preloaded
-- cluster's counts: test/t/008_stats.pl).
SELECT bf_stat_available();
CREATE TABLE sf (k int);
INSERT INTO sf SELECT generate_series(1, 100);
SELECT bf_track('sf', 'k', method => 'trigger');
SELECT bf_might_contain('sf', 'k', 1) AS present;
SELECT count(*) FROM bf_stat_filters;
SET bloomfilter.track_stats = off;
SELECT bf_might_contain('sf', 'k', 1) AS present;
RESET bloomfilter.track_stats;
SELECT bf_stat_reset();
CREATE ROLE bfst_reader;
SET ROLE bfst_reader;
SELECT count(*) FROM bf_stat_filters;
SELECT bf_stat_reset();
RESET ROLE;
DROP ROLE bfst_reader;
SELECT bf_untrack('sf', 'k');
DROP TABLE sf;
