# Tables distributed by Citus (test/lib/citus.sh: a coordinator and two
# workers on loopback): lookups through bf_index_contains and
# bf_might_contain on both kinds of column, a transaction's own writes,
# reference tables, bf_track's rate across shards, tracked tables through
# distribute / undistribute / shard-count change / shard move, rights, bad
# input and a worker down.  Needs Citus installed for this server; skipped
# (77) without it.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/lib/citus.sh
. test/lib/citus_clients.sh
citus_available || { echo "skipped: build Citus 13 (PostgreSQL 15-17) or 14 (16-18) from its source against $(command -v pg_config) and install it (docs/citus.md)"; exit 77; }
citus_start "${BF_CITUS_PORT:-57640}" || { echo "citus: could not start the clusters"; tail -20 "$CITUS_DIR"/n*.log; exit 1; }

passed=0
failed=0
# check_on NODE NAME EXPECTED SQL: node NODE's one-value answer to SQL
check_on() {
	local got
	got="$(cpsql "$1" -At -c "$4" 2>&1)"
	if [ "$got" = "$3" ]; then
		passed=$((passed + 1))
		echo "ok - $2"
	else
		failed=$((failed + 1))
		echo "not ok - $2: expected '$3', got '$got'"
	fi
}
# check NAME EXPECTED SQL: the coordinator's
check() { check_on 0 "$@"; }
# check_error NAME SQLSTATE SQL: SQL fails with that SQLSTATE on the coordinator
check_error() {
	local got
	got="$(printf '%s\n' "$3" | cpsql 0 -At -v VERBOSITY=verbose 2>&1 | sed -n 's/^[^E]*ERROR:  \([0-9A-Z]\{5\}\):.*/\1/p' | head -1)"
	if [ "$got" = "$2" ]; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1: expected SQLSTATE $2, got '$got' ($(cpsql 0 -At -c "$3" 2>&1 | head -2 | tr '\n' ' '))"
	fi
}

# check_plan NAME PATTERN SQL: EXPLAIN (VERBOSE) of SQL has a line matching PATTERN
check_plan() {
	if cpsql 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) $3" 2>&1 | grep -q -- "$2"; then
		passed=$((passed + 1))
		echo "ok - $1"
	else
		failed=$((failed + 1))
		echo "not ok - $1: no line matching '$2' in the plan"
	fi
}

cpsql 0 >/dev/null <<'SQL'
CREATE TABLE d (id bigint PRIMARY KEY, email text NOT NULL);
SELECT create_distributed_table('d', 'id', shard_count => 8);
INSERT INTO d SELECT g, 'user' || g || '@example.com' FROM generate_series(1, 20000) g;
CREATE INDEX d_email_bf ON d USING bloomfilter (email) WITH (capacity = 5000, fpr = 0.01);
CREATE INDEX d_id_bf ON d USING bloomfilter (id) WITH (capacity = 5000, fpr = 0.01);
CREATE TABLE r (code text);
SELECT create_reference_table('r');
INSERT INTO r SELECT 'code' || g FROM generate_series(1, 1000) g;
CREATE INDEX r_code_bf ON r USING bloomfilter (code);
CREATE ROLE bf_citus_nobody;
GRANT USAGE ON SCHEMA public TO bf_citus_nobody;
SQL

echo "-- lookups in the index of a distributed table"
check "every key of a non-distribution column found" 0 \
	"SELECT count(*) FROM generate_series(1, 20000, 4) g WHERE NOT bf_index_contains('d_email_bf', 'user' || g || '@example.com')"
check "every key of the distribution column found" 0 \
	"SELECT count(*) FROM generate_series(1, 20000, 4) g WHERE NOT bf_index_contains('d_id_bf', g::bigint)"
check "absent keys: a rate near 8 shards x 1 % (the index's own options)" t \
	"SELECT count(*) FILTER (WHERE bf_index_contains('d_email_bf', 'absent' || g)) < 400 FROM generate_series(1, 2000) g"
check "absent distribution keys: the one shard's rate" t \
	"SELECT count(*) FILTER (WHERE bf_index_contains('d_id_bf', g::bigint)) < 60 FROM generate_series(100001, 102000) g"
check_plan "the distribution column's lookup goes to one shard" "Task Count: 1" \
	"SELECT 1 FROM d t WHERE bf_shard_might_contain(t.tableoid, '{id}', 42::bigint) AND t.id = 42 LIMIT 1"
check_plan "another column's lookup asks every shard" "Task Count: 8" \
	"SELECT 1 FROM d t WHERE bf_shard_might_contain(t.tableoid, '{email}', 'x'::text) LIMIT 1"
check_plan "a shard tests its filter once, before its scan" "One-Time Filter: bf_shard_might_contain('[0-9]*'::oid" \
	"SELECT 1 FROM d t WHERE bf_shard_might_contain(t.tableoid, '{email}', 'x'::text) LIMIT 1"
check "bf_index_filter: a union of the 8 shards' filters, each sized by the index's options" "union|8|5000" \
	"SELECT (bf_info(f)).layout || '|' || (SELECT count(*) || '|' || min(l.capacity) FROM bf_layers(f) l) FROM bf_index_filter('d_email_bf') f"
check "bf_index_filter: every key in it, and absent keys at the rate of asking every shard" "0|true" \
	"SELECT count(*) FILTER (WHERE NOT bf_contains(f, 'user' || g || '@example.com')) || '|' ||
	        (count(*) FILTER (WHERE bf_contains(f, 'nobody' || g)) BETWEEN 20000 * 0.5 * (SELECT estimated_fpr FROM bf_index_info('d_email_bf'))
	                                                             AND 20000 * 2 * (SELECT estimated_fpr FROM bf_index_info('d_email_bf')))
	 FROM (SELECT bf_index_filter('d_email_bf') f OFFSET 0) x, generate_series(1, 20000) g"
check "bf_index_layers: the shards' layers" 8 "SELECT count(*) FROM bf_index_layers('d_email_bf')"
check_error "bf_index_filter without SELECT on the column: refused" 42501 \
	"SET ROLE bf_citus_nobody; SELECT bf_index_filter('d_email_bf')"
check "reference table: present" t "SELECT bf_index_contains('r_code_bf', 'code7'::text)"
check "reference table: bf_index_info from its one shard" "1000|true" \
	"SELECT round(estimated_cardinality::numeric, -2) || '|' || (nbits > 0) FROM bf_index_info('r_code_bf')"
check "reference table: absent" f "SELECT bf_index_contains('r_code_bf', 'nocode'::text)"
check "reference table: bf_index_filter from one placement, a union of one layer" "union|1|true|false" \
	"SELECT (bf_info(f)).layout || '|' || (SELECT count(*) FROM bf_layers(f)) || '|' ||
	        bf_contains(f, 'code7'::text) || '|' || bf_contains(f, 'nocode'::text)
	 FROM bf_index_filter('r_code_bf') f"
check "a transaction sees its own writes" "true|true" \
	"BEGIN; INSERT INTO d VALUES (900001, 'own@write'); SELECT bf_index_contains('d_email_bf', 'own@write'::text) || '|' || bf_index_contains('d_id_bf', 900001::bigint); ROLLBACK;"

echo "-- a Citus local table (its shard on the coordinator)"
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE loc (k text);
INSERT INTO loc SELECT 'loc' || g FROM generate_series(1, 1000) g;
SELECT citus_add_local_table_to_metadata('loc');
CREATE INDEX loc_k_bf ON loc USING bloomfilter (k);
INSERT INTO loc VALUES ('late');
SQL
check "Citus local table: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, 1000) g WHERE NOT bf_index_contains('loc_k_bf', 'loc' || g)"
check "Citus local table: present and absent" "t|f" \
	"SELECT concat_ws('|', bf_index_contains('loc_k_bf', 'late'::text), bf_index_contains('loc_k_bf', 'nowhere'::text))"
check "Citus local table: bf_index_info from its shard" t \
	"SELECT estimated_cardinality > 0 AND bf_index_size('loc_k_bf') > 0 FROM bf_index_info('loc_k_bf')"
check "Citus local table: bf_index_filter from its shard, every key in it" "union|0" \
	"SELECT max((bf_info(f)).layout) || '|' || count(*) FILTER (WHERE NOT bf_contains(f, 'loc' || g))
	 FROM (SELECT bf_index_filter('loc_k_bf') f OFFSET 0) x, generate_series(1, 1000) g"

echo "-- bf_track and bf_might_contain"
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE t32 (id bigint, k text);
SELECT create_distributed_table('t32', 'id', shard_count => 32);
INSERT INTO t32 SELECT g, 'k' || g FROM generate_series(1, 100000) g;
SELECT bf_track('t32', 'k', 100000, 0.01);
SELECT bf_track('t32', 'id', 100000, 0.01);
SQL
check "each shard's index sized for capacity / 32 at 1 % / 32" \
	"fpr=0.00031250000000000001,capacity=3125,growth=0" \
	"SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 't32_k_bf'"
check "bf_might_contain: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, 100000, 20) g WHERE NOT bf_might_contain('t32', 'k', 'k' || g)"
check "bf_might_contain on the distribution column: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, 100000, 20) g WHERE NOT bf_might_contain('t32', 'id', g::bigint)"
rate="$(cpsql 0 -At -c "SELECT round(100.0 * count(*) FILTER (WHERE bf_might_contain('t32', 'k', 'absent' || g)) / 20000, 3) FROM generate_series(1, 20000) g")"
echo "# rate of bf_might_contain over 20 000 absent keys, 32 shards, fpr 1 %: $rate %"
check "that rate is at most 1.3 % (1 % asked; 20 000 keys)" t "SELECT $rate <= 1.3"
cpsql 0 -c "SELECT bf_rebuild('t32', 'k', 200000, 0.02)" >/dev/null
check "bf_rebuild resizes every shard's index" \
	"fpr=0.00062500000000000001,capacity=6250,growth=0" \
	"SELECT array_to_string(reloptions, ',') FROM pg_class WHERE relname = 't32_k_bf'"
check "rebuilt: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, 100000, 20) g WHERE NOT bf_might_contain('t32', 'k', 'k' || g)"
check "bf_tracked lists the distributed columns with the rate asked" "t32|k|index|200000|0.02" \
	"SELECT string_agg(concat_ws('|', tbl, col, method, capacity, target_fpr), ',') FROM bf_tracked WHERE tbl = 't32'::regclass AND col = 'k'"
check "bf_index_info: the shards' sizes, and the rate of a lookup asking all 32" "t|t|t|f" \
	"SELECT i.capacity >= 200000, abs(i.fpr - 0.02) < 0.0002, i.estimated_fpr < 0.02, i.saturated
	 FROM bf_index_info('t32_k_bf') i"
check "bf_tracked: the rate and the bytes of the shards' indexes" "t|t|t" \
	"SELECT t.estimated_fpr = i.estimated_fpr, t.bytes = s.bytes, t.bytes > pg_relation_size('t32_k_bf')
	 FROM bf_tracked t, bf_index_info('t32_k_bf') i,
	      (SELECT sum(result::bigint) AS bytes FROM run_command_on_shards('t32',
	         \$\$SELECT pg_relation_size(bf_shard_index('%s', '{k}'))\$\$)) s
	 WHERE t.tbl = 't32'::regclass AND t.col = 'k'"
check_error "method 'trigger' refused, naming method 'index'" 0A000 \
	"SELECT bf_track('d', 'email', method => 'trigger')"

echo "-- a tracked table distributed, shards changed, moved, undistributed"
# with a client's copy of its filter, refreshed by bf_tracked_changes
# (test/sql/include/change_client.sql applies the patches as a reader must)
cpsql 0 >/dev/null <<'SQL'
\i test/sql/include/change_client.sql
CREATE TABLE bfc_client (copy bytea, lsn pg_lsn, full_refresh bool, sent int);
INSERT INTO bfc_client VALUES (NULL, NULL, NULL, NULL);
CREATE FUNCTION bfc_refresh_life() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
	c record;
BEGIN
	SELECT * INTO c FROM bf_tracked_changes('life', 'k', (SELECT lsn FROM bfc_client));
	UPDATE bfc_client SET copy = bfc_apply(copy, c.patch), lsn = c.next_lsn,
		full_refresh = c.full_refresh, sent = length(c.patch);
END $$;
CREATE TABLE life (id bigint, k text);
INSERT INTO life SELECT g, 'l' || g FROM generate_series(1, 5000) g;
SELECT bf_track('life', 'k');
SELECT bfc_refresh_life();
SQL
citus_clients_start life k
citus_clients_check "clients: the local table's filter" life k "SELECT 'l' || g FROM generate_series(1, 5000, 5) g" full
cpsql 0 -c "SELECT create_distributed_table('life', 'id', shard_count => 4)" >/dev/null
# check_client NAME FULL: after a refresh, whether it was sent in full, and
# that the copy is the filter now and holds every key (1 in 5)
# (and the same of the Go, JavaScript and Python clients' Refresher,
# test/lib/citus_clients.sh, each holding its own copy)
check_client() {
	cpsql 0 -c "SELECT bfc_refresh_life()" >/dev/null
	check "client: $1" "$2|t|0" \
		"SELECT c.full_refresh, c.copy = bf_tracked_filter('life', 'k')::bytea,
		        (SELECT count(*) FROM generate_series(1, $n, 5) g
		         WHERE NOT bf_contains(c.copy::bloomfilter, 'l' || g))
		 FROM bfc_client c"
	citus_clients_check "clients: $1" life k "SELECT 'l' || g FROM generate_series(1, $n, 5) g" \
		"$([ "$2" = t ] && echo full || echo patch)"
}
n=5000
check "distributed after bf_track: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "distributed: the whole filter sent (a local position names no shard's)" t
check "client: the filter is a union, one layer per shard" "union|4" \
	"SELECT (bf_info(f)).layout || '|' || (SELECT count(*) FROM bf_layers(f)) FROM bf_tracked_filter('life', 'k') f"
check_client "nothing written since: only a patch" f
check "client: nothing written since: no runs" 24 "SELECT sent FROM bfc_client"
cpsql 0 -c "INSERT INTO life SELECT g, 'l' || g FROM generate_series(5001, 6000) g" >/dev/null
n=6000
check "rows written after distribution found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "rows written: the changed pages of every shard" f
cpsql 0 -c "INSERT INTO life VALUES (1, 'one more key')" >/dev/null
check_client "a key written: a patch" f
check "client: the patch of one key is a small part of the filter" t \
	"SELECT sent * 4 < length(bf_tracked_filter('life', 'k')::bytea) FROM bfc_client"
check "client: in a read-only transaction, position 0/0 (none recorded)" "0/0|true" \
	"BEGIN READ ONLY; SELECT next_lsn || '|' || (length(patch) > 0) FROM bf_tracked_changes('life', 'k', (SELECT lsn FROM bfc_client)); COMMIT"
cpsql 0 >/dev/null <<'SQL'
CREATE ROLE bf_citus_reader LOGIN;
GRANT USAGE ON SCHEMA public TO bf_citus_reader;
GRANT SELECT ON life TO bf_citus_reader;
SQL
check "client: a role that may read the column gets a position recorded for it" "true|true" \
	"SET ROLE bf_citus_reader; SELECT (next_lsn > 'BF000000/0') || '|' || full_refresh FROM bf_tracked_changes('life', 'k')"
check_error "client: the positions are not readable by it" 42501 \
	"SET ROLE bf_citus_reader; SELECT * FROM bf_dist_position"
check_error "client: a role without SELECT on the column gets no filter" 42501 \
	"SET ROLE bf_citus_nobody; SELECT * FROM bf_tracked_changes('life', 'k')"
cpsql 0 -c "SELECT alter_distributed_table('life', shard_count => 6)" >/dev/null 2>&1
check "after a shard-count change: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "shard count changed: the whole filter sent" t
cpsql 0 -c "INSERT INTO life SELECT g, 'l' || g FROM generate_series(6001, 6100) g" >/dev/null
n=6100
check_client "and a patch after it" f
cpsql 0 -c "SELECT citus_move_shard_placement(s.shardid, '127.0.0.1', ${CITUS_PORTS[1]}, '127.0.0.1', ${CITUS_PORTS[2]}, shard_transfer_mode => 'block_writes') FROM citus_shards s WHERE s.table_name = 'life'::regclass AND s.nodeport = ${CITUS_PORTS[1]} LIMIT 1" >/dev/null
check "after a shard move: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "a shard moved: the whole filter sent" t
# every shard on one worker, then rebalanced over both
cpsql 0 -c "SELECT citus_move_shard_placement(s.shardid, '127.0.0.1', ${CITUS_PORTS[2]}, '127.0.0.1', ${CITUS_PORTS[1]}, shard_transfer_mode => 'block_writes') FROM citus_shards s WHERE s.table_name = 'life'::regclass AND s.nodeport = ${CITUS_PORTS[2]}" >/dev/null
cpsql 0 -c "SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes')" -c "SELECT citus_rebalance_wait()" >/dev/null 2>&1
check "rebalanced: shards on both workers again" 2 \
	"SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'life'::regclass"
check "after a rebalance: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
citus_add_worker
cpsql 0 -c "SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes')" -c "SELECT citus_rebalance_wait()" >/dev/null 2>&1
check "a worker added and shards moved there" t \
	"SELECT count(*) > 0 FROM citus_shards WHERE table_name = 'life'::regclass AND nodeport = ${CITUS_PORTS[3]}"
check "on the new worker too: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "rebalanced onto a new worker: the whole filter sent" t
cpsql 0 -c "INSERT INTO life SELECT g, 'l' || g FROM generate_series(6101, 7000) g" >/dev/null
n=7000
check "rows written since: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "rows written on three workers: a patch" f
cpsql 0 -c "REINDEX TABLE life" >/dev/null
check_client "the shards' indexes rebuilt: the whole filter sent" t
cpsql 0 -c "SELECT undistribute_table('life')" >/dev/null 2>&1
check "undistributed: every key found" 0 \
	"SELECT count(*) FROM generate_series(1, $n, 5) g WHERE NOT bf_might_contain('life', 'k', 'l' || g)"
check_client "undistributed: the whole filter sent (a distributed position names no WAL position)" t
citus_clients_stop

echo "-- aggregates run in parts on the workers"
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE ag (id bigint, k text, small int2, at timestamptz);
SELECT create_distributed_table('ag', 'id', shard_count => 4);
INSERT INTO ag SELECT g, 'k' || g, (g % 1000)::int2, '2026-01-01'::timestamptz + g * interval '1 second'
FROM generate_series(1, 20000) g;
CREATE TABLE ag_local AS SELECT * FROM ag;
CREATE TABLE ag_f (id bigint, f bloomfilter);
SELECT create_distributed_table('ag_f', 'id', shard_count => 4);
INSERT INTO ag_f SELECT g, bf_add(bf_create(1000, 0.01), g) FROM generate_series(1, 200) g;
CREATE TABLE ag_f_local AS SELECT * FROM ag_f;
SQL
# Citus's worker side of a partial aggregate: worker_partial_agg (Citus 13:
# the state in its type's text form) or worker_binary_partial_agg (Citus 14,
# for a state type with send and receive functions: its binary form)
partial_agg='worker_\(binary_\)\{0,1\}partial_agg('
check_plan "bf_agg(text, capacity, fpr) runs on the workers" "$partial_agg" \
	"SELECT bf_agg(k, 40000, 0.01) FROM ag"
check_plan "bf_union_agg runs on the workers" "$partial_agg" "SELECT bf_union_agg(f) FROM ag_f"
if cpsql 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT bf_agg(id::float8, 40000, 0.01) FROM ag" | grep -q -- "$partial_agg"; then
	failed=$((failed + 1))
	echo "not ok - bf_agg of a polymorphic form (float8): rows gathered, not run in parts"
else
	passed=$((passed + 1))
	echo "ok - bf_agg of a polymorphic form (float8): rows gathered, not run in parts"
fi
check_plan "bf_window_agg(text, ...) runs on the workers" "$partial_agg" \
	"SELECT bf_window_agg(k, at, '1 day', 40000) FROM ag"
# results through tables of the coordinator, one aggregate each (an
# aggregate of a distributed table in a subquery is not pushed down)
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE r_sized AS SELECT bf_agg(k, 40000, 0.01) AS v FROM ag;
CREATE TABLE r_auto AS SELECT bf_agg(k) AS v FROM ag;
CREATE TABLE r_uni AS SELECT bf_union_agg(f) AS v FROM ag_f;
CREATE TABLE r_inter AS SELECT bf_intersect_agg(f) AS v FROM ag_f;
CREATE TABLE r_win AS SELECT bf_window_agg(k, at, '1 day', 40000) AS v FROM ag;
CREATE TABLE r_gathered AS SELECT bf_agg(id::float8, 40000, 0.01) AS v FROM ag;
CREATE TABLE r_small AS SELECT bf_agg(small, 40000, 0.01) AS v FROM ag;
SQL
check "pushed-down results are the single node's bytes; a polymorphic form's gathered rows too" "t|t|t|t|t|t|t" \
	"SELECT concat_ws('|', (SELECT v FROM r_sized) = (SELECT bf_agg(k, 40000, 0.01) FROM ag_local),
		(SELECT v FROM r_auto) = (SELECT bf_agg(k) FROM ag_local),
		(SELECT v FROM r_uni) = (SELECT bf_union_agg(f) FROM ag_f_local),
		(SELECT v FROM r_inter) = (SELECT bf_intersect_agg(f) FROM ag_f_local),
		(SELECT v FROM r_win) = (SELECT bf_window_agg(k, at, '1 day', 40000) FROM ag_local),
		(SELECT v FROM r_gathered) = (SELECT bf_agg(id::float8, 40000, 0.01) FROM ag_local),
		(SELECT v FROM r_small) = (SELECT bf_agg(small, 40000, 0.01) FROM ag_local))"

echo "-- bf_sync_into with a distributed source table"
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE src (id bigint, grp int, v text);
SELECT create_distributed_table('src', 'id');
CREATE TABLE tgt (grp int PRIMARY KEY, f bloomfilter);
SELECT create_reference_table('tgt');
INSERT INTO tgt SELECT g, NULL FROM generate_series(1, 3) g;
SQL
sync_trigger="CREATE TRIGGER s AFTER INSERT ON src REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bf_sync_into('tgt', 'grp', 'f', 'grp', 'v', '1000', '0.01')"
# (Citus's own error, without a SQLSTATE of its own: XX000)
check_error "its trigger is refused by Citus" XX000 "$sync_trigger"
check_error "forced (citus.enable_unsafe_triggers), a write fails rather than miss a key" 0A000 \
	"SET citus.enable_unsafe_triggers = on;
$sync_trigger;
INSERT INTO src VALUES (1, 1, 'a');"
check "and the write is not kept" 0 "SELECT count(*) FROM src"

echo "-- rights and bad input"
check_error "no SELECT on the column: refused" 42501 \
	"SET ROLE bf_citus_nobody; SELECT bf_index_contains('d_email_bf', 'x'::text)"
check_error "bf_shard_might_contain on the distributed table itself: refused" 0A000 \
	"SELECT bf_shard_might_contain('d'::regclass, '{email}', 'x'::text)"
check "bf_tracked as a role without rights: no row of the distributed tables, no error" 0 \
	"SET ROLE bf_citus_nobody; SELECT count(*) FROM bf_tracked"
check_error "bf_index_info without SELECT on the column: refused" 42501 \
	"SET ROLE bf_citus_nobody; SELECT * FROM bf_index_info('d_email_bf')"
check_error "a shard's index named on the coordinator: no such relation" 42P01 \
	"SELECT bf_index_contains(('d_email_bf_' || min(shardid))::regclass, 'x'::text) FROM pg_dist_shard WHERE logicalrelid = 'd'::regclass"
# on a worker, the shard's own index answers for the shard's rows
shard="$(cpsql 0 -At -c "SELECT s.shardid FROM citus_shards s WHERE s.table_name = 'd'::regclass AND s.nodeport = ${CITUS_PORTS[1]} ORDER BY 1 LIMIT 1")"
key="$(cpsql 1 -At -c "SELECT email FROM d_$shard LIMIT 1")"
check_on 1 "on its worker, a shard's index answers for the shard's rows" "true|false" \
	"SELECT bf_index_contains('d_email_bf_$shard', '$key'::text) || '|' || bf_index_contains('d_email_bf_$shard', 'absent@example.org'::text)"
cpsql 0 >/dev/null <<'SQL'
CREATE TABLE gone (id bigint, k text);
SELECT create_distributed_table('gone', 'id', shard_count => 4);
INSERT INTO gone SELECT g, 'g' || g FROM generate_series(1, 100) g;
CREATE INDEX gone_k_bf ON gone USING bloomfilter (k);
SQL
gshard="$(cpsql 0 -At -c "SELECT s.shardid FROM citus_shards s WHERE s.table_name = 'gone'::regclass AND s.nodeport = ${CITUS_PORTS[1]} ORDER BY 1 LIMIT 1")"
cpsql 1 -c "SET citus.enable_manual_changes_to_shards = on" -c "DROP TABLE gone_$gshard" >/dev/null
check_error "a shard dropped on its worker: a lookup fails, no answer" 42P01 \
	"SELECT bf_index_contains('gone_k_bf', 'g1'::text)"
check_error "and bf_index_info fails, no estimate" 08000 \
	"SELECT * FROM bf_index_info('gone_k_bf')"
citus_stop_node 2
check_error "a worker down: an error, not an answer" 08006 \
	"SELECT bf_index_contains('d_email_bf', 'user1@example.com'::text)"
citus_start_node 2

echo "citus: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
