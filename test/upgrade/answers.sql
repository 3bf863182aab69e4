-- Answers that must be the same at every stage of the upgrade (the output
-- is compared with the 1.0 library's): no false negative, and the same
-- false positives, for every object made by 1.0.
SELECT 'value', fam,
	   count(*) FILTER (WHERE present AND NOT hit) AS false_negatives,
	   count(*) FILTER (WHERE NOT present AND hit) AS false_positives
FROM keys CROSS JOIN vals, LATERAL (VALUES
	('int4', bf_contains(fi, i)), ('int4 as int8', bf_contains(fi, i::int8)),
	('int8', bf_contains(fb, b)), ('text', bf_contains(ft, t)),
	('numeric', bf_contains(fn, n)), ('numeric rescaled', bf_contains(fn, n * 1.000)),
	('bytea', bf_contains(fby, by)), ('uuid', bf_contains(fu, u)),
	('date', bf_contains(fd, d)), ('timestamptz', bf_contains(fts, ts)),
	('enum', bf_contains(fm, m)), ('float8', bf_contains(ff, f)),
	('record', bf_contains(fr, ROW(i, t)))) x(fam, hit)
GROUP BY fam ORDER BY fam;
-- the stored bytes, and a filter built now from the same keys is the same
SELECT 'value bytes', md5(fi::bytea || fb::bytea || ft::bytea || fn::bytea || fby::bytea ||
		   fu::bytea || fd::bytea || fts::bytea || fm::bytea || ff::bytea || fr::bytea)
FROM vals;
SELECT 'value rebuilt', bf_add_all(bf_create(20000, 0.01), array_agg(t)) = (SELECT ft FROM vals),
	   bf_agg(ROW(i, t), 20000, 0.01) = (SELECT fr FROM vals),
	   bf_add_all(bf_create(20000, 0.01, 42), array_agg(n)) = (SELECT fn FROM vals)
FROM keys WHERE present;

-- tracked filters of both methods
SELECT 'tracked', tbl,
	   count(*) FILTER (WHERE present AND NOT hit) AS false_negatives,
	   count(*) FILTER (WHERE NOT present AND hit) AS false_positives
FROM keys, LATERAL (VALUES ('tr_i', bf_might_contain('tr_i', 'email', t)),
						   ('tr_t', bf_might_contain('tr_t', 'email', t))) x(tbl, hit)
GROUP BY tbl ORDER BY tbl;
SELECT 'tracked late rows', bf_might_contain('tr_i', 'email', 'added by the 1.0 index'),
	   bf_might_contain('tr_t', 'email', 'added by the 1.0 trigger');
SELECT 'tracked bytes', md5(bf_tracked_filter('tr_i', 'email')::bytea),
	   md5(bf_tracked_filter('tr_t', 'email')::bytea);
SELECT 'tracked list', tbl, col, method FROM bf_tracked ORDER BY tbl::text, col;

-- indexes: the functions, the bytes and a bitmap scan
SELECT 'index',
	   count(*) FILTER (WHERE present AND NOT bf_index_contains('ix_t', t)),
	   count(*) FILTER (WHERE NOT present AND bf_index_contains('ix_t', t)),
	   count(*) FILTER (WHERE present AND NOT bf_index_contains('ix_iu', ROW(i, u))),
	   count(*) FILTER (WHERE NOT present AND bf_index_contains('ix_iu', ROW(i, u)))
FROM keys;
SELECT 'index bytes', md5(bf_index_filter('ix_t')::bytea), md5(bf_index_filter('ix_iu')::bytea);
SET enable_seqscan = off;
SELECT 'index scan', count(*) FROM ix WHERE t IN ('key-1', 'key-20000', 'key-20001', 'inserted under 1.0');
SELECT 'index scan', count(*) FROM ix WHERE i = 77 AND u = md5('77')::uuid;
RESET enable_seqscan;
