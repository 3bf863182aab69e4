#!/bin/bash
# The clang pass of the build: where PostgreSQL was built with LLVM, PGXS
# also compiles every source file with clang into LLVM bitcode (for JIT
# inlining), and the no-warning rule holds for that compiler too.  The
# version matrix builds with with_llvm=no (half the build time) and runs
# this instead, once per version: it compiles each .c of src/ to its .bc with
# the server's clang and fails on any warning.  Exits 77 (skipped, with the
# reason) where the server has no LLVM support.
#
#   bash test/bitcode_check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
if ! pg_config --configure | grep -q -- "--with-llvm"; then
	echo "bitcode: $(pg_config --version) was built without LLVM (--with-llvm): no clang pass to check; skipped"
	exit 77
fi
global="$(dirname "$(pg_config --pgxs)")/../Makefile.global"
clang="$(sed -n 's/^CLANG *= *//p' "$global" | head -1)"
if [ -z "$clang" ] || ! command -v "${clang%% *}" >/dev/null; then
	echo "bitcode: the clang PGXS runs ('${clang:-unset}' in $global) is not installed (Debian: postgresql-server-dev-<V> depends on it)"
	exit 1
fi
bc=$(find src -name "*.c" | sort | sed 's/\.c$/.bc/')
# shellcheck disable=SC2086
rm -f $bc
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086
make -s -j"$(nproc)" with_llvm=yes $bc 2>"$log"
rc=$?
cat "$log" >&2
# shellcheck disable=SC2086
rm -f $bc
if [ $rc -ne 0 ]; then
	echo "bitcode: the clang pass failed ($("${clang%% *}" --version | head -1))"
	exit 1
fi
if grep -q 'warning:' "$log"; then
	echo "bitcode: the clang pass printed warnings (none are allowed; $("${clang%% *}" --version | head -1))"
	exit 1
fi
echo "bitcode: $(echo "$bc" | wc -w) files compiled by $("${clang%% *}" --version | head -1) for $(pg_config --version), no warning"
