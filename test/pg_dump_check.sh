#!/bin/bash
# pg_dump / pg_restore of a database holding bloomfilter values: every
# filter must come back with the same text form (the same bytes, but for the
# type OID of a non-portable filter) and the same answers, including enum
# filters (hashed by label, so new enum OIDs do not matter) and non-portable
# filters (the text form names the type), and a filter whose type was
# dropped must make pg_dump fail rather than write a dump that cannot load.  Runs inside
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
CREATE SCHEMA "odd schema";
CREATE TYPE "odd schema"."span (days)" AS RANGE (subtype = int4);
CREATE TABLE filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO filters VALUES
	(1, bf_add_all(bf_create(1000), ARRAY(SELECT generate_series(1, 500)))),
	(2, bf_add_all(bf_create(1000, 0.001, 42), ARRAY['alice', 'bob', 'carol'])),
	(3, bf_add_all(bf_create(100), ARRAY['red', 'blue']::colour[])),
	(4, bf_add(bf_create(100), '10.1.2.3'::inet)),
	(5, bf_add(bf_create(100), ROW(7, 'sports'::text))),
	(6, bf_create_sized(4096, 3)),
	(7, bf_add_all(bf_create(300000), ARRAY(SELECT generate_series(1, 200000)))),  -- TOASTed
	-- non-portable types whose printed names have spaces, brackets, quotes
	(8, bf_add(bf_create(100), '10:30'::time)),
	(9, bf_add(bf_create(100), '10:30+02'::timetz)),
	(10, bf_add(bf_create(100), ARRAY[1.5, 2.5]::float8[])),
	(11, bf_add(bf_create(100), ARRAY['a', 'b']::varchar[])),
	(12, bf_add(bf_create(100), ARRAY['ab']::char(2)[])),
	(13, bf_add(bf_create(100), '[1,5)'::"odd schema"."span (days)")),
	(14, bf_add(bf_create(100), ROW(1, '10:30'::time))),
	-- growing filters: grown through layers, and of a non-portable type
	(15, bf_add_all(bf_create_growing(100), ARRAY(SELECT generate_series(1, 5000)))),
	(16, bf_add_all(bf_create_growing(2), ARRAY['10:30'::time, '11:30', '12:30', '13:30']));
SQL
psql_q -d $src -c "SELECT id, md5(f::text) FROM filters ORDER BY id" > $dump.before
pg_dump -Fc -f $dump $src || exit 1
# shift OIDs: objects created in the target before the restore
psql_q -d $dst -c "CREATE TYPE unrelated AS ENUM ('x', 'y', 'z'); DROP TYPE unrelated;" >/dev/null
pg_restore -d $dst $dump || { echo "FAIL pg_restore"; failed=$((failed + 1)); }
psql_q -d $dst -c "SELECT id, md5(f::text) FROM filters ORDER BY id" > $dump.after

check "same rows" "$(wc -l < $dump.after)" "16"
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
check "time" "$(psql_q -d $dst -c "SELECT bf_contains(f, '10:30'::time) FROM filters WHERE id = 8")" "t"
check "timetz" "$(psql_q -d $dst -c "SELECT bf_contains(f, '10:30+02'::timetz) FROM filters WHERE id = 9")" "t"
check "float8[]" "$(psql_q -d $dst -c "SELECT bf_contains(f, ARRAY[1.5, 2.5]::float8[]) FROM filters WHERE id = 10")" "t"
check "varchar[]" "$(psql_q -d $dst -c "SELECT bf_contains(f, ARRAY['a', 'b']::varchar[]) FROM filters WHERE id = 11")" "t"
check "bpchar[]" "$(psql_q -d $dst -c "SELECT bf_contains(f, ARRAY['ab']::bpchar[]) FROM filters WHERE id = 12")" "t"
check "odd type name" "$(psql_q -d $dst -c "SELECT bf_contains(f, '[1,5)'::\"odd schema\".\"span (days)\") FROM filters WHERE id = 13")" "t"
check "record with a non-portable field" "$(psql_q -d $dst -c "SELECT bf_contains(f, ROW(1, '10:30'::time)) FROM filters WHERE id = 14")" "t"
check "growing" "$(psql_q -d $dst -c "SELECT count(*) FROM bf_layers((SELECT f FROM filters WHERE id = 15)) HAVING bool_and(bf_contains_all((SELECT f FROM filters WHERE id = 15), ARRAY(SELECT generate_series(1, 5000))))")" "6"
check "growing, non-portable" "$(psql_q -d $dst -c "SELECT bf_contains(f, '13:30'::time) AND (SELECT count(*) FROM bf_layers(f)) = 2 FROM filters WHERE id = 16")" "t"

# a filter of a dropped non-portable type has no text form that could be
# read back: pg_dump must fail with a clear error, not write a dump that
# cannot be restored (and lose the portable filters next to it)
dropdb $src
createdb $src || exit 1
psql_q -d $src <<'SQL' || exit 1
CREATE EXTENSION bloomfilter;
CREATE TYPE doomed AS RANGE (subtype = int8);
CREATE TABLE filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO filters VALUES (1, bf_add(bf_create(10), 1)), (2, bf_add(bf_create(10), '[1,2)'::doomed));
DROP TYPE doomed;
SQL
out=$(pg_dump -Fc -f $dump $src 2>&1)
check "pg_dump refuses a dropped type" "$?" "1"
check "with a clear error" "$(echo "$out" | grep -c 'cannot output a bloomfilter whose element type no longer exists')" "1"

dropdb $src; dropdb $dst
rm -f $dump $dump.before $dump.after
echo "pg_dump: $passed passed, $failed failed"
[ $failed -eq 0 ]
