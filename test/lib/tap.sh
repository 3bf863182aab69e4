# The TAP tests of test/t (PostgreSQL::Test::Cluster) for the suites: runs
# the given test files through PGXS's prove_installcheck.  PostgreSQL refuses
# to run as root, so a root caller runs them as the user postgres; their
# tmp_check/ (clusters, logs) goes to a directory of their own rather than
# into the checkout (the Makefile used from there: its directory is srcdir,
# where prove runs).  On failure, prints the end of every log of
# tmp_check/log.  Returns 77 (a skipped suite) when every test skipped
# itself (prove: "Result: NOTESTS").
#
#   . test/lib/tap.sh; bf_tap test/t/001_crash_replica.pl
#
# BF_PROVE_FLAGS: prove's flags (--verbose: every check by name);
# BF_TAP_KEEP=1 keeps the directory (the path is printed).
bf_tap() {
	local src dir rc f
	local -a as_user=()
	src="$(pwd -P)"
	dir="$(mktemp -d /tmp/bf-tap.XXXXXX)"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir"
		as_user=(runuser -u postgres --)
	fi
	# git refuses a checkout owned by another user unless told it is safe
	# (the upgrade test reads the released 1.0 from the history)
	GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=safe.directory GIT_CONFIG_VALUE_0="$src" \
		"${as_user[@]}" make -s -C "$dir" -f "$src/Makefile" prove_installcheck \
		PROVE_TESTS="$*" PROVE_FLAGS="${BF_PROVE_FLAGS:---verbose}" 2>&1 | tee "$dir/prove.out"
	rc=${PIPESTATUS[0]}
	[ $rc -eq 0 ] && grep -q '^Result: NOTESTS' "$dir/prove.out" && rc=77
	if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
		for f in "$dir"/tmp_check/log/*; do
			[ -f "$f" ] || continue
			echo "== end of $f"
			tail -n 80 "$f"
		done
	fi
	if [ "${BF_TAP_KEEP:-0}" = 1 ]; then
		echo "tap: kept $dir"
	else
		rm -rf "$dir"
	fi
	return $rc
}
