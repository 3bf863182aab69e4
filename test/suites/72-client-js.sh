# the JavaScript client (clients/js): its own tests with node's test runner
# (conformance file included), then end to end against a throwaway cluster
# with the extension installed, through node-postgres (and scan guards
# through its named statements: test/e2e/guard.test.js)
# inside the fresh-machine check, without the toolchain (test/install-deps.sh
# leaves it out there), skipped: CI runs this suite on the machine
if [ "${BF_NESTED:-0}" = 1 ] && ! command -v npm >/dev/null; then
	echo "no node and npm in this root: skipped (CI runs this suite outside the root)"
	exit 77
fi
set -u
cd clients/js || exit 1
command -v node >/dev/null && command -v npm >/dev/null || { echo "node and npm are needed (Debian: nodejs npm)"; exit 1; }
# install the locked dependencies unless they are already there
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
	npm ci --no-audit --no-fund || exit 1
fi
node --test test/unit/*.test.js || exit 1
pg_virtualenv node --test test/e2e/*.test.js
