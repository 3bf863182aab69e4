# bench/scenarios/70-client-go.sh -- the Go client (clients/go): local check
# of an absent 8-byte key in a 12 MB filter (target <= 150 ns) next to a
# server round trip of bf_might_contain, in one run
# (bench/clients/go-lookup, built in GOPATH mode with Debian's pgx v4);
# and the cache-penetration guard of examples/go-cache-guard in front of
# a table of 10 M keys: database queries avoided, latency of a request
# turned away.
# Skipped (no rows) when go or pgx are missing.
# Sourced by run-inner.sh with lib.sh loaded (row, log).

if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/jackc/pgx ]; then
	log "70-client-go: skipped (needs golang-go and golang-github-jackc-pgx-v4-dev)"
else
	(
		. clients/go/scripts/gopath.sh
		bf_go_build bench/clients/go-lookup "$bf_gopath/go-lookup" >&2
		PGDATABASE="$BENCH_DB" "$bf_gopath/go-lookup"
	) | while IFS='|' read -r _ name value target note _; do
		row "$(echo "$name" | xargs)" "$(echo "$value" | xargs)" "$(echo "$target" | xargs)" "$(echo "$note" | xargs)"
	done
	GK="${BENCH_GUARD_KEYS:-10000000}"
	guard="$(
		. clients/go/scripts/gopath.sh
		bf_go_build examples/go-cache-guard "$bf_gopath/cache-guard" >&2
		PGDATABASE="$BENCH_DB" "$bf_gopath/cache-guard" -keys "$GK" -requests 1000000 -miss 0.9
	)"
	log "70-client-go: cache guard: $guard"
	avoided="$(sed -n 's/^database queries: .*(\([0-9.]*\)% of all requests.*/\1/p' <<<"$guard")"
	away="$(sed -n 's/^turned-away request: //p' <<<"$guard")"
	queried="$(sed -n 's/^request that queried: //p' <<<"$guard")"
	row "Go cache guard (examples/go-cache-guard): database queries avoided" "$avoided %" "(info)" \
		"$(fmt_int "$GK") keys tracked, 1 000 000 requests of which 90 % for ids that do not exist; $(sed -n 's/^database queries: //p' <<<"$guard")"
	row "Go cache guard: a request turned away" "$away" "(info)" "a request that went to the database: $queried"
	q "DROP TABLE IF EXISTS guard_items" >/dev/null
fi
