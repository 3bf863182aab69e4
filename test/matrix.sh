#!/bin/bash
# The version matrix: builds the extension (no compiler warning allowed, from
# gcc nor from clang's bitcode pass: test/bitcode_check.sh) and runs the
# unit, layout, pg_regress, isolation, every TAP test (dump/restore, crash,
# chunked filters, upgrade, pg_upgrade, rebuild worker, statistics), the
# join-filter differential test and the README suite on the PostgreSQL of
# other Debian releases,
# each in a minimal Debian root (test/lib/debroot.sh: BF_ROOTS names them;
# cached under /var/cache/bloomfilter-test, a throwaway overlay per run).
#
#   bash test/matrix.sh               trixie (17), sid (18), sid-19 (19)
#   bash test/matrix.sh sid-19        one root
#   BF_MATRIX_SUITES="regress" ...    other suites of test/run-all.sh
#
# Bookworm's 15 is the version of the test command itself.  16 is not in
# Debian's archive; the code is kept correct for it by its API
# (src/common/bf_compat.h).  Run as root.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/debroot.sh
trap debroot_leave EXIT
trap 'exit 130' INT TERM

rc=0
suites="${BF_MATRIX_SUITES:-unit layout regress dump_restore crash track-chunks upgrade pg_upgrade auto_rebuild stats join-filter readme}"
for suite in ${*:-trixie sid sid-19}; do
	t0=$(date +%s)
	echo "matrix: [$(date +%T)] $suite"
	if lower="$(debroot_prepare "$suite" deps "$PWD")" &&
		debroot_enter "$lower" "$suite" "$PWD"; then
		echo "matrix: [$(date +%T)] $suite root ready, PostgreSQL $(debroot_field "$suite" 3) ($(($(date +%s) - t0)) s)"
		# what test/install-deps.sh asks for now and the cached root lacks,
		# with network; then, without (test/lib/debroot.sh), clang's bitcode
		# pass with no warning (test/bitcode_check.sh: this version's headers
		# and clang, which Debian builds it with), and the suites, built
		# without LLVM bitcode, which only JIT inlining uses (half the build)
		debroot_run_in "$DEBROOT" "cd /src && bash test/install-deps.sh" BF_NESTED=1 BF_DEPS_MATRIX=1 &&
			debroot_run_isolated "$DEBROOT" "cd /src && bash test/bitcode_check.sh" &&
			debroot_run_isolated "$DEBROOT" "cd /src && bash test/run-all.sh $suites" \
				BF_NESTED=1 BF_DEPS_MATRIX=1 BF_MAKE_ARGS=with_llvm=no
		r=$?
	else
		r=1
	fi
	debroot_leave
	if [ $r -eq 0 ]; then
		echo "matrix: $suite ok ($(($(date +%s) - t0)) s)"
	else
		echo "matrix: $suite FAILED ($(($(date +%s) - t0)) s)"
		rc=1
	fi
done
exit $rc
