#!/usr/bin/env bash
# bench/stored_callgrind.sh -- instructions per statement of an absent-key
# probe against a stored 12 MB filter and against a stored 1 KB filter,
# one key per statement as applications ask, counted by valgrind
# --tool=callgrind (counts do not depend on the machine's load).
#
#   make install && bash bench/stored_callgrind.sh
#
# The filters are those of bench/scenarios/56-probes.sh (capacity 10 M and
# 800 at 1 %, 100 000 and 100 text keys).  A single-user backend runs
#   PREPARE p(text) AS SELECT bf_contains((SELECT f FROM cg_filters WHERE id = $ID), $1)
# and N EXECUTEs of absent keys, for N = N1 and N2; per statement =
# (N2 total - N1 total) / (N2 - N1), which leaves out the one-time work
# (the first statement's detoast).  CACHE=0 runs with
# bloomfilter.filter_cache_size = 0 (every statement detoasts).
#
# Output: "12mb <instructions>", "1kb <instructions>", "ratio <1kb/12mb>"
# (the throughput ratio 12 MB / 1 KB the instruction counts predict).
set -euo pipefail

N1="${N1:-100}"
N2="${N2:-600}"
CACHE="${CACHE:-64MB}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5796}"
cg_psql <<'SQL' >/dev/null
CREATE TABLE cg_filters (id int PRIMARY KEY, f bloomfilter);
INSERT INTO cg_filters SELECT 1, bf_add_all(bf_create(10000000, 0.01), array_agg('user' || g || '@example.com'))
	FROM generate_series(1, 100000) g;
INSERT INTO cg_filters SELECT 2, bf_add_all(bf_create(800, 0.01), array_agg('user' || g || '@example.com'))
	FROM generate_series(1, 100) g;
VACUUM ANALYZE cg_filters;
SQL
cg_stop

total() {
	# total ID N: instructions of a whole single-user session
	{
		echo "SET bloomfilter.filter_cache_size = '$CACHE'"
		echo "PREPARE p(text) AS SELECT bf_contains((SELECT f FROM cg_filters WHERE id = $1), \$1)"
		for i in $(seq 1 "$2"); do
			echo "EXECUTE p('absent-$i@example.org')"
		done
	} >"$dir/script.sql"
	cg_run "$dir/cg.out" <"$dir/script.sql"
	cg_total "$dir/cg.out"
}
big=$(( ($(total 1 "$N2") - $(total 1 "$N1")) / (N2 - N1) ))
small=$(( ($(total 2 "$N2") - $(total 2 "$N1")) / (N2 - N1) ))
echo "12mb $big"
echo "1kb $small"
awk -v a="$small" -v b="$big" 'BEGIN { printf "ratio %.2f\n", a / b }'
