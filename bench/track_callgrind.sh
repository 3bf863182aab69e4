#!/usr/bin/env bash
# bench/track_callgrind.sh -- instructions per prepared statement of
# bf_might_contain and of bf_index_contains on the same index, counted by
# valgrind --tool=callgrind (counts do not depend on the machine's load).
#
#   make install && bash bench/track_callgrind.sh
#
# Makes a throwaway cluster in a temporary directory (as user postgres when
# run as root), loads ROWS rows (default 1 000 000) of text keys tracked with
# method 'index', stops it, then runs a single-user backend under callgrind
# on a script of PREPARE + N EXECUTEs of absent keys, for N = N1 and N2, and
# prints for each function (N2 total - N1 total) / (N2 - N1): the cost of
# one statement with everything but the per-statement work subtracted.
#
# Output: one line "index <instructions>" and one line "might <instructions>".
# METHOD=trigger tracks the column with method 'trigger' instead (the
# filter in the registry, read through the backend's filter cache): then
# only the "might" line.
set -euo pipefail

ROWS="${ROWS:-1000000}"
METHOD="${METHOD:-index}"
N1="${N1:-200}"
N2="${N2:-1200}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5798}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_users (id bigint, email text);
INSERT INTO cg_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $ROWS) g;
SELECT bf_track('cg_users', 'email', method => '$METHOD');
VACUUM ANALYZE cg_users;
SQL
idx="$(cg_psql -A -t -c "SELECT bf_track_index('cg_users', 'email')::oid")"
kinds="index might"
[ "$METHOD" = trigger ] && kinds="might"
cg_stop

script() {
	# script KIND N
	if [ "$1" = might ]; then
		echo "PREPARE p(text) AS SELECT bf_might_contain('cg_users', 'email', \$1)"
	else
		echo "PREPARE p(text) AS SELECT bf_index_contains($idx::regclass, \$1)"
	fi
	for i in $(seq 1 "$2"); do
		echo "EXECUTE p('absent-$i@example.org')"
	done
}
total() {
	# total KIND N: instructions of a whole single-user session
	script "$1" "$2" >"$dir/script.sql"
	cg_run "$dir/cg.out" <"$dir/script.sql"
	cg_total "$dir/cg.out"
}
for kind in $kinds; do
	a="$(total "$kind" "$N1")"
	b="$(total "$kind" "$N2")"
	echo "$kind $(((b - a) / (N2 - N1)))"
done
