#!/bin/bash
# Installs what building, testing and the demo need on a fresh Debian
# bookworm machine (run as root).  Skips apt when everything is present.
set -euo pipefail
PKGS="postgresql-15 postgresql-common postgresql-server-dev-15 libxxhash-dev python3-xxhash make gcc"
# the benchmark's peer extension (hll_add_agg), optional for tests
[ "${BF_WITH_BENCH:-0}" = 1 ] && PKGS="$PKGS postgresql-15-hll"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $missing >/dev/null
fi
