#!/bin/bash
# The test command: installs dependencies, builds and installs the
# extension, then runs every suite of test/suites/NN-name.sh in order, each
# in its own bash, timed.  A suite passes when it exits 0.
#
#   bash test/run-all.sh            every suite
#   bash test/run-all.sh regress    only suites whose file name contains "regress"
set -uo pipefail
cd "$(dirname "$0")/.."
filter="${1:-}"
start_all=$(date +%s)
bash test/install-deps.sh || exit 1
make -s || exit 1
make -s install || exit 1
echo "== build and install: $(($(date +%s) - start_all)) s"

passed=0
failed=0
failed_names=""
for suite in test/suites/[0-9]*.sh; do
	name="$(basename "$suite" .sh)"
	case "$name" in *"$filter"*) ;; *) continue ;; esac
	echo "== suite $name: started $(date +%T)"
	t0=$(date +%s)
	bash "$suite"
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		passed=$((passed + 1))
		echo "== suite $name: ok ($secs s)"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		echo "== suite $name: FAILED (exit $rc, $secs s)"
	fi
done
echo "== total: $(($(date +%s) - start_all)) s"
[ -n "$failed_names" ] && echo "== failed:$failed_names"
echo "test suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
