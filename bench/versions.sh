#!/bin/bash
# bench/versions.sh -- the same scenarios on two PostgreSQL majors of one
# Debian root, on this machine: a row much worse on the newer major is a
# regression of the extension there (or of PostgreSQL) to explain.
#
#   bash bench/versions.sh                    56-probes, 41-track, 58-join
#                                             on 18 and 19 (root sid-19)
#   BENCH_VERSIONS="18 19" BENCH_ROOT_NAME=sid-19 bash bench/versions.sh 56-probes
#   BENCH_CALLGRIND=1 bash bench/versions.sh -    no scenario: instructions
#                                             per lookup statement instead
#                                             (bench/track_callgrind.sh for
#                                             both methods), which the
#                                             machine's load does not change
#                                             (STATS=on|off: as the script's,
#                                             the library preloaded)
#
# The root is the matrix's (test/lib/debroot.sh; test/prepare-roots.sh
# makes it), where 19 comes from Debian's experimental suite with 18
# beside it.  The extension is built (without LLVM bitcode) and installed
# for each major in turn, then bench/run.sh runs the scenarios whose names
# contain one of the arguments with that major's server; each major's
# table of rows is printed and kept in bench/results/versions-<major>.md.
# The majors take turns scenario by scenario, so a change of the machine's
# load falls on both.  Run as root; the root is isolated from the network
# and from clusters running beside it.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/debroot.sh
trap debroot_leave EXIT
trap 'exit 130' INT TERM

root="${BENCH_ROOT_NAME:-sid-19}"
versions="${BENCH_VERSIONS:-18 19}"
scenarios="${*:-56-probes 41-track 58-join}"
[ "$scenarios" = - ] && scenarios=""
lower="$(debroot_prepare "$root" deps "$PWD")" || exit 1
debroot_enter "$lower" "$root" "$PWD" || exit 1
if [ "${BENCH_CALLGRIND:-0}" = 1 ]; then
	debroot_run_in "$DEBROOT" "apt-get install -y -q valgrind >/dev/null" DEBIAN_FRONTEND=noninteractive || exit 1
fi

# shellcheck disable=SC2016 # expanded in the root
inner='set -e
cd /src
for v in $VERSIONS; do
	mkdir -p /tmp/build-$v
	tar --exclude=./.git -cf - . | tar -C /tmp/build-$v -xf -
	make -s -C /tmp/build-$v PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config with_llvm=no clean all install >/dev/null
	echo "versions: built and installed for $v"
done
for s in $SCENARIOS; do
	for v in $VERSIONS; do
		echo "versions: [$(date +%T)] $s on $v"
		PATH=/usr/lib/postgresql/$v/bin:$PATH bash /tmp/build-$v/bench/run.sh "$s" >/tmp/run-$v-$s.log 2>&1 ||
			{ tail -30 /tmp/run-$v-$s.log; exit 1; }
		grep "^|" /tmp/build-$v/bench/results/latest.md | grep -v "^| name |\|^|---" >>/tmp/rows-$v.md || true
	done
done
if [ "$CALLGRIND" = 1 ]; then
	for m in index trigger; do
		for v in $VERSIONS; do
			echo "versions: [$(date +%T)] callgrind, method $m, on $v"
			PG_BINDIR=/usr/lib/postgresql/$v/bin METHOD=$m STATS=$STATS bash /tmp/build-$v/bench/track_callgrind.sh 2>&1 |
				sed "s/^/| $v $m /" | tee -a /tmp/rows-$v.md
		done
	done
fi
for v in $VERSIONS; do
	echo "versions: PostgreSQL $v"
	cat /tmp/rows-$v.md
done'
debroot_run_isolated "$DEBROOT" "$inner" VERSIONS="$versions" SCENARIOS="$scenarios" \
	CALLGRIND="${BENCH_CALLGRIND:-0}" STATS="${STATS:-}" \
	BENCH_CHUNK_ROUNDS="${BENCH_CHUNK_ROUNDS:-}"
rc=$?
for v in $versions; do
	[ -f "$DEBROOT/tmp/rows-$v.md" ] && cp "$DEBROOT/tmp/rows-$v.md" "bench/results/versions-$v.md"
done
exit $rc
