#!/usr/bin/env bash
# bench/guard_callgrind.sh -- instructions per execution of a prepared
# lookup's generic plan, SELECT id FROM cg_users WHERE email = $1, for an
# absent key, with the scan guard on (the bloomfilter index asked first)
# and off (the btree alone), counted by valgrind --tool=callgrind (counts
# do not depend on the machine's load).
#
#   make install && bash bench/guard_callgrind.sh
#
# Makes a throwaway cluster in a temporary directory (as user postgres when
# run as root), loads ROWS rows (default 1 000 000) of text keys with a
# btree and a bloomfilter index, stops it, then runs a single-user backend
# under callgrind on PREPARE + N EXECUTEs of absent keys, for N = N1 and
# N2, and prints for each setting (N2 total - N1 total) / (N2 - N1): the
# cost of one execution, planning excluded (the plan is made once).
#
# Output: one line "guarded <instructions>" and one "btree <instructions>".
set -euo pipefail

ROWS="${ROWS:-1000000}"
N1="${N1:-200}"
N2="${N2:-1200}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5797}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_users (id bigint, email text);
INSERT INTO cg_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $ROWS) g;
CREATE INDEX cg_users_email ON cg_users (email);
CREATE INDEX cg_users_email_bf ON cg_users USING bloomfilter (email);
VACUUM ANALYZE cg_users;
SQL
# absent keys the filter says are absent (a false positive runs the scan)
cg_psql -A -t -c "SELECT k FROM (SELECT 'absent-' || g || '@example.org' AS k
	FROM generate_series(1, $((N2 * 2))) g) s
	WHERE NOT bf_index_contains('cg_users_email_bf', k) LIMIT $N2" >"$dir/keys"
cg_stop

script() {
	# script SETTING N
	echo "LOAD 'bloomfilter'"
	echo "SET plan_cache_mode = force_generic_plan"
	echo "SET bloomfilter.guard_scans = $1"
	echo "PREPARE p(text) AS SELECT id FROM cg_users WHERE email = \$1"
	head -n "$2" "$dir/keys" | sed "s/.*/EXECUTE p('&')/"
}
total() {
	# total SETTING N: instructions of a whole single-user session
	script "$1" "$2" >"$dir/script.sql"
	cg_run "$dir/cg.out" <"$dir/script.sql"
	cg_total "$dir/cg.out"
}
for setting in on off; do
	a="$(total "$setting" "$N1")"
	b="$(total "$setting" "$N2")"
	echo "$([ "$setting" = on ] && echo guarded || echo btree) $(((b - a) / (N2 - N1)))"
done
