#!/bin/bash
# The Debian package: builds postgresql-<V>-bloomfilter from debian/ (the way
# Debian builds PostgreSQL extensions: pg_buildext, debian/pgversions) for
# the PostgreSQL installed here, installs it with dpkg -i in a clean Debian
# root of this machine's release that has only that server installed (see
# test/lib/debroot.sh), and checks that CREATE EXTENSION works there.
# Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
. test/lib/debroot.sh
work="$(mktemp -d /tmp/bf-package.XXXXXX)"
trap 'debroot_leave; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
say() { echo "package test: [$(date +%T)] $*"; }
fail() { echo "package test: FAILED: $*"; exit 1; }

v="$(pg_config --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')"
. /etc/os-release
suite="${VERSION_CODENAME:?}"
version="$(dpkg-parsechangelog -l debian/changelog -S Version)"
extversion="$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" bloomfilter.control)"
[ "${version%-*}" = "$extversion" ] ||
	fail "debian/changelog's version $version is not default_version $extversion"

# build, from a copy of the tree (updatecontrol rewrites debian/control)
mkdir "$work/bloomfilter-$extversion"
debroot_copy_source "$SRC" "$work/bloomfilter-$extversion"
rm -rf "$work/bloomfilter-$extversion/.git"
(
	cd "$work/bloomfilter-$extversion"
	export PG_SUPPORTED_VERSIONS=installed DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" DEB_BUILD_PROFILES=nocheck
	pg_buildext updatecontrol
	dpkg-buildpackage -us -uc -b >"$work/build.log" 2>&1
) || { tail -40 "$work/build.log"; fail "dpkg-buildpackage failed"; }
deb="$work/postgresql-$v-bloomfilter_${version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { ls "$work"; fail "no package postgresql-$v-bloomfilter built"; }
if grep -q 'warning:' "$work/build.log"; then
	grep 'warning:' "$work/build.log"
	fail "the package build printed compiler warnings"
fi
say "built $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
dpkg-deb -c "$deb" >"$work/contents"
for f in "usr/lib/postgresql/$v/lib/bloomfilter.so" "usr/share/postgresql/$v/extension/bloomfilter.control" \
	"usr/share/postgresql/$v/extension/bloomfilter--1.0.sql"; do
	grep -q " \./$f\$" "$work/contents" || fail "the package lacks /$f"
done

# install it in a clean root that has the server only
base="$(debroot_prepare "$suite" base)" || fail "no $suite root"
# (with a private layer over the package cache: the fresh-machine check may
# be running apt in the same cache beside it)
debroot_enter "$base" "$suite" "" private || fail "cannot enter the $suite root"
cp "$deb" "$DEBROOT/tmp/"
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
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-$v >/dev/null" \
	>"$work/apt.log" 2>&1 || { tail -30 "$work/apt.log"; fail "cannot install postgresql-$v in the clean root"; }
# the check without network (test/lib/debroot.sh), beside other tests
debroot_run_isolated "$DEBROOT" "set -e
	dpkg -i /tmp/$(basename "$deb")
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
	cat /tmp/check.out" >"$work/root.log" 2>&1 || { tail -30 "$work/root.log"; fail "installing or using the package failed"; }
got="$(grep -v '^ *$' "$DEBROOT/tmp/check.out" | tr '\n' ' ')"
[ "$got" = "$extversion t|f|0|t " ] || { tail -30 "$work/root.log"; fail "unexpected answers: $got"; }
say "installed with dpkg -i in a clean $suite root: CREATE EXTENSION gives $extversion, answers right"
echo "package test: ok"
