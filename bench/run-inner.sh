#!/usr/bin/env bash
# bench/run-inner.sh -- runs inside the pg_virtualenv cluster made by
# bench/run.sh (PGHOST, PGPORT, PGUSER, PGPASSWORD are set).  Not meant to be
# run by hand, although it works against any server the PG* variables reach.
set -euo pipefail

BENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
filter="${1:-}"
export BENCH_ROOT
export BENCH_DB=bench

workdir="$(mktemp -d /tmp/bf-bench.XXXXXX)"
trap 'rm -rf "$workdir"' EXIT
export BENCH_ROWS="$workdir/rows.tsv"
: >"$BENCH_ROWS"

# shellcheck source=lib.sh
. "$BENCH_ROOT/lib.sh"

started="$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
t_start=$SECONDS

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $BENCH_DB" >/dev/null
if ! q "CREATE EXTENSION bloomfilter" >"$workdir/ext.log" 2>&1; then
	cat "$workdir/ext.log" >&2
	echo "bench: CREATE EXTENSION bloomfilter failed -- is the extension built and installed?" >&2
	echo "bench: run 'make install' in the source tree first (on the shared machine:" >&2
	echo "bench:   flock /tmp/bf-install.lock make -s install)." >&2
	exit 1
fi

pg_version="$(q "SELECT version()")"
ext_version="$(q "SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter'")"
settings="$(q "SELECT string_agg(name || '=' || setting || coalesce(unit, ''), ', ' ORDER BY name)
	FROM pg_settings WHERE name IN ('shared_buffers', 'work_mem', 'max_parallel_workers_per_gather', 'jit')")"
log "server: $pg_version"
log "settings: $settings"

failed=()
ran=()
for script in "$BENCH_ROOT"/scenarios/[0-9][0-9]-*.sh; do
	[ -e "$script" ] || continue
	name="$(basename "$script")"
	if [ -n "$filter" ] && [[ "$name" != *"$filter"* ]]; then
		continue
	fi
	ran+=("$name")
	log "=== scenario $name"
	t0=$SECONDS
	# a subshell, so that a failing scenario (set -e) cannot stop the others
	# or leak variables into them; rows survive in $BENCH_ROWS.  Not inside
	# "if (...)": bash ignores set -e in a tested command, even a subshell.
	set +e
	(set -euo pipefail; cd "$BENCH_ROOT/.."; . "$script")
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then
		log "=== scenario $name done in $((SECONDS - t0)) s"
	else
		log "=== scenario $name FAILED after $((SECONDS - t0)) s"
		failed+=("$name")
		row "$name" "FAILED" "" "the scenario exited with an error; see the log above"
	fi
done

if [ ${#ran[@]} -eq 0 ]; then
	echo "bench: no scenario matches '${filter}'" >&2
	exit 1
fi

elapsed=$((SECONDS - t_start))

# ---- the table ----
print_table() {
	awk -F '\t' '
		{ for (i = 1; i <= 4; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
		END {
			split("name value target note", h, " ")
			for (i = 1; i <= 4; i++) if (length(h[i]) > w[i]) w[i] = length(h[i])
			printf "%-*s | %*s | %-*s | %s\n", w[1], h[1], w[2], h[2], w[3], h[3], h[4]
			printf "%s-+-%s-+-%s-+-%s\n", sep(w[1]), sep(w[2]), sep(w[3]), sep(w[4])
			for (r = 1; r <= NR; r++)
				printf "%-*s | %*s | %-*s | %s\n", w[1], c[r, 1], w[2], c[r, 2], w[3], c[r, 3], c[r, 4]
		}
		function sep(n,   s) { s = ""; while (n-- > 0) s = s "-"; return s }
	' "$BENCH_ROWS"
}

cpu_model="$(awk -F ': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
[ -n "$cpu_model" ] || cpu_model="$(uname -m)"
ram_gb="$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576 }' /proc/meminfo)"
# the benchmark runs the INSTALLED library, which need not be built from
# this tree: identify both
libfile="$(pg_config --pkglibdir)/bloomfilter.so"
libinfo="$(date -u -r "$libfile" '+%Y-%m-%d %H:%M:%S UTC' 2>/dev/null || echo '?'), sha256 $(sha256sum "$libfile" 2>/dev/null | cut -c1-12)"
commit="$(git -C "$BENCH_ROOT/.." rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git -C "$BENCH_ROOT/.." status --porcelain -- src sql 2>/dev/null || true)" ]; then
	commit="$commit (src/ or sql/ modified)"
fi

echo
echo "bloomfilter benchmark, $started, ${elapsed} s; scenarios: ${ran[*]}"
print_table
echo

mkdir -p "$BENCH_ROOT/results"
{
	echo "# bloomfilter benchmark results"
	echo
	echo "- date: $started (${elapsed} s)"
	echo "- command: \`bash bench/run.sh${filter:+ $filter}\`$([ -n "$filter" ] && echo ' (partial run)')"
	echo "- scenarios: ${ran[*]}"
	echo "- extension: version $ext_version, installed $libfile (modified $libinfo); tree at commit $commit"
	echo "- machine: $(nproc) CPUs, $cpu_model, ${ram_gb} GiB RAM, $(uname -sr)"
	echo "- server: $pg_version"
	echo "- settings: $settings"
	echo
	echo "| name | value | target | note |"
	echo "|---|---:|---|---|"
	awk -F '\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$BENCH_ROWS"
} >"$BENCH_ROOT/results/latest.md"
log "wrote bench/results/latest.md"

if [ ${#failed[@]} -gt 0 ]; then
	echo "bench: FAILED scenarios: ${failed[*]}" >&2
	exit 1
fi
