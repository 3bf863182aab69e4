# test/lib/citus.sh -- sourced: a Citus coordinator and two workers on
# loopback, for the tests and benchmarks of distributed tables.
#
#   citus_available      true when this server has Citus installed (its
#                        library and control file); prints why not
#   citus_start [PORT]   three clusters (initdb as user postgres in a
#                        temporary directory, ports PORT .. PORT + 2,
#                        default 57640), shared_preload_libraries = citus,
#                        listening on 127.0.0.1 only; the extensions
#                        created; the workers added.  Sets CITUS_DIR and
#                        CITUS_PORTS; stopped and removed by citus_stop,
#                        which an EXIT trap runs
#   cpsql NODE ARGS...   psql on node 0 (the coordinator), 1 or 2 as postgres,
#                        database postgres, ON_ERROR_STOP
#   citus_stop_node N    stop one node (immediate), to test a worker down
#   citus_start_node N   start it again
#   citus_add_worker     a third worker (node 3, port PORT + 3), added to
#                        the cluster (Citus creates the extensions there)
#
# Citus is not in Debian's archive: it must be built from its source
# against this server's pg_config and installed (see docs/citus.md).

CITUS_BIN="$(pg_config --bindir)"

citus_as_pg() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

citus_available() {
	local lib share
	lib="$(pg_config --pkglibdir)"
	share="$(pg_config --sharedir)"
	if [ ! -f "$lib/citus.so" ] || [ ! -f "$share/extension/citus.control" ]; then
		echo "Citus is not installed for $(pg_config --version) ($lib/citus.so, $share/extension/citus.control)"
		return 1
	fi
	return 0
}

citus_start() {
	local base="${1:-57640}" i
	CITUS_DIR="$(mktemp -d /tmp/bf-citus.XXXXXX)"
	chmod 755 "$CITUS_DIR"
	[ "$(id -u)" -ne 0 ] || chown postgres: "$CITUS_DIR"
	CITUS_PORTS=("$base" "$((base + 1))" "$((base + 2))")
	trap citus_stop EXIT
	for i in 0 1 2; do
		citus_init_node "$i" || return 1
	done
	for i in 0 1 2; do
		cpsql "$i" -c "CREATE EXTENSION citus" -c "CREATE EXTENSION bloomfilter" >/dev/null || return 1
	done
	cpsql 0 -c "SELECT citus_set_coordinator_host('127.0.0.1', ${CITUS_PORTS[0]})" \
		-c "SELECT citus_add_node('127.0.0.1', ${CITUS_PORTS[1]})" \
		-c "SELECT citus_add_node('127.0.0.1', ${CITUS_PORTS[2]})" >/dev/null
}

citus_add_worker() {
	CITUS_PORTS[3]=$((CITUS_PORTS[0] + 3))
	citus_init_node 3 &&
		cpsql 3 -c "CREATE EXTENSION citus" >/dev/null &&
		cpsql 0 -c "SELECT citus_add_node('127.0.0.1', ${CITUS_PORTS[3]})" >/dev/null
}

# citus_init_node N: initdb and start node N on port CITUS_PORTS[N]
citus_init_node() {
	local i="$1"
	citus_as_pg "$CITUS_BIN/initdb" -D "$CITUS_DIR/n$i" -A trust -U postgres >/dev/null || return 1
	cat >>"$CITUS_DIR/n$i/postgresql.conf" <<EOF
port = ${CITUS_PORTS[$i]}
listen_addresses = '127.0.0.1'
unix_socket_directories = '$CITUS_DIR'
shared_preload_libraries = 'citus'
max_connections = 200
max_prepared_transactions = 100
wal_level = logical
fsync = off
citus.shard_replication_factor = 1
EOF
	citus_start_node "$i"
}

citus_start_node() {
	citus_as_pg "$CITUS_BIN/pg_ctl" -D "$CITUS_DIR/n$1" -l "$CITUS_DIR/n$1.log" -w start >/dev/null
}

citus_stop_node() {
	citus_as_pg "$CITUS_BIN/pg_ctl" -D "$CITUS_DIR/n$1" -m immediate -w stop >/dev/null 2>&1
}

citus_stop() {
	local i
	[ -n "${CITUS_DIR:-}" ] || return 0
	for i in "${!CITUS_PORTS[@]}"; do citus_stop_node "$i"; done
	if [ "${BF_CITUS_KEEP:-0}" = 1 ]; then
		echo "citus: kept $CITUS_DIR"
	else
		rm -rf "$CITUS_DIR"
	fi
	CITUS_DIR=""
}

cpsql() {
	local n="$1"
	shift
	psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${CITUS_PORTS[$n]}" -U postgres -d postgres "$@"
}
