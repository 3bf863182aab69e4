-- Objects of every kind, made on the old major before pg_upgrade or
-- pg_dump (test/t/007_pg_upgrade.pl).  "keys" holds the keys: present ones
-- (g <= 20000) went into every filter, absent ones measure false
-- positives, which must not change across the upgrade either.
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE TABLE keys AS
SELECT g, g <= 20000 AS present, g AS i, 'key-' || g AS t, md5(g::text)::uuid AS u
FROM generate_series(1, 40000) g;

-- stored values: a bloomfilter, a growing one (grown past one layer) and
-- a bloomwindow (its keys added at a fixed time, asked an hour later)
CREATE TABLE vals AS
SELECT bf_add_all(bf_create(20000, 0.01), array_agg(t)) AS plain,
	   bf_add_all(bf_create_growing(1000, 0.01), array_agg(i)) AS growing,
	   bf_window_add_all(bf_window_create('1 day', 20000, 0.01), array_agg(t),
						 timestamptz '2030-01-01 00:00+00') AS win
FROM keys WHERE present;

-- indexes: plain, growing, two-column, partitioned
CREATE TABLE ix (i int, t text, u uuid);
INSERT INTO ix SELECT i, t, u FROM keys WHERE present;
CREATE INDEX ix_t ON ix USING bloomfilter (t) WITH (capacity = 50000);
CREATE INDEX ix_i_grow ON ix USING bloomfilter (i) WITH (capacity = 1000, growth = 2);
CREATE INDEX ix_iu ON ix USING bloomfilter (i, u) WITH (capacity = 50000, fpr = 0.001);
CREATE TABLE px (i int, t text) PARTITION BY RANGE (i);
CREATE TABLE px_1 PARTITION OF px FOR VALUES FROM (MINVALUE) TO (10001);
CREATE TABLE px_2 PARTITION OF px FOR VALUES FROM (10001) TO (MAXVALUE);
INSERT INTO px SELECT i, t FROM keys WHERE present;
CREATE INDEX px_t ON px USING bloomfilter (t) WITH (capacity = 30000);

-- tracked filters: both methods, sized and growing; a partitioned table
CREATE TABLE tr_i (k text);
CREATE TABLE tr_t (k text);
CREATE TABLE tr_ig (k text);
CREATE TABLE tr_tg (k text);
CREATE TABLE tr_p (i int, k text) PARTITION BY RANGE (i);
CREATE TABLE tr_p_1 PARTITION OF tr_p FOR VALUES FROM (MINVALUE) TO (10001);
CREATE TABLE tr_p_2 PARTITION OF tr_p FOR VALUES FROM (10001) TO (MAXVALUE);
SELECT bf_track('tr_i', 'k', 50000);
SELECT bf_track('tr_t', 'k', 50000, method => 'trigger');
SELECT bf_track('tr_ig', 'k');
SELECT bf_track('tr_tg', 'k', method => 'trigger');
SELECT bf_track('tr_p', 'k', 50000);
INSERT INTO tr_i SELECT t FROM keys WHERE present;
INSERT INTO tr_t SELECT t FROM keys WHERE present;
INSERT INTO tr_ig SELECT t FROM keys WHERE present;
INSERT INTO tr_tg SELECT t FROM keys WHERE present;
INSERT INTO tr_p SELECT i, t FROM keys WHERE present;

-- a filter being marked stale: one of its sync triggers disabled, after
-- which writes are missing from it (bf_rebuild must bring them back)
CREATE TABLE tr_stale (k text);
SELECT bf_track('tr_stale', 'k', 50000, method => 'trigger');
INSERT INTO tr_stale SELECT t FROM keys WHERE present AND g <= 10000;
DO $$
DECLARE
	trg name;
BEGIN
	FOR trg IN SELECT tgname FROM pg_trigger WHERE tgrelid = 'tr_stale'::regclass AND NOT tgisinternal
	LOOP
		EXECUTE format('ALTER TABLE tr_stale DISABLE TRIGGER %I', trg);
	END LOOP;
END $$;
INSERT INTO tr_stale SELECT t FROM keys WHERE present AND g > 10000;

-- bf_sync_into: per-group filters in a table of the user's own
CREATE TABLE grp (gid int PRIMARY KEY, f bloomfilter);
INSERT INTO grp SELECT g, NULL FROM generate_series(0, 9) g;
CREATE TABLE grp_rows (gid int, k text);
CREATE TRIGGER grp_sync AFTER INSERT ON grp_rows
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION bf_sync_into('grp', 'gid', 'f', 'gid', 'k', 5000, 0.01);
INSERT INTO grp_rows SELECT g % 10, t FROM keys WHERE present;
