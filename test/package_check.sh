#!/bin/bash
# The Debian package, as README.md's "Debian package" paragraph makes it: in
# a clean Debian root of this machine's release that has only this
# machine's PostgreSQL server installed (see test/lib/debroot.sh), with the
# source tree copied there without .git (as a tarball has it), runs the
# README's block of steps exactly as written (read from README.md, so the
# two cannot drift: install the build's dependencies, build
# postgresql-<V>-bloomfilter with pg_buildext, dpkg -i it), then checks the
# package and that CREATE EXTENSION works there.  Then the build with its
# checks, as root (dpkg-buildpackage -us -uc -b: pg_buildext installcheck
# runs the pg_regress and isolation suites in a pg_virtualenv cluster and
# the TAP tests as the user postgres, test/lib/tap_prove.sh), which must
# make the same package.  Run as root.
#
#   bash test/package_check.sh           this machine's release and server
#   bash test/package_check.sh sid-19    a root of test/lib/debroot.sh's
#                                        BF_ROOTS, for its PostgreSQL
#
# A root's PostgreSQL that is not its Debian release's default (19 from
# experimental) is named to pg_buildext by PG_SUPPORTED_VERSIONS.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
. test/lib/debroot.sh
work="$(mktemp -d /tmp/bf-package.XXXXXX)"
trap 'debroot_leave; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
say() { echo "package test: [$(date +%T)] $*"; }
fail() { echo "package test: FAILED: $*"; exit 1; }

root="${1:-}"
if [ -z "$root" ]; then
	v="$(pg_config --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')"
	. /etc/os-release
	suite="${VERSION_CODENAME:?}"
else
	v="$(debroot_field "$root" 3)"
	suite="$root"
	[ "$v" != - ] || fail "$root is not a root of BF_ROOTS (test/lib/debroot.sh)"
fi
version="$(dpkg-parsechangelog -l debian/changelog -S Version)"
extversion="$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" bloomfilter.control)"
[ "${version%-*}" = "$extversion" ] ||
	fail "debian/changelog's version $version is not default_version $extversion"

# the README's steps: the sh block after the marker line
steps="$(awk '/^<!-- package steps:/ { m = 1; next }
	m == 1 && /^```sh[ \t]*$/ { m = 2; next }
	m == 2 && /^```/ { exit }
	m == 2 { print }' README.md)"
[ -n "$steps" ] || fail "README.md has no block of package steps (a \`\`\`sh block after \"<!-- package steps:\")"
say "README's package steps:"
printf '%s\n' "$steps" | sed 's/^/    /'

if [ -z "$root" ]; then
	# a clean root that runs this machine's server (with a private layer
	# over the package cache: the fresh-machine check may be running apt in
	# the same cache beside it)
	base="$(debroot_prepare "$suite" base)" || fail "no $suite root"
	debroot_enter "$base" "$suite" "" private || fail "cannot enter the $suite root"
	# the package depends on the server release it was built against, so the
	# root gets this machine's Debian sources (e.g. bookworm-security's newer
	# minor release) as a user's machine has them
	hostsrc="$(grep -ls '^[^#]*deb\.debian\.org' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources || true)"
	if [ -n "$hostsrc" ]; then
		rm -f "$DEBROOT/etc/apt/sources.list"
		for f in $hostsrc; do cp "$f" "$DEBROOT$f"; done
	fi
	debroot_run_in "$DEBROOT" "set -e
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends postgresql-$v >/dev/null" DEBIAN_FRONTEND=noninteractive \
		>"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; fail "cannot install postgresql-$v in the clean root"; }
	pgenv=()
else
	# the matrix's root of that version (its server comes from where
	# BF_ROOTS says); pg_buildext builds for the versions Debian supports
	# unless told otherwise
	base="$(debroot_prepare "$root" deps "$SRC")" || fail "no $root root"
	debroot_enter "$base" "$root" "" private || fail "cannot enter the $root root"
	pgenv=(PG_SUPPORTED_VERSIONS="$v")
fi
# the source tree as a tarball has it (no .git), in a directory of its own
# (dpkg-buildpackage writes the packages beside it)
src="/build/bloomfilter-$extversion"
mkdir -p "$DEBROOT/build"
debroot_copy_source "$SRC" "$DEBROOT$src"
rm -rf "$DEBROOT$src/.git"
printf 'set -ex\n%s\n' "$steps" >"$DEBROOT/build/steps.sh"
t0=$(date +%s)
debroot_run_in "$DEBROOT" "cd $src && bash /build/steps.sh </dev/null" DEBIAN_FRONTEND=noninteractive "${pgenv[@]}" \
	>"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "README's package steps failed"; }
say "README's package steps ran in $(($(date +%s) - t0)) s"
deb="$DEBROOT/build/postgresql-$v-bloomfilter_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { ls "$DEBROOT/build"; fail "no package postgresql-$v-bloomfilter built"; }
if grep -E ':[0-9]+:[0-9]+: warning:' "$work/build.log"; then
	fail "the package build printed compiler warnings"
fi
say "built $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -c "$deb" >"$work/contents"
for f in "usr/lib/postgresql/$v/lib/bloomfilter.so" "usr/share/postgresql/$v/extension/bloomfilter.control" \
	"usr/share/postgresql/$v/extension/bloomfilter--1.0.sql"; do
	grep -q " \./$f\$" "$work/contents" || fail "the package lacks /$f"
done

# the check without network (test/lib/debroot.sh), beside other tests
debroot_run_isolated "$DEBROOT" "set -e
	dpkg-query -W -f='\${Status}\n' postgresql-$v-bloomfilter | grep -q 'ok installed'
	cd /tmp
	# -q -o: only the answers in the file (no command tags, nothing of pg_virtualenv)
	pg_virtualenv -v $v psql -X -q -At -v ON_ERROR_STOP=1 -o /tmp/check.out -c \"CREATE EXTENSION bloomfilter\" -c \"
		SELECT extversion FROM pg_extension WHERE extname = 'bloomfilter';
		CREATE TABLE t (k text);
		INSERT INTO t SELECT 'k' || g FROM generate_series(1, 1000) g;
		CREATE INDEX ON t USING bloomfilter (k);
		SELECT bf_contains(bf_add(bf_create(100), 'a'::text), 'a'::text),
			   bf_contains(bf_add(bf_create(100), 'a'::text), 'b'::text),
			   (SELECT count(*) FROM t WHERE NOT bf_index_contains('t_k_idx', k)),
			   (SELECT bf_agg(k) FROM t) IS NOT NULL\"
	cat /tmp/check.out" >"$work/root.log" 2>&1 || { tail -30 "$work/root.log"; fail "using the installed package failed"; }
got="$(grep -v '^ *$' "$DEBROOT/tmp/check.out" | tr '\n' ' ')"
[ "$got" = "$extversion t|f|0|t " ] || { tail -30 "$work/root.log"; fail "unexpected answers: $got"; }
say "installed by README's steps in a clean $suite root: CREATE EXTENSION gives $extversion, answers right"

# the build with its checks, as root, as a user building in a container
# does: the build-time dependencies the nocheck build left out (with
# network), then dpkg-buildpackage without network (the checks' clusters
# cannot meet those of tests running beside it)
debroot_run_in "$DEBROOT" "set -e
	cd $src
	apt-get install -y -qq --no-install-recommends \$(dpkg-checkbuilddeps 2>&1 |
		sed -n 's/.*[Uu]nmet build dependencies: //p' | sed 's/([^)]*)//g') >/dev/null" \
	DEBIAN_FRONTEND=noninteractive >"$work/apt-check.log" 2>&1 ||
	{ tail -30 "$work/apt-check.log"; fail "cannot install the checked build's dependencies"; }
rm -f "$deb"
t0=$(date +%s)
debroot_run_isolated "$DEBROOT" "cd $src && dpkg-buildpackage -us -uc -b </dev/null" "${pgenv[@]}" \
	>"$work/build-check.log" 2>&1 || {
	keep="$(mktemp /tmp/bf-package-check.XXXXXX.log)"
	cp "$work/build-check.log" "$keep"
	grep -E '^not ok|^# +Failed|^t/.*\.\. |^test/t/.*\.\. |Result:|Bailout|^\*\*\*|error:' "$work/build-check.log" | tail -40 || true
	fail "dpkg-buildpackage -us -uc -b (with its checks) as root failed (its log: $keep)"
}
[ -f "$deb" ] || fail "the checked build made no postgresql-$v-bloomfilter"
grep -q '^Result: PASS' "$work/build-check.log" ||
	{ tail -40 "$work/build-check.log"; fail "the checked build ran no TAP test"; }
passed="$(grep -oE 'All [0-9]+ tests passed' "$work/build-check.log" | grep -oE '[0-9]+' | paste -sd+ || true)"
tap="$(grep -oE '^Files=[0-9]+, Tests=[0-9]+' "$work/build-check.log" | tail -1 || true)"
tap_skip="$(grep -oE 'skipped: .*' "$work/build-check.log" | sort -u | paste -sd';' || true)"
say "dpkg-buildpackage -us -uc -b with its checks, as root: pg_regress and isolation ${passed:-none} passed; TAP: ${tap:-none}, all passed (${tap_skip:-none skipped}) ($(($(date +%s) - t0)) s)"
echo "package test: ok"
