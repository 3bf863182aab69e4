#!/bin/bash
# The test command: installs dependencies, builds and installs the
# extension, then runs the suites of test/suites/NN-name.sh in order, each
# in its own bash, timed, a line per suite.  A suite passes when it exits 0
# and is skipped when it exits 77 (the suites that make Debian roots skip
# themselves inside one, where BF_NESTED=1).  The build fails on any
# compiler warning.
#
#   bash test/run-all.sh                the suites that check this machine's
#                                       build (a few minutes on 2 cores)
#   bash test/run-all.sh --all          every suite, with the longer
#                                       settings (BF_LONG=1 unless set): also
#                                       those that make Debian roots or need
#                                       Citus ($ROOT_SUITES below), as CI does
#   bash test/run-all.sh regress crash  only suites whose file name contains
#                                       "regress" or "crash" (any suite)
#   BF_MAKE_ARGS=with_llvm=no ...       extra arguments of make (build, install)
#   BF_SKIP_BUILD=1 ... package matrix  no build here (those suites build in roots)
#   BF_LONG=1 ...                       the suites' longer settings, which
#                                       CI uses: more fuzzing, join queries,
#                                       stress time, client inputs, every
#                                       release upgraded from
set -uo pipefail
cd "$(dirname "$0")/.."
# a loaded machine can take more than pg_ctl's 60 s to start a cluster
export PGCTLTIMEOUT="${PGCTLTIMEOUT:-600}"
start_all=$(date +%s)

# the suites that make Debian roots (package, version matrix, fresh
# machine) or need Citus built for this server: run by --all, by name, and
# in CI (.ci/run), not by default
ROOT_SUITES="80-package 85-matrix 90-fresh-machine 92-citus"
all=0
if [ "${1:-}" = --all ]; then
	all=1
	shift
	export BF_LONG="${BF_LONG:-1}"
fi
bash test/install-deps.sh || exit 1
# BF_SKIP_BUILD=1: for suites that build in roots of their own (package,
# matrix), where this machine's build would go unused
if [ "${BF_SKIP_BUILD:-0}" != 1 ]; then
	make -s -j"$(nproc)" ${BF_MAKE_ARGS:-} 2>build.log
	rc=$?
	cat build.log >&2
	[ $rc -eq 0 ] || exit 1
	if grep -q 'warning:' build.log; then
		echo "== build printed compiler warnings (none are allowed)"
		exit 1
	fi
	make -s ${BF_MAKE_ARGS:-} install || exit 1
	echo "== build and install ($(pg_config --version)): $(($(date +%s) - start_all)) s"
fi

passed=0
failed=0
skipped=0
failed_names=""
for suite in test/suites/[0-9]*.sh; do
	name="$(basename "$suite" .sh)"
	if [ $# -gt 0 ]; then
		match=0
		for f in "$@"; do case "$name" in *"$f"*) match=1 ;; esac; done
		[ $match = 1 ] || continue
	elif [ $all = 0 ] && [[ " $ROOT_SUITES " == *" $name "* ]]; then
		continue
	fi
	echo "== suite $name: started $(date +%T)"
	t0=$(date +%s)
	bash "$suite"
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "== suite $name: ok ($secs s)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "== suite $name: skipped"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		echo "== suite $name: FAILED (exit $rc, $secs s)"
	fi
done
echo "== total: $(($(date +%s) - start_all)) s"
[ -n "$failed_names" ] && echo "== failed:$failed_names"
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
