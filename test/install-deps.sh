#!/bin/bash
# Installs what building, testing and the demo need on a Debian machine
# (bookworm, trixie or sid; run as root).  Skips apt when everything is
# present.
#
# The PostgreSQL version is BF_PG_VERSION if set, else the newest server
# installed, else the one Debian's "postgresql" package depends on (15 on
# bookworm, 17 on trixie, 18 on sid).  BF_DEPS_MATRIX=1 installs only what
# the version matrix's suites need.  BF_NESTED=1 (set inside the Debian
# roots of the version matrix and the fresh-machine check) leaves out what
# only the outer run needs to make those roots and the Debian package.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() { [ $updated = 1 ] || apt-get update -qq; updated=1; }

v="${BF_PG_VERSION:-}"
if [ -z "$v" ]; then
	v="$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null |
		sed 's|^/usr/lib/postgresql/\([0-9]*\)/.*|\1|' | sort -n | tail -1 || true)"
fi
if [ -z "$v" ]; then
	apt_update
	v="$(apt-cache depends postgresql 2>/dev/null |
		sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -1 || true)"
fi
[ -n "$v" ] || { echo "install-deps: cannot tell which PostgreSQL to install (set BF_PG_VERSION)" >&2; exit 1; }

# build and run
PKGS="postgresql-$v postgresql-common postgresql-server-dev-$v libxxhash-dev make gcc libc6-dev"
# tests: the reference reader, the released 1.0 for the upgrade test
PKGS="$PKGS python3 python3-xxhash git"
# the join-filter differential test (test/join_diff.py), which the matrix
# runs too: psycopg 3
PKGS="$PKGS python3-psycopg"
# the TAP tests (test/t): PostgreSQL::Test::Cluster, which postgresql-client-$v
# ships, runs its programs with IPC::Run
PKGS="$PKGS libipc-run-perl"
# the suites the version matrix does not run (BF_DEPS_MATRIX=1 there): the
# client libraries' (the Python
# client's pytest and venv, Go and its drivers, node and npm from wherever
# this machine has them) and, below, the fuzz suite's clang
full="$([ "${BF_DEPS_MATRIX:-0}" = 1 ] && echo 0 || echo 1)"
if [ "$full" = 1 ]; then
	PKGS="$PKGS python3-pytest python3-pip python3-venv python3-setuptools"
	# the Go and JavaScript clients: Go with lib/pq and pgx v4, and node
	# with npm (from wherever this machine has them).  Not inside the
	# fresh-machine check's root (BF_NESTED=1), where those two suites skip
	# themselves and CI runs them on the machine instead: Debian's npm is
	# some 500 packages (20 minutes of dpkg there)
	if [ "${BF_NESTED:-0}" != 1 ]; then
		command -v node >/dev/null && command -v npm >/dev/null || PKGS="$PKGS nodejs npm"
		PKGS="$PKGS golang-go golang-github-lib-pq-dev golang-github-jackc-pgx-v4-dev"
	fi
fi
# the outer run: Debian roots (version matrix, fresh machine), the package
[ "${BF_NESTED:-0}" = 1 ] ||
	PKGS="$PKGS debootstrap build-essential debhelper dpkg-dev postgresql-server-dev-all iproute2"
# the benchmark's peer extension (hll_add_agg), optional for tests
[ "${BF_WITH_BENCH:-0}" = 1 ] && PKGS="$PKGS postgresql-$v-hll"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing (PostgreSQL $v):$missing"
	apt_update
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# pg_cron, for the online rebuild run by a pg_cron job (test/t/005_pg_cron.pl,
# which skips itself without it): where the archive has it for this server
if ! dpkg-query -W -f='${Status}' "postgresql-$v-cron" 2>/dev/null | grep -q "ok installed"; then
	apt_update
	apt-get install -y -qq --no-install-recommends "postgresql-$v-cron" >/dev/null 2>&1 ||
		echo "install-deps: no postgresql-$v-cron here, the pg_cron test will skip" >&2
fi

# the fuzz suite: clang with its fuzzer and sanitizer runtime, which Debian
# ships as libclang-rt-N-dev for its default clang-N (without them the suite
# replays the corpus with random mutations under gcc's sanitizers)
[ "$full" = 1 ] || exit 0
if ! command -v clang >/dev/null; then
	apt_update
	apt-get install -y -qq --no-install-recommends clang >/dev/null
fi
cv="$(clang --version | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -1)"
if [ -n "$cv" ] && ! dpkg-query -W -f='${Status}' "libclang-rt-$cv-dev" 2>/dev/null | grep -q "ok installed"; then
	apt_update
	apt-get install -y -qq --no-install-recommends "libclang-rt-$cv-dev" >/dev/null ||
		echo "install-deps: no libclang-rt-$cv-dev, the fuzz suite will replay its corpus" >&2
fi
