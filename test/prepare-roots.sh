#!/bin/bash
# Makes (or finds in the cache) every Debian root the test command uses:
# bookworm as debootstrap leaves it (the fresh-machine check, the package
# test) and the roots of the version matrix with the test dependencies
# (test/lib/debroot.sh's BF_ROOTS: trixie, sid, and sid with 19 beside 18).
# Mostly waiting on the network, so .ci/run starts it in the background
# while the fresh-machine check runs; the suites that need a root wait for
# it through debroot_prepare's lock.  Run as root.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/debroot.sh
rc=0
t0=$(date +%s)
debroot_prepare bookworm base >/dev/null || rc=1
for suite in $(awk 'NF { print $1 }' <<<"$BF_ROOTS"); do
	debroot_prepare "$suite" deps "$PWD" >/dev/null || rc=1
done
echo "prepare-roots: [$(date +%T)] done, exit $rc ($(($(date +%s) - t0)) s)"
exit $rc
