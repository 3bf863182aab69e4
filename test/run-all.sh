#!/bin/bash
# Runs every test suite of the extension: installs dependencies, builds,
# installs, then runs the unit tests of the PostgreSQL-free core, the
# pg_regress and isolation suites (make installcheck), the dump/restore
# check of tracked filters (test/dump_restore.sh) and the independent
# reference reader (test/reference_check.py) in throwaway clusters.
set -uo pipefail
cd "$(dirname "$0")/.."
bash test/install-deps.sh || exit 1
make -s || exit 1
make -s install || exit 1

suites_passed=0
suites_failed=0
record() {
	if [ "$2" -eq 0 ]; then
		suites_passed=$((suites_passed + 1)); echo "== suite $1: ok"
	else
		suites_failed=$((suites_failed + 1)); echo "== suite $1: FAILED"
	fi
}

make -s unitcheck
record unit $?

# pg_regress suites in a throwaway cluster
pg_virtualenv make -s installcheck
rc=$?
[ $rc -ne 0 ] && head -300 regression.diffs output_iso/regression.diffs 2>/dev/null
record regress $rc

# pg_dump / pg_restore of bloomfilter values
pg_virtualenv bash test/pg_dump_check.sh
record pg_dump $?

# tracked filters across pg_dump -Fc / pg_restore
pg_virtualenv bash test/dump_restore.sh
record dump_restore $?

# the independent reader of docs/FORMAT.md against the extension
if [ -f test/reference_check.py ]; then
	pg_virtualenv /usr/bin/python3 test/reference_check.py
	record reference $?
fi

# the index access method: kill -9 mid-stream, recovery, streaming replica
bash test/crash_test.sh
record crash $?

echo "test suites: $suites_passed passed, $suites_failed failed"
[ "$suites_failed" -eq 0 ]
