#!/usr/bin/env bash
# bench/insert_callgrind.sh -- instructions per single-row INSERT (each its
# own transaction) into a table of 100 000 text keys: untracked, tracked
# by the index method, and by the trigger method (capacity 1 M; and 10 M,
# "trigger10"; and a growing filter, "growing", of 7 layers from 1 000 to
# 64 000 keys, whose writers also read the key's chunk in 6 older layers),
# counted
# by valgrind --tool=callgrind in a single-user backend (counts do not
# depend on the machine's load).
#
#   make install && bash bench/insert_callgrind.sh
#
# Output: one line per kind, "<kind> <instructions per INSERT>", then with
# TOP=n the n functions of the trigger method's run (TOP_KIND=cg_growing:
# the growing filter's) with the most inclusive instructions per INSERT.
# KINDS="cg_trigger cg_growing": only those kinds.
set -euo pipefail

N1="${N1:-200}"
N2="${N2:-1200}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5799}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_u (k text);
INSERT INTO cg_u SELECT md5(g::text) FROM generate_series(1, 100000) g;
CREATE TABLE cg_index AS SELECT * FROM cg_u;
CREATE TABLE cg_trigger AS SELECT * FROM cg_u;
CREATE TABLE cg_trigger10 AS SELECT * FROM cg_u;
CREATE TABLE cg_growing (k text);
SELECT bf_track('cg_growing', 'k', method => 'trigger');
INSERT INTO cg_growing SELECT * FROM cg_u;
SELECT bf_track('cg_index', 'k', 1000000, method => 'index');
SELECT bf_track('cg_trigger', 'k', 1000000, method => 'trigger');
SELECT bf_track('cg_trigger10', 'k', 10000000, method => 'trigger');
VACUUM ANALYZE;
SQL
cg_stop

total() {
	# total TABLE N: instructions of a whole single-user session of N INSERTs
	{
		echo "PREPARE p(text) AS INSERT INTO $1 VALUES (\$1)"
		for i in $(seq 1 "$2"); do echo "EXECUTE p('new-$2-$i')"; done
	} >"$dir/script.sql"
	cg_run "$dir/cg.$1.$2" <"$dir/script.sql"
	cg_total "$dir/cg.$1.$2"
}
for t in ${KINDS:-cg_u cg_index cg_trigger cg_trigger10 cg_growing}; do
	a="$(total "$t" "$N1")"
	b="$(total "$t" "$N2")"
	echo "${t#cg_} $(((b - a) / (N2 - N1)))"
done
if [ -n "${TOP:-}" ]; then
	callgrind_annotate --inclusive=yes "$dir/cg.${TOP_KIND:-cg_trigger}.$N2" 2>/dev/null |
		awk -v n="$N2" 'NR > 20 && $1 ~ /^[0-9,]+$/ { gsub(",", "", $1); printf "%12d  %s\n", $1 / n, $0 }' |
		head -"$TOP"
fi
