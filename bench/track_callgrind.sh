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
# Output: one line "index <instructions>", one line "might <instructions>"
# and one line "exists <instructions>": the statement a filter is meant to
# spare, SELECT EXISTS (SELECT 1 FROM cg_users WHERE email = $1), over a
# btree on the column (bloomfilter.guard_scans off: the btree alone), and
# one line "guarded <instructions>": the same statement with the scan
# guard (docs/scan-guards.md); then the ratios to "exists".
# METHOD=trigger tracks the column with method 'trigger' instead (the
# filter in the registry, read through the backend's filter cache): then
# no "index" line.  KINDS="might exists" measures only those; CG_KEEP=DIR
# keeps callgrind's outputs there (KIND.N.out) for callgrind_annotate.
# STATS=on or STATS=off runs the backends with the library preloaded
# (per-filter statistics counted) and bloomfilter.track_stats on or off:
# the cost of counting is the difference.
set -euo pipefail

ROWS="${ROWS:-1000000}"
METHOD="${METHOD:-index}"
N1="${N1:-200}"
N2="${N2:-1200}"
. "$(dirname "$0")/callgrind_lib.sh"
if [ -n "${STATS:-}" ]; then
	CG_OPTS="-c shared_preload_libraries=bloomfilter -c bloomfilter.track_stats=$STATS"
fi
cg_start "${CG_PORT:-5798}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_users (id bigint, email text);
INSERT INTO cg_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $ROWS) g;
SELECT bf_track('cg_users', 'email', method => '$METHOD');
CREATE INDEX cg_users_email_btree ON cg_users USING btree (email);
VACUUM ANALYZE cg_users;
SQL
idx="$(cg_psql -A -t -c "SELECT bf_track_index('cg_users', 'email')::oid")"
kinds="index might exists guarded"
[ "$METHOD" = trigger ] && kinds="might exists guarded"
kinds="${KINDS:-$kinds}"
cg_stop

script() {
	# script KIND N
	if [ "$1" = might ]; then
		echo "PREPARE p(text) AS SELECT bf_might_contain('cg_users', 'email', \$1)"
	elif [ "$1" = exists ]; then
		# the btree alone: no scan guard, whether the library is loaded or not
		echo "SET bloomfilter.guard_scans = off"
		echo "PREPARE p(text) AS SELECT EXISTS (SELECT 1 FROM cg_users WHERE email = \$1)"
	elif [ "$1" = guarded ]; then
		# the same statement with the scan guard of the column's filter
		# (the library loaded before the plan is made, as preloading does)
		echo "LOAD 'bloomfilter'"
		echo "SET plan_cache_mode = force_generic_plan"
		echo "PREPARE p(text) AS SELECT EXISTS (SELECT 1 FROM cg_users WHERE email = \$1)"
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
	if [ -n "${CG_KEEP:-}" ]; then cp "$dir/cg.out" "$CG_KEEP/$1.$2.out"; fi
	cg_total "$dir/cg.out"
}
declare -A per
for kind in $kinds; do
	a="$(total "$kind" "$N1")"
	b="$(total "$kind" "$N2")"
	per[$kind]=$(((b - a) / (N2 - N1)))
	echo "$kind ${per[$kind]}"
done
if [ -n "${per[exists]:-}" ]; then
	for kind in might index guarded; do
		if [ -n "${per[$kind]:-}" ]; then
			awk -v a="${per[$kind]}" -v b="${per[exists]}" -v k="$kind" \
				'BEGIN { printf "%s/exists %.3f\n", k, a / b }'
		fi
	done
fi
