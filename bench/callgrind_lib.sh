# bench/callgrind_lib.sh -- sourced by bench/*_callgrind.sh: a throwaway
# cluster in a temporary directory (run as user postgres when the caller
# is root) to load data into, and single-user backends under callgrind.
#
#   cg_start PORT     initdb, start, CREATE EXTENSION bloomfilter; sets BIN
#                     and dir; removed on exit
#   cg_psql ARGS...   psql on that cluster as postgres
#   cg_stop           stop it (single-user backends need it stopped)
#   cg_run OUT < SQL  one single-user backend under callgrind, output OUT
#                     (CG_OPTS: more server options, e.g. "-c name=value")
#   cg_total OUT      the whole run's instructions

BIN="${PG_BINDIR:-$(pg_config --bindir)}"

as_pg() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

cg_start() {
	CG_PORT_USED="$1"
	dir="$(mktemp -d /tmp/bf-callgrind.XXXXXX)"
	trap 'as_pg "$BIN/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
	if [ "$(id -u)" -eq 0 ]; then chown postgres "$dir"; fi
	as_pg "$BIN/initdb" -D "$dir/data" -A trust >/dev/null
	as_pg "$BIN/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
		-o "-p $CG_PORT_USED -k $dir -c listen_addresses=''" start >/dev/null
	cg_psql -c "CREATE EXTENSION bloomfilter" >/dev/null
}

cg_psql() {
	psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$CG_PORT_USED" -U postgres "$@" postgres
}

cg_stop() {
	as_pg "$BIN/pg_ctl" -D "$dir/data" -w stop >/dev/null
}

cg_run() {
	as_pg valgrind --tool=callgrind --callgrind-out-file="$1" \
		"$BIN/postgres" --single ${CG_OPTS:-} -D "$dir/data" postgres >/dev/null 2>"$dir/vg.err"
	if [ "$(id -u)" -eq 0 ]; then chmod a+r "$1"; fi
}

cg_total() {
	awk '/^summary:/ { print $2 }' "$1"
}
