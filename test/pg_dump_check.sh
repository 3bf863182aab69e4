#!/bin/bash
# pg_dump / pg_restore of a database holding bloomfilter values: every
# filter must come back with the same bytes and the same answers, including
# enum filters (hashed by label, so new enum OIDs do not matter) and a
# non-portable filter (its text form names the type).  Runs inside
# pg_virtualenv (libpq environment set); prints "pg_dump: N passed, M failed".
set -uo pipefail
src=bf_dump_src
dst=bf_dump_dst
dump=$(mktemp /tmp/bf_dump.XXXXXX)
passed=0
failed=0
check() {
	if [ "$2" = "$3" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1: got '$2', want '$3'"; fi
}
psql_q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

dropdb --if-exists $src; dropdb --if-exists $dst
createdb $src && createdb $dst || exit 1
psql_q -d $src <<'SQL' || exit 1
CREATE EXTENSION bloomfilter;
-- an enum created after other types, so that its OIDs differ after restore
CREATE TYPE colour AS ENUM ('red', 'green', 'blue');
CREATE TABLE filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO filters VALUES
	(1, bf_add_all(bf_create(1000), ARRAY(SELECT generate_series(1, 500)))),
	(2, bf_add_all(bf_create(1000, 0.001, 42), ARRAY['alice', 'bob', 'carol'])),
	(3, bf_add_all(bf_create(100), ARRAY['red', 'blue']::colour[])),
	(4, bf_add(bf_create(100), '10.1.2.3'::inet)),
	(5, bf_add(bf_create(100), ROW(7, 'sports'::text))),
	(6, bf_create_sized(4096, 3)),
	(7, bf_add_all(bf_create(300000), ARRAY(SELECT generate_series(1, 200000))));  -- TOASTed
SQL
psql_q -d $src -c "SELECT id, md5(f::bytea) FROM filters ORDER BY id" > $dump.before
pg_dump -Fc -f $dump $src || exit 1
# shift OIDs: objects created in the target before the restore
psql_q -d $dst -c "CREATE TYPE unrelated AS ENUM ('x', 'y', 'z'); DROP TYPE unrelated;" >/dev/null
pg_restore -d $dst $dump || { echo "FAIL pg_restore"; failed=$((failed + 1)); }
psql_q -d $dst -c "SELECT id, md5(f::bytea) FROM filters ORDER BY id" > $dump.after

check "same rows" "$(wc -l < $dump.after)" "7"
while read -r line; do
	id=${line%%|*}
	check "bytes of filter $id" "$(grep "^$id|" $dump.after)" "$line"
done < $dump.before
check "integers" "$(psql_q -d $dst -c "SELECT bf_contains_all(f, ARRAY(SELECT generate_series(1, 500))) FROM filters WHERE id = 1")" "t"
check "text" "$(psql_q -d $dst -c "SELECT bf_contains(f, 'carol') AND NOT bf_contains(f, 'mallory') FROM filters WHERE id = 2")" "t"
check "enum by label" "$(psql_q -d $dst -c "SELECT bf_contains(f, 'red'::colour) AND bf_contains(f, 'blue'::colour) AND NOT bf_contains(f, 'green'::colour) FROM filters WHERE id = 3")" "t"
check "non-portable inet" "$(psql_q -d $dst -c "SELECT bf_contains(f, '10.1.2.3'::inet) FROM filters WHERE id = 4")" "t"
check "record" "$(psql_q -d $dst -c "SELECT bf_contains(f, ROW(7, 'sports'::text)) FROM filters WHERE id = 5")" "t"
check "toasted" "$(psql_q -d $dst -c "SELECT count(*) FROM generate_series(1, 200000) g WHERE bf_contains((SELECT f FROM filters WHERE id = 7), g)")" "200000"

dropdb $src; dropdb $dst
rm -f $dump $dump.before $dump.after
echo "pg_dump: $passed passed, $failed failed"
[ $failed -eq 0 ]
