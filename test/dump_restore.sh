#!/bin/bash
# test/dump_restore.sh -- tracked filters survive pg_dump -Fc / pg_restore.
#
# Run inside a throwaway cluster (test/run-all.sh: pg_virtualenv bash
# test/dump_restore.sh).  Builds a database with tracked columns (a plain
# table with a dropped column, so attribute numbers differ after the restore;
# a renamed tracked column; a partitioned table), dumps it, restores it into
# a new database and checks that: the restore runs without error; the
# registry rows, filters and triggers came back; every value reports
# present; new writes (via the parent and directly into a partition) still
# sync; a RENAME COLUMN after the restore is still followed.
set -euo pipefail

src=bf_dump_src
dst=bf_dump_dst
work="$(mktemp -d /tmp/bf-dump.XXXXXX)"
trap 'rm -rf "$work"' EXIT
fails=0

q() { psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }
check() {
	# check NAME DB SQL EXPECTED
	local got
	got="$(q "$2" "$3")"
	if [ "$got" = "$4" ]; then
		echo "ok: $1"
	else
		echo "FAILED: $1: expected '$4', got '$got'"
		fails=$((fails + 1))
	fi
}

dropdb --if-exists "$src" >/dev/null 2>&1 || true
dropdb --if-exists "$dst" >/dev/null 2>&1 || true
createdb "$src"
psql -X -q -v ON_ERROR_STOP=1 -d "$src" >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION bloomfilter;
CREATE SCHEMA app;
CREATE TABLE app.t (pad int, id bigint, name text);
ALTER TABLE app.t DROP COLUMN pad;
INSERT INTO app.t SELECT g, 'n' || g FROM generate_series(1, 5000) g;
SELECT bf_track('app.t', 'id', method => 'trigger');
SELECT bf_track('app.t', 'name', 20000, 0.001, method => 'trigger');
ALTER TABLE app.t RENAME COLUMN name TO label;
ALTER TABLE app.t ADD PRIMARY KEY (id);
INSERT INTO app.t VALUES (6000, 'after');
DELETE FROM app.t WHERE id <= 10;
CREATE TABLE p (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (1000);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (1000) TO (2000);
INSERT INTO p SELECT g FROM generate_series(1, 1999, 7) g;
SELECT bf_track('p', 'k', method => 'trigger');
SQL

registry_sql="SELECT string_agg(format('%s.%s %s %s %s %s %s', tbl, col, method, capacity, fpr,
	deleted_since_rebuild, md5(filter::bytea)), ', ' ORDER BY tbl::text, col) FROM bf_registry"
triggers_sql="SELECT string_agg(format('%s:%s', tgrelid::regclass, tgname), ' ' ORDER BY tgrelid::regclass::text, tgname)
	FROM pg_trigger WHERE tgname LIKE 'bf\_sync\_%'"
before_registry="$(q "$src" "$registry_sql")"
before_triggers="$(q "$src" "$triggers_sql")"

pg_dump -Fc -f "$work/db.dump" "$src"
createdb "$dst"
if pg_restore --exit-on-error -d "$dst" "$work/db.dump" 2>"$work/restore.err"; then
	echo "ok: pg_restore without errors"
else
	echo "FAILED: pg_restore:"; cat "$work/restore.err"
	fails=$((fails + 1))
fi

check "registry rows and filters restored" "$dst" "$registry_sql" "$before_registry"
check "triggers restored, no duplicates" "$dst" "$triggers_sql" "$before_triggers"
check "bf_tracked after restore" "$dst" \
	"SELECT string_agg(tbl || '.' || col, ' ' ORDER BY tbl::text, col) FROM bf_tracked" \
	"app.t.id app.t.label p.k"
check "no false negatives (id)" "$dst" \
	"SELECT count(*) FROM app.t WHERE NOT bf_might_contain('app.t', 'id', id)" "0"
check "no false negatives (renamed label)" "$dst" \
	"SELECT count(*) FROM app.t WHERE NOT bf_might_contain('app.t', 'label', label)" "0"
check "no false negatives (partitioned)" "$dst" \
	"SELECT count(*) FROM p WHERE NOT bf_might_contain('p', 'k', k)" "0"
check "absent value" "$dst" "SELECT bf_might_contain('app.t', 'id', 123456789)" "f"

q "$dst" "INSERT INTO app.t VALUES (7000, 'new')" >/dev/null
q "$dst" "INSERT INTO p VALUES (1500)" >/dev/null
q "$dst" "INSERT INTO p1 VALUES (999)" >/dev/null
check "new rows sync after restore" "$dst" \
	"SELECT bf_might_contain('app.t', 'id', 7000) AND bf_might_contain('app.t', 'label', 'new')
	    AND bf_might_contain('p', 'k', 1500) AND bf_might_contain('p', 'k', 999)" "t"

# attribute numbers differ here (no dropped column): renames must still follow
q "$dst" "ALTER TABLE app.t RENAME COLUMN label TO label2" >/dev/null
check "rename after restore followed" "$dst" \
	"SELECT string_agg(col, ' ' ORDER BY col) FROM bf_tracked WHERE tbl = 'app.t'::regclass" "id label2"
q "$dst" "INSERT INTO app.t VALUES (7001, 'newer')" >/dev/null
check "sync after rename" "$dst" "SELECT bf_might_contain('app.t', 'label2', 'newer')" "t"
check "partitions keep one trigger set each" "$dst" \
	"SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'bf\_sync\_%' AND tgrelid IN ('p'::regclass, 'p1'::regclass, 'p2'::regclass)" "12"

dropdb "$src"
dropdb "$dst"
if [ "$fails" -ne 0 ]; then
	echo "dump_restore: $fails check(s) failed"
	exit 1
fi
echo "dump_restore: all checks passed"
