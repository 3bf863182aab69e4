#!/bin/bash
# Makes (or finds in the cache) every Debian root the test command uses:
# bookworm as debootstrap leaves it (the fresh-machine check, the package
# test) and trixie and sid with the test dependencies (the version matrix).
# Mostly waiting on the network, so .ci/run starts it in the background
# while the fresh-machine check runs; the suites that need a root wait for
# it through debroot_prepare's lock.  Run as root.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/debroot.sh
rc=0
t0=$(date +%s)
debroot_prepare bookworm base >/dev/null || rc=1
for suite in trixie sid; do
	debroot_prepare "$suite" deps "$PWD" >/dev/null || rc=1
done
echo "prepare-roots: [$(date +%T)] done, exit $rc ($(($(date +%s) - t0)) s)"
exit $rc
