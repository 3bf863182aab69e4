# test/lib/citus_clients.sh -- sourced after test/lib/citus.sh (a Citus
# cluster started, CITUS_DIR and CITUS_PORTS set): the Refresher of each
# client (clients/go, clients/js, clients/python) against a tracked column
# of a table distributed by Citus, whose filter is a union (docs/FORMAT.md
# §10) and whose change sets name positions of the coordinator (§10.6).
#
#   citus_clients_start TABLE COLUMN
#           start, per client language, one long-running program holding
#           one Refresher of bf_tracked_filter(TABLE, COLUMN), connected to
#           the coordinator; each waits for commands on a FIFO, so its
#           refreshes after the first are patches, as an application's are
#   citus_clients_check NAME TABLE COLUMN KEYS_SQL [full|patch]
#           every key KEYS_SQL returns on the coordinator (one text key a
#           row; parsed as an integer when the filter's family is integer)
#           must be found by each client after one refresh, and the
#           client's copy must be the bytes of bf_tracked_filter(TABLE,
#           COLUMN) (md5).  Uses the started program when TABLE and COLUMN
#           are those of citus_clients_start, else runs the program once
#           (a first refresh: full).  With a fifth argument, the refresh
#           must have been that: full (the whole value) or patch.  Prints
#             ok - NAME (<lang>, full|patch)
#             not ok - NAME (<lang>): <reason>
#             ok - # skip <lang>: <why>       (that client cannot run here)
#           and adds to the caller's passed / failed (not for a skip)
#   citus_clients_stop
#           end the started programs (they also end when the shell does:
#           their input closes)
#
# The programs: clients/go/e2e/citusclient (built here with Debian's
# lib/pq, clients/go/scripts/gopath.sh), clients/js/test/citus/client.js
# (node-postgres of clients/js/node_modules) and
# clients/python/tests/citus_client.py (/usr/bin/python3 with psycopg).
# They connect as cpsql does: 127.0.0.1, port CITUS_PORTS[0], user and
# database postgres.  CITUS_CLIENTS_LANGS (default "go js python") picks
# the languages; CITUS_CLIENTS_TIMEOUT (s, default 300) bounds an answer;
# CITUS_CLIENTS_VERBOSE=1 prints each answer as a comment.

CITUS_CLIENTS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CITUS_CLIENTS_LANGS="${CITUS_CLIENTS_LANGS:-go js python}"
CITUS_CLIENTS_TABLE=""
CITUS_CLIENTS_COLUMN=""
declare -A _cc_skip=()  # lang -> why it cannot run here
declare -A _cc_ready=() # lang -> 1 once prepared (built, checked)
declare -A _cc_pid=()   # lang -> the started program's pid
declare -A _cc_wfd=()   # lang -> fd writing its commands
declare -A _cc_rfd=()   # lang -> fd reading its answers
declare -A _cc_dead=()  # lang -> why its program does not build
declare -A _cc_gone=()  # lang -> why the started program is gone
_cc_nkeys=0

# the directory of the FIFOs, keys and the Go binary (removed with the cluster)
_cc_dir() {
	local d="${CITUS_DIR:?citus_start first (test/lib/citus.sh)}/clients"
	[ -d "$d" ] || mkdir -p "$d"
	echo "$d"
}

# _cc_prepare LANG: 0 when LANG's program can run (the Go one built);
# else 1 with _cc_skip[LANG] set (missing here: skip) or 2 (broken: fail)
_cc_prepare() {
	local lang="$1" dir log
	[ -z "${_cc_ready[$lang]:-}" ] || return 0
	[ -z "${_cc_skip[$lang]:-}" ] || return 1
	[ -z "${_cc_dead[$lang]:-}" ] || return 2
	dir="$(_cc_dir)"
	case "$lang" in
	go)
		if ! command -v go >/dev/null; then
			_cc_skip[go]="no Go toolchain"
			return 1
		fi
		if [ ! -d /usr/share/gocode/src/github.com/lib/pq ]; then
			_cc_skip[go]="no lib/pq in /usr/share/gocode (Debian: golang-github-lib-pq-dev)"
			return 1
		fi
		log="$dir/go-build.log"
		# in a subshell: gopath.sh sets an EXIT trap (removing its GOPATH)
		# that must not replace citus.sh's
		if ! (cd "$CITUS_CLIENTS_ROOT" &&
			export GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/bf-go-cache}" &&
			. clients/go/scripts/gopath.sh &&
			bf_go_build clients/go/e2e/citusclient "$dir/citusclient-go") >"$log" 2>&1; then
			_cc_dead[go]="clients/go/e2e/citusclient does not build: $(tail -5 "$log" | tr '\n' ' ')"
			return 2
		fi
		;;
	js)
		if ! command -v node >/dev/null; then
			_cc_skip[js]="no node"
			return 1
		fi
		if [ ! -d "$CITUS_CLIENTS_ROOT/clients/js/node_modules/pg" ]; then
			_cc_skip[js]="no node-postgres in clients/js/node_modules (npm ci there)"
			return 1
		fi
		;;
	python)
		if [ ! -x /usr/bin/python3 ]; then
			_cc_skip[python]="no /usr/bin/python3"
			return 1
		fi
		if ! /usr/bin/python3 -c 'import psycopg, xxhash' 2>/dev/null; then
			_cc_skip[python]="/usr/bin/python3 lacks psycopg or xxhash (Debian: python3-psycopg python3-xxhash)"
			return 1
		fi
		;;
	*)
		_cc_skip[$lang]="unknown language"
		return 1
		;;
	esac
	_cc_ready[$lang]=1
	return 0
}

# _cc_argv LANG TABLE COLUMN: the command running LANG's program, in _cc_cmd
_cc_argv() {
	local lang="$1" table="$2" column="$3" port="${CITUS_PORTS[0]}"
	local conninfo="host=127.0.0.1 port=$port user=postgres dbname=postgres sslmode=disable"
	# the PG* environment of cpsql's connection, for every driver
	_cc_cmd=(env -u PGSERVICE -u PGSYSCONFDIR -u PGPASSFILE PGHOST=127.0.0.1 PGPORT="$port"
		PGUSER=postgres PGDATABASE=postgres PGSSLMODE=disable)
	case "$lang" in
	go) _cc_cmd+=("$(_cc_dir)/citusclient-go" -conn "$conninfo" -table "$table" -column "$column") ;;
	js) _cc_cmd+=(node "$CITUS_CLIENTS_ROOT/clients/js/test/citus/client.js" "$table" "$column") ;;
	python) _cc_cmd+=(PYTHONPATH="$CITUS_CLIENTS_ROOT/clients/python/src" PYTHONDONTWRITEBYTECODE=1
		/usr/bin/python3 "$CITUS_CLIENTS_ROOT/clients/python/tests/citus_client.py" "$table" "$column" "$conninfo") ;;
	esac
}

citus_clients_start() {
	local table="$1" column="$2" lang dir wfd rfd fd
	citus_clients_stop
	dir="$(_cc_dir)"
	CITUS_CLIENTS_TABLE="$table"
	CITUS_CLIENTS_COLUMN="$column"
	for lang in $CITUS_CLIENTS_LANGS; do
		_cc_prepare "$lang" || continue
		_cc_argv "$lang" "$table" "$column"
		rm -f "$dir/$lang.in" "$dir/$lang.out"
		mkfifo "$dir/$lang.in" "$dir/$lang.out" || { _cc_gone[$lang]="mkfifo failed"; continue; }
		# the program opens its input, then its output; the same order
		# here.  It keeps no end of the others' FIFOs, so that each ends
		# when the shell does (its input closed)
		(
			for fd in "${_cc_wfd[@]}" "${_cc_rfd[@]}"; do exec {fd}>&-; done
			exec "${_cc_cmd[@]}"
		) <"$dir/$lang.in" >"$dir/$lang.out" 2>"$dir/$lang.err" &
		_cc_pid[$lang]=$!
		exec {wfd}>"$dir/$lang.in"
		exec {rfd}<"$dir/$lang.out"
		_cc_wfd[$lang]=$wfd
		_cc_rfd[$lang]=$rfd
	done
}

# _cc_end LANG: close the started program's FIFOs and wait for it (ended
# by pid after 10 s)
_cc_end() {
	local lang="$1" pid="${_cc_pid[$1]:-}" wfd="${_cc_wfd[$1]:-}" rfd="${_cc_rfd[$1]:-}" i
	[ -n "$pid" ] || return 0
	if [ -n "$wfd" ]; then
		(echo quit >&"$wfd") 2>/dev/null
		exec {wfd}>&-
	fi
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	_cc_status=$?
	[ -z "$rfd" ] || exec {rfd}<&-
	unset "_cc_pid[$lang]" "_cc_wfd[$lang]" "_cc_rfd[$lang]"
}

citus_clients_stop() {
	local lang
	for lang in "${!_cc_pid[@]}"; do _cc_end "$lang"; done
	# a program that failed to build or ended is tried again at the next start
	for lang in "${!_cc_dead[@]}"; do unset "_cc_dead[$lang]"; done
	for lang in "${!_cc_gone[@]}"; do unset "_cc_gone[$lang]"; done
	CITUS_CLIENTS_TABLE=""
	CITUS_CLIENTS_COLUMN=""
}

_cc_ok() {
	passed=$((passed + 1))
	echo "ok - $1"
}

_cc_fail() {
	failed=$((failed + 1))
	echo "not ok - $1"
}

# _cc_ask LANG TABLE COLUMN KEYFILE: LANG's answer to "check KEYFILE", in
# _cc_answer: the started program's when it holds TABLE.COLUMN (1 when it
# ended or ends now, _cc_gone[LANG] saying why), else a new one's
_cc_ask() {
	local lang="$1" table="$2" column="$3" keys="$4" dir rc
	dir="$(_cc_dir)"
	_cc_answer=""
	if [ "$table" = "$CITUS_CLIENTS_TABLE" ] && [ "$column" = "$CITUS_CLIENTS_COLUMN" ]; then
		[ -z "${_cc_gone[$lang]:-}" ] || return 1
		if [ -z "${_cc_pid[$lang]:-}" ]; then
			_cc_gone[$lang]="its program was not started"
			return 1
		fi
		# written from a subshell: were the program gone, SIGPIPE would end
		# the shell itself
		if ! (echo "check $keys" >&"${_cc_wfd[$lang]}") 2>/dev/null ||
			! read -r -t "${CITUS_CLIENTS_TIMEOUT:-300}" -u "${_cc_rfd[$lang]}" _cc_answer; then
			_cc_answer=""
			if kill -0 "${_cc_pid[$lang]}" 2>/dev/null; then
				_cc_end "$lang"
				_cc_gone[$lang]="its program gave no answer in ${CITUS_CLIENTS_TIMEOUT:-300} s (ended)"
			else
				_cc_end "$lang"
				_cc_gone[$lang]="its program ended (exit status $_cc_status)"
			fi
			_cc_gone[$lang]+="; stderr: $(tail -5 "$dir/$lang.err" | tr '\n' ' ')"
			return 1
		fi
		return 0
	fi
	_cc_argv "$lang" "$table" "$column"
	printf 'check %s\nquit\n' "$keys" |
		timeout "${CITUS_CLIENTS_TIMEOUT:-300}" "${_cc_cmd[@]}" >"$dir/$lang.once.out" 2>"$dir/$lang.once.err"
	rc=$?
	_cc_answer="$(head -1 "$dir/$lang.once.out")"
	if [ -z "$_cc_answer" ]; then
		_cc_answer="fail no answer (exit $rc; stderr: $(tail -5 "$dir/$lang.once.err" | tr '\n' ' '))"
	fi
	return 0
}

citus_clients_check() {
	local name="$1" table="$2" column="$3" keys_sql="$4" expect="${5:-}"
	local dir keys md5 lang mode n bytes sum layout lsn why
	dir="$(_cc_dir)"
	_cc_nkeys=$((_cc_nkeys + 1))
	keys="$dir/keys.$_cc_nkeys"
	if ! cpsql 0 -At -c "$keys_sql" >"$keys" 2>"$keys.err"; then
		_cc_fail "$name (clients): KEYS_SQL failed: $(head -3 "$keys.err" | tr '\n' ' ')"
		return
	fi
	if [ ! -s "$keys" ]; then
		_cc_fail "$name (clients): KEYS_SQL returned no keys"
		return
	fi
	for lang in $CITUS_CLIENTS_LANGS; do
		if [ -n "${_cc_skip[$lang]:-}" ]; then
			echo "ok - # skip $lang: ${_cc_skip[$lang]}"
			continue
		fi
		_cc_prepare "$lang"
		case $? in
		1) echo "ok - # skip $lang: ${_cc_skip[$lang]}"; continue ;;
		2) _cc_fail "$name ($lang): ${_cc_dead[$lang]}"; continue ;;
		esac
		if ! _cc_ask "$lang" "$table" "$column" "$keys"; then
			_cc_fail "$name ($lang): ${_cc_gone[$lang]}"
			continue
		fi
		[ "${CITUS_CLIENTS_VERBOSE:-0}" != 1 ] || echo "# $lang: $_cc_answer"
		read -r why mode n bytes sum layout lsn <<<"$_cc_answer"
		if [ "$why" != ok ]; then
			_cc_fail "$name ($lang): ${_cc_answer#fail }"
			continue
		fi
		# the server's bytes now (no write since the client's refresh)
		md5="$(printf '%s\n' "SELECT md5(bf_tracked_filter(:'t', :'c')::bytea)" |
			cpsql 0 -At -v t="$table" -v c="$column" 2>&1)"
		if [ "$sum" != "$md5" ]; then
			_cc_fail "$name ($lang, $mode): its copy (md5 $sum, $layout, position $lsn) is not bf_tracked_filter's bytes (md5 $md5)"
		elif [ -n "$expect" ] && [ "$mode" != "$expect" ]; then
			_cc_fail "$name ($lang): the refresh was $mode, not $expect ($bytes bytes, position $lsn)"
		else
			_cc_ok "$name ($lang, $mode)"
		fi
	done
}
