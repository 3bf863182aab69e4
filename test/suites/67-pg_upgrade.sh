# pg_upgrade (--copy and --link) and pg_dump/pg_restore from the newest
# older PostgreSQL major installed beside the one under test (sid-19 of the
# version matrix: 18 beside 19), with objects of every kind and the rebuild
# worker preloaded (test/t/007_pg_upgrade.pl).  As root, this tree is built
# and installed for the older major first (from a copy, so that the build
# of the version under test is left alone).  Skipped (77), saying why,
# where only one major with its server-dev package is installed.
. test/lib/tap.sh
new="$(pg_config --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')"
old=""
for pgc in /usr/lib/postgresql/*/bin/pg_config; do
	[ -x "$pgc" ] || continue
	v="$("$pgc" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')"
	[ "$v" -lt "$new" ] && [ -x "$(dirname "$pgc")/postgres" ] &&
		[ -e "$("$pgc" --pgxs)" ] && { [ -z "$old" ] || [ "$v" -gt "$old" ]; } && old="$v"
done
if [ -z "$old" ]; then
	echo "pg_upgrade: skipped: needs an older PostgreSQL major beside $new, its server and" \
		"postgresql-server-dev-<V> (the version matrix's sid-19 root has 18 beside 19)"
	exit 77
fi
if [ "$(id -u)" != 0 ]; then
	echo "pg_upgrade: skipped: installing the extension for PostgreSQL $old needs root"
	exit 77
fi
pgc="/usr/lib/postgresql/$old/bin/pg_config"
build="$(mktemp -d /tmp/bf-pgupgrade.XXXXXX)"
trap 'rm -rf "$build"' EXIT
tar --exclude=./.git --exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude=node_modules \
	--exclude=./tmp_check -cf - . | tar -C "$build" -xf - || exit 1
echo "pg_upgrade: building and installing bloomfilter for PostgreSQL $old"
if ! make -s -C "$build" -j"$(nproc)" PG_CONFIG="$pgc" with_llvm=no >"$build/build.log" 2>&1 ||
	! make -s -C "$build" PG_CONFIG="$pgc" with_llvm=no install >>"$build/build.log" 2>&1; then
	tail -30 "$build/build.log"
	echo "pg_upgrade: the build for PostgreSQL $old failed"
	exit 1
fi
BF_OLD_INSTALL="$("$pgc" --bindir | sed 's|/bin$||')"
export BF_OLD_INSTALL
bf_tap test/t/007_pg_upgrade.pl
