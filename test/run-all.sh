#!/bin/bash
# The test command: installs dependencies, builds and installs the
# extension, then runs the suites of test/suites/NN-name.sh in order, each
# in its own bash, timed, a line per suite (in two lanes: see below).  A suite passes when it exits 0
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
#   BF_LANES=1 ...                      one suite at a time, output as it comes
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

# the suites to run, in order
selected=()
for suite in test/suites/[0-9]*.sh; do
	name="$(basename "$suite" .sh)"
	if [ $# -gt 0 ]; then
		match=0
		for f in "$@"; do case "$name" in *"$f"*) match=1 ;; esac; done
		[ $match = 1 ] || continue
	elif [ $all = 0 ] && [[ " $ROOT_SUITES " == *" $name "* ]]; then
		continue
	fi
	selected+=("$name")
done

# Two lanes on a machine of two cores or more: the suites whose servers are
# clusters of their own (PostgreSQL::Test::Cluster's TAP tests, the stress
# test's initdb), which mostly wait on their servers, run one after another
# beside the others, which run one after another too (those share
# pg_virtualenv's cluster, one at a time).  Each suite's output is printed
# whole when it ends, then its line.  BF_LANES=1: one lane, the output as
# it comes.
OWN_CLUSTER_SUITES="40-dump_restore 60-crash 61-track-chunks 62-stress 65-upgrade 67-pg_upgrade 66-auto_rebuild 68-stats"
lanes="${BF_LANES:-$([ "$(nproc)" -ge 2 ] && echo 2 || echo 1)}"
results="$(mktemp -d /tmp/bf-run-all.XXXXXX)"
trap 'rm -rf "$results"' EXIT

# run_suite NAME: runs it, then prints (under a lock, when it runs beside
# the other lane) its output and its line; its status goes to results/
run_suite() {
	local name="$1" t0 rc secs line
	t0=$(date +%s)
	if [ "$lanes" = 1 ]; then
		echo "== suite $name: started $(date +%T)"
		bash "test/suites/$name.sh"
		rc=$?
	else
		bash "test/suites/$name.sh" >"$results/$name.out" 2>&1 </dev/null
		rc=$?
	fi
	secs=$(($(date +%s) - t0))
	case $rc in
	0) line="== suite $name: ok ($secs s)" ;;
	77) line="== suite $name: skipped" ;;
	*) line="== suite $name: FAILED (exit $rc, $secs s)" ;;
	esac
	echo $rc >"$results/$name.rc"
	if [ "$lanes" = 1 ]; then
		echo "$line"
	else
		(
			flock 9
			echo "== suite $name: started $(date -d "@$t0" +%T)"
			cat "$results/$name.out"
			echo "$line"
		) 9>"$results/lock"
	fi
}

if [ "$lanes" = 1 ]; then
	for name in "${selected[@]}"; do run_suite "$name"; done
else
	own=()
	rest=()
	for name in "${selected[@]}"; do
		if [[ " $OWN_CLUSTER_SUITES " == *" $name "* ]]; then own+=("$name"); else rest+=("$name"); fi
	done
	( for name in "${own[@]}"; do run_suite "$name"; done ) &
	lane=$!
	for name in "${rest[@]}"; do run_suite "$name"; done
	wait $lane
fi

passed=0
failed=0
skipped=0
failed_names=""
for name in "${selected[@]}"; do
	rc="$(cat "$results/$name.rc" 2>/dev/null || echo 1)"
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
	elif [ "$rc" = 77 ]; then
		skipped=$((skipped + 1))
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
	fi
done
echo "== total: $(($(date +%s) - start_all)) s"
[ -n "$failed_names" ] && echo "== failed:$failed_names"
echo "suites: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
