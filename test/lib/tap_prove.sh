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
#   the tests' clusters get the settings pg_virtualenv -p gives the
#   regression suites' cluster (extension_destdir, dynamic_library_path)
#   through TEMP_CONFIG, which PostgreSQL::Test::Cluster appends to each
#   new cluster's postgresql.conf.
#
# The environment PGXS sets up for prove is kept.  BF_TAP_DESTDIR and
# BF_TAP_PKGLIBDIR come from the Makefile.
#
#   tap_prove.sh prove [prove's arguments]
set -e
# the test directory: TESTDATADIR since 16, TESTDIR/tmp_check before
data="${TESTDATADIR:-${TESTDIR:+$TESTDIR/tmp_check}}"
if [ -n "${BF_TAP_DESTDIR:-}" ] && [ -n "$data" ]; then
	conf="$data/bf_destdir.conf"
	{
		[ -z "${TEMP_CONFIG:-}" ] || cat "$TEMP_CONFIG"
		echo "extension_destdir = '$BF_TAP_DESTDIR'"
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
[ -z "$data" ] || [ ! -d "$data" ] || chown -R postgres: "$data"
if ! runuser -u postgres -- test -r . -a -x .; then
	echo "tap_prove: the user postgres cannot read $(pwd), where the TAP tests run" >&2
	exit 1
fi
# git refuses a checkout owned by another user unless told it is safe (the
# upgrade test reads the released 1.0 from the history)
GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="$(pwd -P)" \
	exec runuser -u postgres -- "$@"
