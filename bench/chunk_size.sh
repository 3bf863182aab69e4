#!/usr/bin/env bash
# bench/chunk_size.sh -- how the chunk size of the trigger method's filters
# (BF_TRACK_CHUNK_BYTES, src/track/bf_track.h) trades WAL against throughput.
#
#   bash bench/chunk_size.sh [SIZES...]      (default: 128 256 1024)
#
# For each size: builds and installs the library with that size, makes a
# throwaway cluster (pg_virtualenv), tracks a 100 000-row table of text keys
# with each method (capacity 1 M), and prints the steady WAL per single-row
# INSERT (5 000 after a warm-up, no checkpoint between), three 4-client
# pgbench rounds of 4 s, and the chunk table's size.  Reinstalls the
# default build at the end.  On the shared machine run it under
# flock /tmp/bf-install.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
inner="$(mktemp /tmp/bf-chunk-size.XXXXXX)"
trap 'rm -f "$inner"' EXIT
cat >"$inner" <<'INNER'
set -euo pipefail
q() { psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"; }
w="$(mktemp -d)"
q "CREATE EXTENSION bloomfilter"
for t in t i; do
	m=$([ $t = t ] && echo trigger || echo index)
	q "CREATE TABLE ck_$t (k text); INSERT INTO ck_$t SELECT md5(g::text) FROM generate_series(1, 100000) g;
	   SELECT bf_track('ck_$t', 'k', 1000000, method => '$m')" >/dev/null
	printf '\\set k random(1, 1000000000000)\nINSERT INTO ck_%s VALUES (md5(:k::text));\n' $t >"$w/$t.sql"
	pgbench -n -M prepared -T 3 -c 4 -j 4 -f "$w/$t.sql" >/dev/null 2>&1
done
for t in t i; do
	a=$(q "SELECT pg_current_wal_insert_lsn()")
	pgbench -n -M prepared -t 5000 -c 1 -f "$w/$t.sql" >/dev/null 2>&1
	echo "wal per insert ($t): $(q "SELECT round(pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$a') / 5000)")"
done
for t in t i; do
	echo "4-client tps ($t): $(for r in 1 2 3; do pgbench -n -M prepared -T 4 -c 4 -j 4 -f "$w/$t.sql" 2>/dev/null | awk '/^tps/ { printf "%d ", $3 }'; done)"
done
echo "chunk table: $(q "SELECT pg_total_relation_size('bf_registry_chunk')") bytes"
INNER
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(128 256 1024)
for size in "${sizes[@]}"; do
	make -s clean
	make -s install COPT="-DBF_TRACK_CHUNK_BYTES=$size" >/dev/null
	echo "== chunks of $size bytes"
	pg_virtualenv -o synchronous_commit=off -o shared_buffers=1GB -o max_wal_size=8GB \
		-o checkpoint_timeout=1h -o autovacuum=off bash "$inner" 2>/dev/null
done
make -s clean
make -s install >/dev/null
