#!/usr/bin/env bash
# bench/copy_callgrind.sh -- instructions of a COPY of ROWS (default
# 300 000) bigint keys into a table tracked by the trigger method
# (capacity 1 M) and into an untracked one, counted by valgrind
# --tool=callgrind in a single-user backend at work_mem 1GB (the
# benchmark's setting: the transition table stays in memory); then, with
# TOP=n, the n functions of the tracked run with the most inclusive
# instructions.
#
#   make install && bash bench/copy_callgrind.sh
set -euo pipefail
ROWS="${ROWS:-300000}"
. "$(dirname "$0")/callgrind_lib.sh"
cg_start "${CG_PORT:-5797}"
cg_psql <<SQL >/dev/null
CREATE TABLE cg_untracked (k bigint);
CREATE TABLE cg_tracked (k bigint);
SELECT bf_track('cg_tracked', 'k', 1000000, method => 'trigger');
SQL
seq 1 "$ROWS" >"$dir/keys"
chmod a+r "$dir/keys"
cg_stop
for t in cg_tracked cg_untracked; do
	printf "SET work_mem = '1GB';\nCOPY %s FROM '%s';\n" "$t" "$dir/keys" | cg_run "$dir/cg.$t"
	echo "$t $(cg_total "$dir/cg.$t")"
done
if [ -n "${TOP:-}" ]; then
	callgrind_annotate --inclusive=yes "$dir/cg.cg_tracked" 2>/dev/null |
		awk 'NR > 20 && $1 ~ /^[0-9,]+$/' | head -"$TOP"
fi
