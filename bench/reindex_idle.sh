#!/usr/bin/env bash
# bench/reindex_idle.sh -- REINDEX INDEX against REINDEX INDEX CONCURRENTLY
# of a bloomfilter index on a table of ROWS (default 10 000 000) bigint
# keys, with nothing else running (the 64-rebuild scenario runs the online
# one under a load of inserts and lookups): three rounds, wall time of
# each command, and a bare count(*) of the table for scale.
#
#   make install && flock /tmp/bf-install.lock pg_virtualenv -o shared_buffers=1GB \
#       -o fsync=off bash bench/reindex_idle.sh
set -euo pipefail
ROWS="${ROWS:-10000000}"
psql -q -X <<SQL
CREATE EXTENSION IF NOT EXISTS bloomfilter;
DROP TABLE IF EXISTS rix;
CREATE TABLE rix (k bigint);
INSERT INTO rix SELECT g FROM generate_series(1, $ROWS) g;
CREATE INDEX rix_bf ON rix USING bloomfilter (k) WITH (capacity = $ROWS, fpr = 0.01);
VACUUM ANALYZE rix;
CHECKPOINT;
SQL
for _ in 1 2 3; do
	for cmd in "REINDEX INDEX rix_bf" "REINDEX INDEX CONCURRENTLY rix_bf" "SELECT count(*) FROM rix"; do
		t0=$(date +%s%N)
		psql -q -X -c "$cmd" >/dev/null
		echo "$cmd: $((($(date +%s%N) - t0) / 1000000)) ms"
	done
done
psql -q -X -c "DROP TABLE rix"
