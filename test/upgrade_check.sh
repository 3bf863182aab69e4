#!/bin/bash
# The upgrade test: builds and installs the released 1.0 (from git history),
# makes values of several families, tracked tables of both methods and
# single- and multi-column indexes with it, then installs the current
# library and walks the chain of update scripts (sql/bloomfilter--A--B.sql)
# one ALTER EXTENSION ... UPDATE TO at a time.  At every stage (1.0, the new
# library under the 1.0 catalog, each version of the chain):
#
#   - every C function of the catalog resolves in the installed library;
#   - test/upgrade/answers.sql gives the 1.0 library's answers (no false
#     negative, the same false positives, the same bytes);
#   - test/upgrade/writes.sql (writes into 1.0's objects, rebuilds, new
#     objects) finds no missing key.
#
# Finally a database updated along the chain has the same extension catalog
# as a fresh CREATE EXTENSION (pg_dump --binary-upgrade --schema-only, which
# dumps the extension's members, compared without OIDs).
#
# Needs a running server (run under pg_virtualenv) and git history.  The
# current library is installed again on every exit path.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC="$PWD"
RELEASED_1_0=632cb821b28578709105d0cd9558970269596a5f
work="$(mktemp -d /tmp/bf-upgrade.XXXXXX)"
chmod 755 "$work"
reinstall() {
	make -s -C "$SRC" install >/dev/null || echo "upgrade test: could not reinstall the current library"
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS bf_upgrade" -c "DROP DATABASE IF EXISTS bf_upgrade_bare" \
		-c "DROP DATABASE IF EXISTS bf_upgrade_fresh" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap reinstall EXIT
say() { echo "upgrade test: [$(date +%T)] $*"; }
fail() { echo "upgrade test: FAILED: $*"; exit 1; }
psql_() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

# the chain of versions from 1.0, following the update scripts
chain="1.0"
v=1.0
while next="$(ls sql/bloomfilter--"$v"--*.sql 2>/dev/null | sed "s|^sql/bloomfilter--$v--\(.*\)\.sql$|\1|")" &&
	[ -n "$next" ]; do
	[ "$(echo "$next" | wc -l)" = 1 ] || fail "several updates from $v: $next"
	chain="$chain $next"
	v="$next"
done
default="$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" bloomfilter.control)"
[ "$v" = "$default" ] || fail "the chain $chain does not end at default_version $default"
say "chain: $chain"

git cat-file -e "$RELEASED_1_0^{commit}" 2>/dev/null ||
	fail "the released 1.0 ($RELEASED_1_0) is not in this clone's history (clone without --depth)"
git archive "$RELEASED_1_0" | tar -C "$work" -xf -
# (no LLVM bitcode: only the library is needed, and it halves the build;
# the current library's bitcode stays installed, so no JIT in this test)
export PGOPTIONS="${PGOPTIONS:-} -c jit=off -c client_min_messages=warning"
make -s -C "$work" with_llvm=no >"$work/build.log" 2>&1 || { tail "$work/build.log"; fail "1.0 does not build"; }
make -s -C "$work" with_llvm=no install >/dev/null
say "installed the released 1.0"

for db in bf_upgrade bf_upgrade_bare bf_upgrade_fresh; do
	psql_ -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
done
psql_ -d bf_upgrade -f test/upgrade/setup.sql >/dev/null
psql_ -d bf_upgrade_bare -c "CREATE EXTENSION bloomfilter VERSION '1.0'"

# every C function of the catalog has its symbol in the installed library
symbols() {
	psql_ -d "$1" <<'SQL'
DO $$
DECLARE
	f record;
	missing text := '';
BEGIN
	FOR f IN SELECT DISTINCT p.probin, p.prosrc FROM pg_proc p
			 JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
			 JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomfilter'
			 WHERE p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
	LOOP
		BEGIN
			EXECUTE format('CREATE FUNCTION pg_temp.bf_symbol_check() RETURNS void AS %L, %L LANGUAGE C',
						   f.probin, f.prosrc);
			DROP FUNCTION pg_temp.bf_symbol_check();
		EXCEPTION WHEN OTHERS THEN
			missing := missing || ' ' || f.prosrc;
		END;
	END LOOP;
	IF missing <> '' THEN
		RAISE EXCEPTION 'C functions missing from the library:%', missing;
	END IF;
END
$$;
SQL
}

stage=0
check() {
	local name="$1"
	stage=$((stage + 1))
	symbols bf_upgrade || fail "$name: the catalog calls C functions the library lacks"
	psql_ -d bf_upgrade -f test/upgrade/answers.sql >"$work/answers.$stage"
	psql_ -d bf_upgrade -v stage="s$stage" -f test/upgrade/writes.sql >"$work/writes.$stage"
	if [ $stage = 1 ]; then
		sed 's/^/    /' "$work/answers.1"
		# no false negative, late rows found, rebuilt values equal, scans right
		awk -F'|' '
			$1 == "value" || $1 == "tracked" { if ($3 != 0) bad = 1 }
			$1 == "index" { if ($2 != 0 || $4 != 0) bad = 1 }
			$1 == "value rebuilt" || $1 == "tracked late rows" { for (i = 2; i <= NF; i++) if ($i != "t") bad = 1 }
			$1 == "index scan" { scans = scans " " $2 }
			END { exit (bad || scans != " 3 1") }' "$work/answers.1" ||
			fail "1.0's own answers are wrong"
	else
		diff "$work/answers.1" "$work/answers.$stage" ||
			fail "$name: answers differ from the 1.0 library's (diff above)"
	fi
	diff "$work/writes.1" "$work/writes.$stage" || fail "$name: writes go wrong (diff above)"
	if grep -E '^(written|rebuilt|new objects), misses' "$work/writes.$stage" | grep -qvE '(\|0)+$'; then
		cat "$work/writes.$stage"
		fail "$name: keys written are missing"
	fi
	say "$name: same answers, $(grep -c . "$work/answers.$stage") lines; writes ok"
}

check "1.0"
make -s install >/dev/null
check "current library, 1.0 catalog"
for v in ${chain#1.0}; do
	psql_ -d bf_upgrade -c "ALTER EXTENSION bloomfilter UPDATE TO '$v'"
	psql_ -d bf_upgrade_bare -c "ALTER EXTENSION bloomfilter UPDATE TO '$v'"
	check "updated to $v"
done

# an updated catalog is a fresh one
psql_ -d bf_upgrade_fresh -c "CREATE EXTENSION bloomfilter"
for db in bf_upgrade_bare bf_upgrade_fresh; do
	# without what differs between any two databases: OIDs, transaction
	# ids, pg_dump's random \restrict key
	pg_dump --binary-upgrade --schema-only -d "$db" |
		grep -v -e '^--' -e 'binary_upgrade_set_next_' -e '^$' -e 'pg_catalog.set_config' \
			-e 'binary_upgrade_set_record_init_privs' -e '^\\restrict ' -e '^\\unrestrict ' |
		sed -e "s/relfrozenxid = '[0-9]*', relminmxid = '[0-9]*'/relfrozenxid = X, relminmxid = X/" \
			-e "s/WHERE oid = '[0-9]*'/WHERE oid = X/" \
			-e "s/\(binary_upgrade_create_empty_extension(.*\)'{[0-9,]*}'/\1'{OIDS}'/" >"$work/$db.sql"
done
members="$(grep -c 'ALTER EXTENSION bloomfilter ADD' "$work/bf_upgrade_fresh.sql" || true)"
[ "$members" -gt 50 ] || fail "the dump lists only $members members of the extension"
diff -u "$work/bf_upgrade_fresh.sql" "$work/bf_upgrade_bare.sql" ||
	fail "the catalog updated along $chain differs from a fresh install (diff above: - fresh, + updated)"
say "the updated catalog is the fresh one ($members members)"
echo "upgrade test: ok"
