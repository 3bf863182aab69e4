# bench/scenarios/45-track-lookup.sh -- per-statement cost of bf_might_contain
# (tracked filters, method 'index') against bf_index_contains on the same
# index: one lookup of an absent key per statement, as an application asks.
#
# Rows:
#   1. bf_might_contain / bf_index_contains per statement, pgbench -M prepared,
#      1 client and 2 clients (latency ratio, <= 1.1)
#   2. the same in callgrind instructions per statement (<= 1.1), when
#      valgrind is installed (bench/track_callgrind.sh)
#   3. (info) method 'trigger' / bf_index_contains per statement, 1 client
# Sourced by run-inner.sh with lib.sh loaded (q, row, ratio, log).

TL_ROWS="${BENCH_TL_ROWS:-1000000}"
TL_SECS="${BENCH_TL_SECS:-10}"
TL_ROUNDS="${BENCH_TL_ROUNDS:-3}"
work="$(mktemp -d /tmp/bf-bench45.XXXXXX)"

log "45-track-lookup: $TL_ROWS rows, pgbench ${TL_SECS}s x $TL_ROUNDS interleaved rounds"
q "SET client_min_messages = warning;
DROP TABLE IF EXISTS tl_users, tl_trig;
CREATE TABLE tl_users (id bigint, email text);
INSERT INTO tl_users SELECT g, 'user' || g || '@example.com' FROM generate_series(1, $TL_ROWS) g;
SELECT bf_track('tl_users', 'email');
CREATE TABLE tl_trig (id bigint, email text);
INSERT INTO tl_trig SELECT * FROM tl_users;
SELECT bf_track('tl_trig', 'email', method => 'trigger');
VACUUM ANALYZE tl_users, tl_trig;" >/dev/null
idx="$(q "SELECT bf_track_index('tl_users', 'email')::oid")"

key='\set k random(1, 1000000000)'
printf '%s\nSELECT bf_index_contains(%s::regclass, :k || %s);\n' "$key" "$idx" "'@absent.example.org'" >"$work/index.sql"
printf '%s\nSELECT bf_might_contain(%s, %s, :k || %s);\n' "$key" "'tl_users'" "'email'" "'@absent.example.org'" >"$work/might.sql"
printf '%s\nSELECT bf_might_contain(%s, %s, :k || %s);\n' "$key" "'tl_trig'" "'email'" "'@absent.example.org'" >"$work/trig.sql"

tps() {
	# tps SCRIPT CLIENTS
	pgbench -n -M prepared -T "$TL_SECS" -c "$2" -j "$2" -f "$1" "$BENCH_DB" 2>"$work/pgb.err" |
		awk '/^tps = / { print $3 }'
}
best() { printf '%s\n' "$@" | sort -g | tail -1; }

for clients in 1 2; do
	ti=() tm=() tt=()
	for r in $(seq 1 "$TL_ROUNDS"); do
		ti+=("$(tps "$work/index.sql" "$clients")")
		tm+=("$(tps "$work/might.sql" "$clients")")
		if [ "$clients" = 1 ]; then tt+=("$(tps "$work/trig.sql" 1)"); fi
	done
	bi="$(best "${ti[@]}")"
	bm="$(best "${tm[@]}")"
	log "45: $clients client(s): bf_index_contains ${ti[*]} tps; bf_might_contain ${tm[*]} tps"
	row "1. bf_might_contain / bf_index_contains per statement, $clients client(s)" \
		"$(ratio "$bi" "$bm")" "<= 1.1" \
		"time per statement (tps of bf_index_contains / tps of bf_might_contain); pgbench -M prepared, absent text keys, $(fmt_int "$TL_ROWS")-row table tracked with method 'index', best of $TL_ROUNDS interleaved ${TL_SECS}-s rounds: bf_index_contains $(printf '%.0f' "$bi") tps, bf_might_contain $(printf '%.0f' "$bm") tps (all rounds: ${ti[*]} / ${tm[*]})"
	if [ "$clients" = 1 ]; then
		bt="$(best "${tt[@]}")"
		row "3. bf_might_contain (method 'trigger') / bf_index_contains per statement" \
			"$(ratio "$bi" "$bt")" "(info)" \
			"same keys and table, 1 client: method 'trigger' $(printf '%.0f' "$bt") tps; it reads the registry row through its index once per statement (the filter a statement sees is that of its snapshot)"
	fi
done

if command -v valgrind >/dev/null 2>&1; then
	cg="$(ROWS="$TL_ROWS" bash bench/track_callgrind.sh)"
	ci="$(awk '$1 == "index" { print $2 }' <<<"$cg")"
	cm="$(awk '$1 == "might" { print $2 }' <<<"$cg")"
	row "2. bf_might_contain / bf_index_contains per statement (callgrind)" \
		"$(ratio "$cm" "$ci")" "<= 1.1" \
		"instructions per prepared EXECUTE of one absent key (bash bench/track_callgrind.sh, single-user backend, $(fmt_int "$TL_ROWS") rows): bf_index_contains $(fmt_int "$ci"), bf_might_contain $(fmt_int "$cm")"
else
	row "2. bf_might_contain / bf_index_contains per statement (callgrind)" "-" "<= 1.1" \
		"skipped: valgrind is not installed"
fi

q "DROP TABLE tl_users, tl_trig" >/dev/null
rm -rf "$work"
