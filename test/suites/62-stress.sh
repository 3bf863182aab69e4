# Randomized stress of the filters kept in sync with tables (test/stress.py):
# writers of every kind, online rebuilds of every shape started at random
# moments and by the rebuild worker, lookups and change-set readers, an
# immediate shutdown in the middle; then every row of every table checked
# by the server and by the Python client, and the change sets the reader
# got replayed through the Go and JavaScript clients' refreshers where
# their toolchains are here (CI runs this suite once more beside the
# clients' suites for that).  BF_STRESS_SECONDS (default 20; 60 with
# BF_LONG=1, the longer run of CI and run-all.sh --all) and BF_STRESS_SEED
# (default: a new one, printed) are passed on.
set -uo pipefail
dir="$(mktemp -d /tmp/bf-stress.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
as=()
if [ "$(id -u)" = 0 ]; then
	chown postgres: "$dir"
	as=(runuser -u postgres --)
fi
"${as[@]}" env TMPDIR="$dir" BF_STRESS_SECONDS="${BF_STRESS_SECONDS:-$([ "${BF_LONG:-0}" = 1 ] && echo 60 || echo 20)}" \
	BF_STRESS_SEED="${BF_STRESS_SEED:-}" /usr/bin/python3 test/stress.py --crash --tape "$dir/tape.json" || exit 1
if command -v go >/dev/null; then
	echo "-- the change sets through the Go client's Refresher"
	(cd clients/go && GOPROXY=off GOFLAGS= GOTOOLCHAIN=local GOCACHE="${GOCACHE:-/tmp/bf-go-cache}" \
		BF_STRESS_TAPE="$dir/tape.json" go test -count=1 -run TestStressTape -v . | grep -E '^(---|ok|FAIL|\s+stress)') || exit 1
else
	echo "-- no Go here: the Go client's replay is left out"
fi
if command -v node >/dev/null && [ -d clients/js/node_modules ]; then
	echo "-- the change sets through the JavaScript client's Refresher"
	BF_STRESS_TAPE="$dir/tape.json" node --test clients/js/test/e2e/stress-tape.test.js || exit 1
else
	echo "-- no node or no clients/js/node_modules here: the JavaScript client's replay is left out"
fi
