#!/usr/bin/env bash
# bench/citus.sh -- tables distributed by Citus, on a coordinator and two
# workers of this machine (test/lib/citus.sh; Citus must be installed).
#
#   make install && bash bench/citus.sh
#
# Rows (printed as "name | value | note"):
#   1. one bf_might_contain per statement, absent key, pgbench -M prepared,
#      1 client: a tracked column of a table distributed over SHARDS shards
#      (another column than the distribution column; and the distribution
#      column) against the same tracked column of a local table on the
#      coordinator (targets: <= 3 x and <= 2 x); and what a statement costs
#      through Citus without the extension, the floor of any lookup that
#      sees the transaction's writes: a router query for an absent id (one
#      shard), and a btree lookup of an absent email on every shard
#   2. the rate of bf_track(fpr => 0.01) over KEYS absent keys with 32
#      shards (target <= 1.1 %): each shard's index is probed on its own
#      node for every key, and a key is a false positive when any shard
#      says "maybe", exactly what a lookup does; and the bytes of the
#      shards' indexes (bf_index_size) against one index of the whole
#      column at that rate, for 32 and 64 shards (target <= 2 x)
#   3. bf_agg(k, capacity, fpr) over AGG_ROWS rows of a distributed table:
#      partial aggregates on the workers against every row gathered on the
#      coordinator (target <= 0.5 x), and the bytes the workers send
#
# ROWS (default 1 000 000), SHARDS (32), KEYS (1 000 000), AGG_ROWS
# (2 000 000), SECS (10): pgbench duration per round, best of 3 rounds;
# PARTS (default "1 2 3"): which rows to measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/citus.sh
citus_available || exit 77

ROWS="${ROWS:-1000000}"
SHARDS="${SHARDS:-32}"
KEYS="${KEYS:-1000000}"
AGG_ROWS="${AGG_ROWS:-2000000}"
SECS="${SECS:-10}"
PARTS="${PARTS:-1 2 3}"
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
citus_start "${CG_PORT:-57740}"
work="$CITUS_DIR/bench"
mkdir -p "$work"
chmod 777 "$work"

part 1 && cpsql 0 >/dev/null <<SQL
SET citus.shard_count = $SHARDS;
CREATE TABLE local_users (id bigint, email text);
INSERT INTO local_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $ROWS) g;
SELECT bf_track('local_users', 'email', $((ROWS * 2)), 0.01);
CREATE TABLE dist_users (id bigint, email text);
SELECT create_distributed_table('dist_users', 'id');
INSERT INTO dist_users SELECT * FROM local_users;
SELECT bf_track('dist_users', 'email', $((ROWS * 2)), 0.01);
SELECT bf_track('dist_users', 'id', $((ROWS * 2)), 0.01);
CREATE INDEX dist_users_email ON dist_users (email);
VACUUM ANALYZE local_users;
SQL

# ---- 1. one lookup per statement ----
tps() { # tps SQL -> transactions per second, best of 3 rounds of SECS
	local best=0 t
	printf '\\set k random(1000000001, 2000000000)\n%s\n' "$1" >"$work/s.sql"
	for _ in 1 2 3; do
		t="$(pgbench -n -M prepared -T "$SECS" -c 1 -h 127.0.0.1 -p "${CITUS_PORTS[0]}" -U postgres \
			-f "$work/s.sql" postgres 2>/dev/null | awk '/^tps = / { print $3 }')"
		best="$(awk -v a="$best" -v b="$t" 'BEGIN { print (b > a ? b : a) }')"
	done
	echo "$best"
}
if part 1; then
local_tps="$(tps "SELECT bf_might_contain('local_users', 'email', :k || '@absent.example.org');")"
other_tps="$(tps "SELECT bf_might_contain('dist_users', 'email', :k || '@absent.example.org');")"
dist_tps="$(tps "SELECT bf_might_contain('dist_users', 'id', :k::bigint);")"
echo "1. bf_might_contain per statement, distributed ($SHARDS shards), another column / local | $(ratio "$local_tps" "$other_tps") x the time | tps: local $local_tps, distributed $other_tps (target <= 3)"
echo "1. bf_might_contain per statement, distributed ($SHARDS shards), distribution column / local | $(ratio "$local_tps" "$dist_tps") x the time | tps: local $local_tps, distributed $dist_tps (target <= 2)"
router_tps="$(tps "SELECT 1 FROM dist_users WHERE id = :k;")"
btree_tps="$(tps "SELECT 1 FROM dist_users WHERE email = :k || '@absent.example.org' LIMIT 1;")"
echo "1. floor: a Citus router query (absent id, no extension) / local bf_might_contain | $(ratio "$local_tps" "$router_tps") x the time | tps $router_tps"
echo "1. floor: a btree lookup on every shard (absent email, no extension) / local bf_might_contain | $(ratio "$local_tps" "$btree_tps") x the time | tps $btree_tps"
fi

# ---- 2. the rate across 32 shards ----
if part 2; then
cpsql 0 >/dev/null <<SQL
CREATE TABLE rate32 (id bigint, k text);
SELECT create_distributed_table('rate32', 'id', shard_count => 32);
INSERT INTO rate32 SELECT g, 'k' || g FROM generate_series(1, $ROWS) g;
SELECT bf_track('rate32', 'k', $ROWS, 0.01);
SQL
: >"$work/positives"
while IFS='|' read -r port index; do
	n=$(( port == ${CITUS_PORTS[1]} ? 1 : 2 ))
	cpsql "$n" -At -c "SELECT g FROM generate_series(1, $KEYS) g WHERE bf_index_contains('$index'::regclass, 'absent' || g)" >>"$work/positives"
done < <(cpsql 0 -At -c "SELECT s.nodeport, i.relname || '_' || s.shardid
	FROM citus_shards s, pg_class i, pg_index x
	WHERE s.table_name = 'rate32'::regclass AND x.indrelid = 'rate32'::regclass
	  AND i.oid = x.indexrelid")
fp="$(sort -u "$work/positives" | wc -l)"
echo "2. rate of bf_track(fpr 0.01) over $KEYS absent keys, 32 shards | $(awk -v a="$fp" -v b="$KEYS" 'BEGIN { printf "%.3f %%", 100 * a / b }') | $fp false positives (target <= 1.1 %)"
cpsql 0 >/dev/null <<SQL
CREATE TABLE rate64 (id bigint, k text);
SELECT create_distributed_table('rate64', 'id', shard_count => 64);
INSERT INTO rate64 SELECT id, k FROM rate32;
SELECT bf_track('rate64', 'k', $ROWS, 0.01);
CREATE TABLE rate_local (id bigint, k text);
INSERT INTO rate_local SELECT id, k FROM rate32;
SELECT bf_track('rate_local', 'k', $ROWS, 0.01);
SQL
for t in rate32 rate64; do
	read -r dist one dbits obits < <(cpsql 0 -At -F ' ' -c "SELECT bf_index_size(bf_track_index('$t', 'k')), bf_index_size(bf_track_index('rate_local', 'k')),
		(SELECT nbits FROM bf_index_info(bf_track_index('$t', 'k'))), (SELECT nbits FROM bf_index_info(bf_track_index('rate_local', 'k')))")
	echo "2. bits of bf_track($ROWS, 0.01) on ${t#rate} shards / one filter of the whole column | $(ratio "$dbits" "$obits") | bits: shards $dbits, one filter $obits (target <= 2)"
	echo "2. bytes on disk of those indexes / one local index | $(ratio "$dist" "$one") | bytes: shards $dist, local $one (each shard's index has its own metapage and last page)"
done
fi

# ---- 3. bf_agg pushed down ----
part 3 || exit 0
cpsql 0 >/dev/null <<SQL
CREATE TABLE agg_rows (id bigint, k text);
SELECT create_distributed_table('agg_rows', 'id', shard_count => 2);
INSERT INTO agg_rows SELECT g, 'k' || g FROM generate_series(1, $AGG_ROWS) g;
VACUUM ANALYZE agg_rows;
SQL
ms() { # ms SQL -> best of 3, milliseconds
	cpsql 0 -At -c '\timing on' -c "$1" -c "$1" -c "$1" 2>&1 |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -g | head -1
}
pushed="$(ms "SELECT bf_cardinality(bf_agg(k, $AGG_ROWS, 0.01)) FROM agg_rows")"
gathered="$(ms "SELECT bf_cardinality(bf_agg(k, $AGG_ROWS, 0.01)) FROM (SELECT k FROM agg_rows OFFSET 0) s")"
# each shard's partial state as its worker makes it for the coordinator
# (EXPLAIN ANALYZE cannot show those bytes): Citus 13 runs worker_partial_agg,
# which sends the state in its type's text form (base64 for a bloomfilter);
# Citus 14 runs worker_binary_partial_agg for a state type with send and
# receive functions, a bytea of the type's binary form (bloomfilter_send:
# the filter's bytes), which goes as it is with citus.enable_binary_protocol
# (the default) and as hex text (2 + 2 x the bytes) without
plan="$(cpsql 0 -At -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT bf_agg(k, $AGG_ROWS, 0.01) FROM agg_rows")"
args="'bf_agg(text,bigint,double precision)'::regprocedure, ROW(k, $AGG_ROWS::bigint, 0.01::float8)"
if grep -q 'worker_binary_partial_agg(' <<<"$plan"; then
	if [ "$(cpsql 0 -At -c "SHOW citus.enable_binary_protocol")" = on ]; then
		form="binary"
		state="octet_length(pg_catalog.worker_binary_partial_agg($args))"
	else
		form="bytea as hex text"
		state="2 + 2 * octet_length(pg_catalog.worker_binary_partial_agg($args))"
	fi
elif grep -q 'worker_partial_agg(' <<<"$plan"; then
	form="text"
	state="octet_length(pg_catalog.worker_partial_agg($args)::text)"
else
	echo "3. bytes the workers send for bf_agg | - | not run in parts on the workers"
	exit 1
fi
sizes="$(cpsql 0 -At -c "SELECT result FROM run_command_on_shards('agg_rows', \$\$SELECT $state FROM %s\$\$) ORDER BY shardid")"
grep -qvE '^[0-9]+$' <<<"$sizes" && { echo "3. bytes the workers send for bf_agg | - | a shard failed: $sizes"; exit 1; }
shards="$(wc -l <<<"$sizes")"
sent="$(awk '{ s += $1 } END { print s }' <<<"$sizes")"
one="$(cpsql 0 -At -c "SELECT octet_length(bf_create($AGG_ROWS, 0.01)::bytea)")"
echo "3. bf_agg over $AGG_ROWS rows on 2 workers, pushed down / rows gathered | $(ratio "$pushed" "$gathered") | ms: pushed $pushed, gathered $gathered (target <= 0.5)"
echo "3. bytes the workers send for bf_agg, / $shards filters | $(ratio "$sent" "$((one * shards))") | $shards states in $form form, $(tr '\n' ' ' <<<"$sizes")bytes; a filter is $one bytes (target <= 1.1)"
