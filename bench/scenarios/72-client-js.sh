# bench/scenarios/72-client-js.sh -- the JavaScript client (clients/js):
# local lookup of an absent 8-byte key in a 12 MB filter (<= 1 us) next to a
# server round trip of bf_might_contain, in one run (bench/clients/js-lookup.js).
# Skipped (no rows) when node or clients/js/node_modules are missing.
# Sourced by run-inner.sh with lib.sh loaded (row, log).

if ! command -v node >/dev/null || [ ! -d clients/js/node_modules ]; then
	log "72-client-js: skipped (needs node and 'npm ci' in clients/js)"
else
	js_rows="$(mktemp /tmp/bf-bench72.XXXXXX)"
	PGDATABASE="$BENCH_DB" node bench/clients/js-lookup.js >"$js_rows"
	while IFS=$'\t' read -r name value target note; do
		row "$name" "$value" "$target" "$note"
	done <"$js_rows"
	rm -f "$js_rows"
fi
