#!/usr/bin/env bash
# bench/contains_callgrind.sh -- instructions per call of bf_contains on
# bigint keys in a scan, against PostgreSQL's own hashint8 on the same keys,
# counted by valgrind --tool=callgrind (counts do not depend on the
# machine's load).
#
#   make install && bash bench/contains_callgrind.sh
#
# Makes a throwaway cluster in a temporary directory (as user postgres when
# run as root) with ROWS (default 200 000) bigint keys and a stored filter
# (capacity ROWS at 1 %, the odd keys added), stops it, then runs a
# single-user backend under callgrind on
#   SELECT count(*) FROM cg_keys WHERE bf_contains((SELECT f FROM cg_f), k * 2);
#   SELECT count(*) FROM cg_keys WHERE hashint8(k * 2) = 0;
# (and the same with keys that are all in the filter, and hashint8 of the
# keys) and prints each function's inclusive instructions divided by its
# calls: the work of one call, without the executor around it.
#
# Output: "hashint8 <n>", then "bf_contains_absent <n> <ratio to hashint8>",
# "bf_contains_present <n> <ratio>" and "bf_contains_inline <n> <ratio>" (a
# small filter stored in line, capacity 1 000, from a subquery: absent keys
# but for its false positives and the 1 000 keys it holds).
set -euo pipefail

ROWS="${ROWS:-200000}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5797}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_keys AS SELECT g::bigint AS k FROM generate_series(1, $ROWS) g;
CREATE TABLE cg_f AS
	SELECT bf_add_all(bf_create($ROWS, 0.01), ARRAY(SELECT g * 2 - 1 FROM generate_series(1::bigint, $ROWS) g)) AS f;
CREATE TABLE cg_small AS
	SELECT bf_add_all(bf_create(1000, 0.01), ARRAY(SELECT g * 2 - 1 FROM generate_series(1::bigint, 1000) g)) AS f;
VACUUM ANALYZE cg_keys;
SQL
cg_stop

# inclusive cost of function $2 in callgrind output $1
incl() {
	callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
		awk -v f="$2" '($0 ~ ("[:]" f " ") || $0 ~ ("[:]" f "$") || $0 ~ ("[:]" f "\\[")) && !done { gsub(",", "", $1); print $1; done = 1 }'
}
# run NAME WHERE: one single-user session scanning every key with WHERE
run() {
	printf '%s\n' "SET max_parallel_workers_per_gather = 0" "SET jit = off" \
		"SELECT count(*) FROM cg_keys WHERE $2" >"$dir/$1.sql"
	cg_run "$dir/$1.out" <"$dir/$1.sql"
}
# the filter holds the odd keys: k * 2 - 1 is always in it, k * 2 never
# (but for its ~1 % false positives)
run absent "bf_contains((SELECT f FROM cg_f), k * 2)"
run present "bf_contains((SELECT f FROM cg_f), k * 2 - 1)"
# a small filter (1.2 kB, stored in line, not TOASTed) from a subquery
run inline "bf_contains((SELECT f FROM cg_small), k * 2)"
run hash "hashint8(k * 2) = 0"
h="$(incl "$dir/hash.out" hashint8)"
echo "hashint8 $((h / ROWS))"
for w in absent present inline; do
	bf="$(incl "$dir/$w.out" bf_contains)"
	echo "bf_contains_$w $((bf / ROWS)) $(awk -v a="$bf" -v b="$h" 'BEGIN { printf "%.2f", a / b }')"
done
