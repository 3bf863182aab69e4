#!/bin/bash
# Bench rows of the Go client: local lookup of an absent 8-byte key in a
# 12 MB filter next to server round trips, in one run (ratios matter; the
# machine may be noisy).  Needs the extension installed and Debian's Go
# packages (see clients/go/README.md).
#
#   bash bench/clients/go.sh [-keys N] [-lookups N] [-trips N] [-reps N]
set -euo pipefail
cd "$(dirname "$0")/../.."
. clients/go/scripts/gopath.sh
bf_go_build bench/clients/go-lookup "$bf_gopath/go-lookup"
pg_virtualenv -o shared_buffers=256MB "$bf_gopath/go-lookup" "$@"
