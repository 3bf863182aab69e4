# bench/lib.sh -- helpers for benchmark scenarios.  Sourced by bench/run-inner.sh
# (never run directly); every bench/scenarios/NN-*.sh can use:
#
#   q "SQL"            run SQL (one or more statements, psql meta-commands
#                      allowed) in the bench database.  Output goes to stdout
#                      unaligned and without headers (psql -A -t), so
#                      x=$(q "SELECT ...") captures a value; fields of a row
#                      are separated by '|'.  Any error aborts (ON_ERROR_STOP)
#                      and q returns non-zero, which fails the scenario.
#
#   time_ms "SQL"      print the elapsed milliseconds of ONE statement, the
#                      best (minimum) of $BENCH_REPS runs (default 3), with
#                      two decimals.  The runs share one psql session; the
#                      result rows are discarded (\o /dev/null) and the time
#                      is psql's \timing, i.e. from sending the query to
#                      receiving the complete result over the local socket.
#                      Make the statement return few rows (e.g. count(*)) and
#                      last >= ~100 ms, then the round trip (~0.1 ms) is
#                      noise.  Every run's time is logged to stderr.
#
#   row NAME VALUE TARGET NOTE
#                      record one result row for the final table.
#
#   ratio A B [DIGITS] print A / B (default 2 decimals).
#   fmt_int N          print N with thousands separators (1,234,567).
#   log MSG...         progress message on stderr.
#
# Environment (set by run-inner.sh): BENCH_DB (database), BENCH_ROWS (file the
# rows are appended to, tab-separated), BENCH_ROOT (the bench/ directory).

: "${BENCH_DB:=bench}"
: "${BENCH_REPS:=3}"

log() {
	printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

_psql() {
	psql -X -q -v ON_ERROR_STOP=1 -d "$BENCH_DB" "$@"
}

q() {
	if [ $# -ne 1 ]; then
		echo "q: expected exactly one SQL argument" >&2
		return 2
	fi
	printf '%s\n' "$1" | _psql -A -t
}

# strip trailing whitespace and semicolons, so that we can append our own
# terminator on a line of its own (the statement may end in a -- comment)
_strip_sql() {
	local s="$1"
	while :; do
		case "$s" in
			*[[:space:]]) s="${s%?}" ;;
			*\;) s="${s%?}" ;;
			*) break ;;
		esac
	done
	printf '%s' "$s"
}

time_ms() {
	if [ $# -ne 1 ]; then
		echo "time_ms: expected exactly one SQL argument" >&2
		return 2
	fi
	local sql reps out times best n
	sql="$(_strip_sql "$1")"
	reps="$BENCH_REPS"
	if [ -z "$sql" ]; then
		echo "time_ms: empty statement" >&2
		return 2
	fi
	# \timing prints "Time: 123.456 ms" (plus " (00:01.235)" past a second)
	# on stdout even while query output goes to \o /dev/null.
	out="$({
		printf '\\o /dev/null\n\\timing on\n'
		for ((i = 0; i < reps; i++)); do
			printf '%s\n;\n' "$sql"
		done
	} | _psql)" || {
		echo "time_ms: statement failed: $sql" >&2
		return 1
	}
	times="$(printf '%s\n' "$out" | awk '$1 == "Time:" && $3 == "ms" { print $2 }')"
	n="$(printf '%s\n' "$times" | grep -c . || true)"
	if [ "$n" -ne "$reps" ]; then
		echo "time_ms: expected $reps timings, got $n; psql said:" >&2
		printf '%s\n' "$out" >&2
		return 1
	fi
	best="$(printf '%s\n' "$times" | sort -g | head -n 1)"
	log "time_ms best $(printf '%.2f' "$best") of [$(printf '%s\n' "$times" | tr '\n' ' ' | sed 's/ $//')] :: $(printf '%s' "$sql" | tr -s '\n\t ' ' ' | cut -c1-110)"
	printf '%.2f\n' "$best"
}

row() {
	if [ $# -lt 2 ] || [ $# -gt 4 ]; then
		echo "row: usage: row NAME VALUE [TARGET [NOTE]]" >&2
		return 2
	fi
	local f clean=()
	for f in "$1" "$2" "${3:-}" "${4:-}"; do
		# one line per row, tab-separated: flatten tabs/newlines, and '|'
		# would break the markdown table
		f="$(printf '%s' "$f" | tr '\t\n' '  ' | sed 's/|/\//g')"
		clean+=("$f")
	done
	printf '%s\t%s\t%s\t%s\n' "${clean[@]}" >>"$BENCH_ROWS"
	log "row: ${clean[0]} = ${clean[1]} (target ${clean[2]:-none})"
}

# CPU milliseconds the backend spends on one statement, best of BENCH_REPS:
# utime + stime of /proc/self/stat, so that other processes of a shared
# machine do not count
cpu_ms() {
	local ticks="split_part(pg_read_file('/proc/self/stat'), ' ', 14)::bigint + split_part(pg_read_file('/proc/self/stat'), ' ', 15)::bigint"
	local hz best t
	hz="$(getconf CLK_TCK)"
	best=""
	for ((i = 0; i < ${BENCH_REPS:-3}; i++)); do
		t="$(q "SELECT $ticks AS t0 \\gset
\\o /dev/null
$1;
\\o
SELECT ($ticks - :t0) * 1000 / $hz;")"
		log "cpu $t ms :: ${1:0:100}"
		best="$(awk -v a="$t" -v b="$best" 'BEGIN { print (b == "" || a + 0 < b + 0) ? a : b }')"
	done
	echo "$best"
}

ratio() {
	awk -v a="$1" -v b="$2" -v d="${3:-2}" 'BEGIN {
		if (b + 0 == 0) { print "n/a"; exit }
		printf "%.*f\n", d, a / b }'
}

fmt_int() {
	printf '%.0f\n' "$1" | sed -e ':a' -e 's/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/' -e 'ta'
}
