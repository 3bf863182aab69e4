-- Objects of every kind, made by the released 1.0 (test/t/003_upgrade.pl).
-- "keys" holds the keys: present ones (g <= 20000) went into every filter,
-- absent ones measure false positives, which must not change either.
CREATE EXTENSION bloomfilter VERSION '1.0';
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE keys AS
SELECT g, g <= 20000 AS present, g AS i, g::bigint * 1000003 AS b, 'key-' || g AS t,
	   g / 7.0 AS n, decode(md5(g::text), 'hex') AS by, md5(g::text)::uuid AS u,
	   date '2000-01-01' + g AS d,
	   timestamptz '2020-01-01 00:00+00' + g * interval '1 minute' AS ts,
	   (enum_range(NULL::mood))[1 + g % 3] AS m, g * 0.5::float8 AS f
FROM generate_series(1, 40000) g;

-- values of several families, by bf_add_all and by the aggregates
CREATE TABLE vals AS
SELECT bf_add_all(bf_create(20000, 0.01), array_agg(i)) AS fi,
	   bf_add_all(bf_create(20000, 0.01), array_agg(b)) AS fb,
	   bf_add_all(bf_create(20000, 0.01), array_agg(t)) AS ft,
	   bf_add_all(bf_create(20000, 0.01, 42), array_agg(n)) AS fn,
	   bf_add_all(bf_create(20000, 0.001), array_agg(by)) AS fby,
	   bf_agg(u, 20000, 0.01) AS fu,
	   bf_agg(d) AS fd,
	   bf_agg(ts, 20000, 0.05) AS fts,
	   bf_agg(m, 10, 0.01) AS fm,
	   bf_add_all(bf_create(20000, 0.01), array_agg(f)) AS ff,
	   bf_agg(ROW(i, t), 20000, 0.01) AS fr
FROM keys WHERE present;
-- a copy written at every stage
CREATE TABLE lvals AS SELECT ft FROM vals;

-- tracked tables, both methods; tr_* are never written again, lv_* are
-- written at every stage
CREATE TABLE tr_i (id int, email text);
CREATE TABLE tr_t (id int, email text);
CREATE TABLE lv_i (id int, email text);
CREATE TABLE lv_t (id int, email text);
INSERT INTO tr_i SELECT g, t FROM keys WHERE present;
INSERT INTO tr_t SELECT g, t FROM keys WHERE present;
INSERT INTO lv_i SELECT g, t FROM keys WHERE present;
INSERT INTO lv_t SELECT g, t FROM keys WHERE present;
SELECT bf_track('tr_i', 'email', 50000);
SELECT bf_track('tr_t', 'email', 50000, method => 'trigger');
SELECT bf_track('lv_i', 'email', 50000);
SELECT bf_track('lv_t', 'email', 50000, method => 'trigger');
INSERT INTO tr_t SELECT -1, 'added by the 1.0 trigger';
INSERT INTO tr_i SELECT -1, 'added by the 1.0 index';

-- indexes, single- and multi-column; lx is written at every stage
CREATE TABLE ix (i int, t text, u uuid);
CREATE TABLE lx (i int, t text, u uuid);
INSERT INTO ix SELECT i, t, u FROM keys WHERE present;
INSERT INTO lx SELECT i, t, u FROM keys WHERE present;
CREATE INDEX ix_t ON ix USING bloomfilter (t) WITH (capacity = 50000);
CREATE INDEX ix_iu ON ix USING bloomfilter (i, u) WITH (capacity = 50000, fpr = 0.001);
CREATE INDEX lx_t ON lx USING bloomfilter (t) WITH (capacity = 50000);
CREATE INDEX lx_iu ON lx USING bloomfilter (i, u) WITH (capacity = 50000);
INSERT INTO ix VALUES (-1, 'inserted under 1.0', NULL);
