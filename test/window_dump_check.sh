#!/bin/bash
# pg_dump / pg_restore of a database holding bloomwindow values: every
# window must come back with the same bytes and the same answers at the
# same times, including one of enum keys (hashed by label) and a
# non-portable one (its text form names the type).  Runs inside
# pg_virtualenv; prints "window pg_dump: N passed, M failed".
set -uo pipefail
src=bf_window_dump_src
dst=bf_window_dump_dst
dump=$(mktemp /tmp/bf_window_dump.XXXXXX)
passed=0
failed=0
check() {
	if [ "$2" = "$3" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1: got '$2', want '$3'"; fi
}
psql_q() { PGOPTIONS="-c TimeZone=UTC" psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

dropdb --if-exists $src; dropdb --if-exists $dst
createdb $src && createdb $dst || exit 1
psql_q -d $src <<'SQL' || exit 1
CREATE EXTENSION bloomfilter;
CREATE TYPE colour AS ENUM ('red', 'green', 'blue');
CREATE TABLE windows (id int PRIMARY KEY, w bloomwindow);
INSERT INTO windows VALUES
	(1, bf_window_create('7 days', 1000)),
	(2, bf_window_add_all(bf_window_create('7 days', 1000, 0.001, 7, 42),
						  ARRAY(SELECT g FROM generate_series(1, 500) g), '2024-03-01')),
	(3, bf_window_add(bf_window_add(bf_window_create('1 day', 100), 'red'::colour, '2024-03-01'),
					  'blue'::colour, '2024-03-01 20:00')),
	(4, bf_window_add(bf_window_create('1 hour', 100, 0.01, 60), '10.1.2.3'::inet, '2024-03-01')),
	(5, bf_window_add(bf_window_create('30 days', 1000), ROW(7, 'sports'::text), '2024-03-01')),
	-- TOASTed: 9 slices of 200 000 keys
	(6, (SELECT bf_window_agg(g, timestamptz '2024-03-01' + g * interval '1 second', '8 days', 200000, 0.01, 8)
		 FROM generate_series(1, 400000) g));
SQL
psql_q -d $src -c "SELECT id, md5(w::bytea) FROM windows ORDER BY id" > $dump.before
pg_dump -Fc -f $dump $src || exit 1
# shift OIDs: objects created in the target before the restore
psql_q -d $dst -c "CREATE TYPE unrelated AS ENUM ('x', 'y', 'z'); DROP TYPE unrelated;" >/dev/null
pg_restore -d $dst $dump || { echo "FAIL pg_restore"; failed=$((failed + 1)); }
psql_q -d $dst -c "SELECT id, md5(w::bytea) FROM windows ORDER BY id" > $dump.after

check "same rows" "$(wc -l < $dump.after)" "6"
while read -r line; do
	id=${line%%|*}
	check "bytes of window $id" "$(grep "^$id|" $dump.after)" "$line"
done < $dump.before
check "integers" "$(psql_q -d $dst -c "SELECT bool_and(bf_window_contains(w, g, '2024-03-05')) FROM windows, generate_series(1, 500) g WHERE id = 2")" "t"
check "integers expire" "$(psql_q -d $dst -c "SELECT bool_or(bf_window_contains(w, g, '2024-03-09')) FROM windows, generate_series(1, 500) g WHERE id = 2")" "f"
check "enum by label" "$(psql_q -d $dst -c "SELECT bf_window_contains(w, 'red'::colour, '2024-03-01 21:00') AND bf_window_contains(w, 'blue'::colour, '2024-03-01 21:00') AND NOT bf_window_contains(w, 'green'::colour, '2024-03-01 21:00') FROM windows WHERE id = 3")" "t"
check "non-portable inet" "$(psql_q -d $dst -c "SELECT bf_window_contains(w, '10.1.2.3'::inet, '2024-03-01 00:30') FROM windows WHERE id = 4")" "t"
check "record" "$(psql_q -d $dst -c "SELECT bf_window_contains(w, ROW(7, 'sports'::text), '2024-03-20') FROM windows WHERE id = 5")" "t"
check "toasted" "$(psql_q -d $dst -c "SELECT bf_window_contains(w, 400000, '2024-03-10') AND NOT bf_window_contains(w, 1, '2024-03-10') FROM windows WHERE id = 6")" "t"
check "equal after restore" "$(psql_q -d $dst -c "SELECT (SELECT w FROM windows WHERE id = 2) = bf_window_add_all(bf_window_create('7 days', 1000, 0.001, 7, 42), ARRAY(SELECT g FROM generate_series(1, 500) g), '2024-03-01')")" "t"

dropdb $src; dropdb $dst
rm -f $dump $dump.before $dump.after
echo "window pg_dump: $passed passed, $failed failed"
[ $failed -eq 0 ]
