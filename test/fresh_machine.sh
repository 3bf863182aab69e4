#!/bin/bash
# The fresh-machine check: the README's two commands, `bash demo/run.sh` and
# `bash test/run-all.sh`, in a Debian root just made by debootstrap
# --variant=minbase (test/lib/debroot.sh; bookworm unless given), as root,
# LANG unset, from a clone of this tree.  Inside it BF_NESTED=1, so the
# suites that make Debian roots of their own skip themselves; BF_LONG (the
# suites' longer settings, which CI sets) is passed on.  Run as root.
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/debroot.sh
trap debroot_leave EXIT
trap 'exit 130' INT TERM
suite="${1:-bookworm}"
t0=$(date +%s)
base="$(debroot_prepare "$suite" base)" || exit 1
debroot_enter "$base" "$suite" "$PWD" || exit 1
echo "fresh machine: [$(date +%T)] a fresh $suite root with a clone in /src ($(($(date +%s) - t0)) s)"
for cmd in "bash demo/run.sh" "bash test/run-all.sh"; do
	t1=$(date +%s)
	if ! debroot_run_in "$DEBROOT" "cd /src && $cmd" BF_NESTED=1 BF_LONG="${BF_LONG:-0}"; then
		echo "fresh machine: FAILED: $cmd ($(($(date +%s) - t1)) s)"
		exit 1
	fi
	echo "fresh machine: [$(date +%T)] $cmd passed ($(($(date +%s) - t1)) s)"
done
echo "fresh machine: ok ($(($(date +%s) - t0)) s)"
