-- Answers that must be the same before and after pg_upgrade or a dump and
-- restore into another major (test/t/007_pg_upgrade.pl): no false negative
-- from any object, and the same false positives.
SELECT 'value', fam,
	   count(*) FILTER (WHERE present AND NOT hit) AS false_negatives,
	   count(*) FILTER (WHERE NOT present AND hit) AS false_positives
FROM keys CROSS JOIN vals, LATERAL (VALUES
	('bloomfilter', bf_contains(plain, t)), ('growing', bf_contains(growing, i)),
	('bloomwindow', bf_window_contains(win, t, timestamptz '2030-01-01 01:00+00'))) x(fam, hit)
GROUP BY fam ORDER BY fam;
SELECT 'value bytes', md5(plain::bytea || growing::bytea || win::bytea) FROM vals;
SELECT 'index', idx,
	   count(*) FILTER (WHERE present AND NOT hit) AS false_negatives,
	   count(*) FILTER (WHERE NOT present AND hit) AS false_positives
FROM keys, LATERAL (VALUES ('ix_t', bf_index_contains('ix_t', t)),
						   ('ix_i_grow', bf_index_contains('ix_i_grow', i)),
						   ('ix_iu', bf_index_contains('ix_iu', ROW(i, u))),
						   ('px_t', bf_index_contains('px_t', t))) x(idx, hit)
GROUP BY idx ORDER BY idx;
SELECT 'index bytes', md5(bf_index_filter('ix_t')::bytea || bf_index_filter('ix_i_grow')::bytea ||
						  bf_index_filter('ix_iu')::bytea);
SET enable_seqscan = off;
SELECT 'index scan', count(*) FROM ix WHERE t IN ('key-1', 'key-20000', 'key-20001');
RESET enable_seqscan;
SELECT 'tracked', tbl,
	   count(*) FILTER (WHERE present AND NOT hit) AS false_negatives,
	   count(*) FILTER (WHERE NOT present AND hit) AS false_positives
FROM keys, LATERAL (VALUES ('tr_i', bf_might_contain('tr_i', 'k', t)),
						   ('tr_t', bf_might_contain('tr_t', 'k', t)),
						   ('tr_ig', bf_might_contain('tr_ig', 'k', t)),
						   ('tr_tg', bf_might_contain('tr_tg', 'k', t)),
						   ('tr_p', bf_might_contain('tr_p', 'k', t))) x(tbl, hit)
GROUP BY tbl ORDER BY tbl;
SELECT 'tracked list', tbl, col, method, stale FROM bf_tracked ORDER BY tbl::text, col;
SELECT 'sync_into', count(*) FILTER (WHERE NOT bf_contains(g.f, r.k)) AS false_negatives
FROM grp_rows r JOIN grp g USING (gid);
