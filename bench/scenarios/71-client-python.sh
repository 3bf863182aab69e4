# bench/scenarios/71-client-python.sh -- the Python client (clients/python):
# local check of an absent 8-byte key in a 12 MB filter (target <= 2 us)
# next to a server round trip of bf_might_contain, in one run
# (bench/clients/python.py).  Skipped (no rows) without psycopg 3 / xxhash.
# Sourced by run-inner.sh with lib.sh loaded (row, log).

if ! /usr/bin/python3 -c 'import psycopg, xxhash' 2>/dev/null; then
	log "71-client-python: skipped (needs python3-psycopg and python3-xxhash)"
else
	py_rows="$(mktemp /tmp/bf-bench71.XXXXXX)"
	PGDATABASE="$BENCH_DB" /usr/bin/python3 bench/clients/python.py >"$py_rows"
	declare -A PY=() PYN=()
	while IFS=$'\t' read -r name value unit note; do
		PY[$name]="$value $unit"
		PYN[$name]="$note"
	done <"$py_rows"
	rm -f "$py_rows"
	row "Python: local check, absent 8-byte key, 12 MB filter" "${PY[python contains, absent 8-byte key]}" "<= 2000 ns" \
		"BloomFilter.contains in CPython, CPU time, best of 30 runs of 20 000 keys (${PYN[python contains, absent 8-byte key]}); filter: ${PY[filter]}, ${PYN[filter]}"
	row "Python: local check, present key" "${PY[python contains, present key]}" "(info)" "${PYN[python contains, present key]}"
	row "Python: server round trip, bf_might_contain (psycopg, prepared)" "${PY[server round trip bf_might_contain]}" "(info)" \
		"${PY[round trip / local absent lookup]} the local check; ${PYN[server round trip bf_might_contain]}"
fi
