#!/bin/bash
# Documentation runs: every ```sql block of README.md and docs/*.md (or of
# the files given) runs as written, each in a new database of its own,
# stopping at the block's first error.  Only blocks fenced ```sql run: a
# block that is not meant to (output, settings, another language) takes
# another fence (```text, ```psql, ```ini, ```go).  A block that creates the extension itself gets an empty database;
# any other gets one where CREATE EXTENSION bloomfilter has run (as after
# the README's Install section) and nothing else, so each block must create
# the tables it uses.  Needs a running server (run under pg_virtualenv).
set -uo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d /tmp/bf-readme.XXXXXX)"
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
if [ $# -gt 0 ]; then files=("$@"); else files=(README.md docs/*.md); fi
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
failed=0
counts=""
total=0
for doc in "${files[@]}"; do
	# one file per block, named after its first line in the document
	awk -v dir="$work" -v doc="$(basename "$doc" .md)" '
		/^```sql[ \t]*$/ { inblock = 1; name = sprintf("%s/%s.%05d.sql", dir, doc, NR + 1); next }
		/^```/ && inblock { inblock = 0; close(name); next }
		inblock { print > name }' "$doc"
	in_doc=0
	for block in "$work/$(basename "$doc" .md)".*.sql; do
		[ -e "$block" ] || continue
		total=$((total + 1))
		in_doc=$((in_doc + 1))
		line=$((10#$(echo "$block" | sed 's/.*\.\([0-9]*\)\.sql$/\1/')))
		db="bf_readme_$total"
		psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
		grep -qi '^ *CREATE EXTENSION[^;]*bloomfilter' "$block" ||
			psql -X -q -d "$db" -c "CREATE EXTENSION bloomfilter" >/dev/null
		if psql -X -q -v ON_ERROR_STOP=1 -d "$db" -f "$block" >"$work/out" 2>&1; then
			echo "readme: $doc:$line ok"
		else
			failed=$((failed + 1))
			echo "readme: $doc:$line FAILED:"
			sed 's/^/    /' "$work/out" | grep -v '^    $' | tail -5
		fi
		psql -X -q -d postgres -c "DROP DATABASE $db" >/dev/null
	done
	counts="${counts:+$counts, }$doc $in_doc"
done
echo "readme: sql blocks per file: $counts"
echo "readme: $((total - failed)) of $total sql blocks ran"
[ $total -gt 0 ] && [ $failed -eq 0 ]
