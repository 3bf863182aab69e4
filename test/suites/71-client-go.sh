# The Go client (clients/go): go vet and its unit and conformance tests;
# its pure-Go XXH3 against the C reference (libxxhash; build tag cref);
# then the end-to-end tests against a server
# with lib/pq and pgx v4 (scan guards through pgx's statement cache among
# them; Debian's sources, GOPATH mode: the Go module
# proxy is not reachable).
# inside the fresh-machine check, without the toolchain (test/install-deps.sh
# leaves it out there), skipped: CI runs this suite on the machine
if [ "${BF_NESTED:-0}" = 1 ] && ! command -v go >/dev/null; then
	echo "no Go in this root: skipped (CI runs this suite outside the root)"
	exit 77
fi
set -euo pipefail
export GOPROXY=off GOFLAGS= GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-${TMPDIR:-/tmp}/bf-go-cache}"

cd clients/go
echo "-- go vet, go test ./... (unit, conformance, refresher under -race)"
go vet ./... || exit 1
go test -count=1 ./... || exit 1
go test -count=1 -race -run 'Refresher' . || exit 1
# 300 random inputs of each length 0-300 for each of ~30 seeds (3 000
# with BF_LONG=1, as CI runs it): the 100 000 of a manual run
# (clients/go/README.md) take too long here
echo "-- XXH3 against libxxhash"
BF_XXH3_INPUTS=${BF_XXH3_INPUTS:-$([ "${BF_LONG:-0}" = 1 ] && echo 3000 || echo 300)} go test -count=1 -tags cref -run 'XXH3|Digest' -v . | grep -E '^(---|ok|FAIL|\s+cref_test)' || exit 1
cd ../..

# e2e, and the example with few keys, against one pg_virtualenv cluster
. clients/go/scripts/gopath.sh
bf_go_build clients/go/e2e "$bf_gopath/e2e.test" test
bf_go_build examples/go-cache-guard "$bf_gopath/cache-guard"
# the Refresher program test/lib/citus_clients.sh runs against Citus
# (92-citus.sh): vetted and built here, where Citus may be missing
bf_go_build clients/go/e2e/citusclient "$bf_gopath/citusclient"
echo "-- end to end (lib/pq, pgx) and the cache-guard example"
# lib/pq's default is sslmode=require, and a throwaway cluster on a machine
# without ssl-cert has no SSL
export PGSSLMODE="${PGSSLMODE:-disable}"
pg_virtualenv sh -c '"$1" -test.count=1 -test.v && "$2" -keys 20000 -requests 20000' \
	sh "$bf_gopath/e2e.test" "$bf_gopath/cache-guard" 2>&1 | grep -Ev '^=== (RUN|PAUSE|CONT)'
exit "${PIPESTATUS[0]}"
