#!/bin/sh
# The TAP tests' prove (the Makefile's PROVE), for two callers PGXS alone
# does not serve:
#
# - root ("make installcheck" in a Debian package build with its checks,
#   pg_buildext installcheck, or in a container): PostgreSQL refuses to run
#   as root and the tests' clusters (PostgreSQL::Test::Cluster) run initdb
#   and postgres as the caller, so prove runs as the user postgres, to
#   whom the test directory (tmp_check, made by root) is handed;
# - an installation into DESTDIR (the package build again: the files are
#   in debian/postgresql-<V>-bloomfilter, not in the server's directories):
#   the tests' clusters need the settings pg_virtualenv -p gives the
#   regression suites' cluster.  A newer pg_virtualenv hands them to
#   PostgreSQL::Test::Cluster itself (PG_TEST_INITDB_EXTRA_OPTS); for an
#   older one they go through TEMP_CONFIG, which the clusters append to
#   their postgresql.conf: extension_destdir where the server has Debian's
#   patch for it, extension_control_path (18 and later) elsewhere, and
#   dynamic_library_path.
#
# The environment PGXS sets up for prove is kept.  BF_TAP_DESTDIR,
# BF_TAP_PKGLIBDIR and BF_TAP_SHAREDIR come from the Makefile.
#
#   tap_prove.sh prove [prove's arguments]
set -e
# the test directory: TESTDATADIR since 16, TESTDIR/tmp_check before
data="${TESTDATADIR:-${TESTDIR:+$TESTDIR/tmp_check}}"
if [ -n "${BF_TAP_DESTDIR:-}" ] && [ -n "$data" ] && [ -z "${PG_TEST_INITDB_EXTRA_OPTS:-}" ]; then
	conf="$data/bf_destdir.conf"
	{
		[ -z "${TEMP_CONFIG:-}" ] || cat "$TEMP_CONFIG"
		if grep -q extension_destdir "$BF_TAP_SHAREDIR/postgresql.conf.sample" 2>/dev/null; then
			echo "extension_destdir = '$BF_TAP_DESTDIR'"
		else
			echo "extension_control_path = '$BF_TAP_DESTDIR$BF_TAP_SHAREDIR:\$system'"
		fi
		echo "dynamic_library_path = '$BF_TAP_DESTDIR$BF_TAP_PKGLIBDIR:$BF_TAP_PKGLIBDIR'"
	} >"$conf"
	TEMP_CONFIG="$conf"
	export TEMP_CONFIG
fi
[ "$(id -u)" = 0 ] || exec "$@"

if ! id postgres >/dev/null 2>&1; then
	echo "tap_prove: the TAP tests cannot run as root, and there is no user postgres to run them" >&2
	exit 1
fi
# pg_virtualenv's include file (PG_TEST_INITDB_EXTRA_OPTS) lies in its own
# directory, which postgres may not read: a copy in the test directory
inc="$(printf '%s\n' "${PG_TEST_INITDB_EXTRA_OPTS:-}" | sed -n 's/.*include=\([^ ]*\).*/\1/p')"
if [ -n "$inc" ] && [ -r "$inc" ] && [ -n "$data" ] && [ -d "$data" ]; then
	cp "$inc" "$data/bf_include.conf"
	PG_TEST_INITDB_EXTRA_OPTS="$(printf '%s' "$PG_TEST_INITDB_EXTRA_OPTS" |
		sed "s|include=$inc|include=$data/bf_include.conf|")"
	export PG_TEST_INITDB_EXTRA_OPTS
fi
[ -z "$data" ] || [ ! -d "$data" ] || chown -R postgres: "$data"
if ! runuser -u postgres -- test -r . -a -x .; then
	echo "tap_prove: the user postgres cannot read $(pwd), where the TAP tests run" >&2
	exit 1
fi
# git refuses a checkout owned by another user unless told it is safe (the
# upgrade test reads the released 1.0 from the history)
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="$(pwd -P)" \
	exec runuser -u postgres -- "$@"
