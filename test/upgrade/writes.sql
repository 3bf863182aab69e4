-- Writes at each stage of the upgrade into the objects made by 1.0 (psql
-- variable "stage"); every line must end in zero misses.
INSERT INTO lv_i SELECT g, :'stage' || '-' || g FROM generate_series(1, 300) g;
INSERT INTO lv_t SELECT g, :'stage' || '-' || g FROM generate_series(1, 300) g;
INSERT INTO lx SELECT g, :'stage' || '-' || g, md5(:'stage' || g)::uuid FROM generate_series(1, 300) g;
UPDATE lvals SET ft = bf_add(ft, :'stage'::text);
SELECT 'written, misses', count(*) FILTER (WHERE NOT bf_might_contain('lv_i', 'email', email)) FROM lv_i;
SELECT 'written, misses', count(*) FILTER (WHERE NOT bf_might_contain('lv_t', 'email', email)) FROM lv_t;
SELECT 'written, misses', count(*) FILTER (WHERE NOT bf_index_contains('lx_t', t)),
	   count(*) FILTER (WHERE NOT bf_index_contains('lx_iu', ROW(i, u))) FROM lx;
SELECT 'written, misses', (SELECT count(*) FILTER (WHERE NOT bf_contains(ft, t)) FROM keys WHERE present) +
	   (NOT bf_contains(ft, :'stage'::text))::int
FROM lvals;
-- rebuilds, and new objects made by this stage
SELECT bf_rebuild('lv_i', 'email'), bf_rebuild('lv_t', 'email');
REINDEX INDEX lx_iu;
SELECT 'rebuilt, misses', count(*) FILTER (WHERE NOT bf_might_contain('lv_i', 'email', email)) FROM lv_i;
SELECT 'rebuilt, misses', count(*) FILTER (WHERE NOT bf_might_contain('lv_t', 'email', email)) FROM lv_t;
SELECT 'rebuilt, misses', count(*) FILTER (WHERE NOT bf_index_contains('lx_iu', ROW(i, u))) FROM lx;
CREATE TABLE new_t AS SELECT id, email FROM lv_i;
SELECT bf_track('new_t', 'email', method => 'trigger');
CREATE INDEX new_t_id ON new_t USING bloomfilter (id);
INSERT INTO new_t VALUES (-7, 'late');
SELECT 'new objects, misses', count(*) FILTER (WHERE NOT bf_might_contain('new_t', 'email', email)),
	   count(*) FILTER (WHERE NOT bf_index_contains('new_t_id', id)) FROM new_t;
SELECT bf_untrack('new_t', 'email');
DROP TABLE new_t;
