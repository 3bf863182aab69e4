# the Python client (clients/python): its pytest suite (unit tests, the
# conformance file), then end to end against a server with the extension
# (BF_E2E=1: the client, and scan guards through prepared statements),
# then an offline `pip install` of the package into a venv
set -uo pipefail
cd clients/python || exit 1
export PYTHONPATH="$PWD/src" PYTHONDONTWRITEBYTECODE=1
/usr/bin/python3 -m pytest -q -p no:cacheprovider tests || exit 1
BF_E2E=1 pg_virtualenv /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/test_e2e.py tests/test_e2e_guard.py || exit 1
venv="$(mktemp -d)"
trap 'rm -rf "$venv"' EXIT
# Debian's pip (python3-pip) from the system site-packages: ensurepip is slow
/usr/bin/python3 -m venv --without-pip --system-site-packages "$venv" &&
	"$venv/bin/python" -m pip install -q --no-build-isolation --no-index --no-deps . &&
	(cd / && PYTHONPATH= "$venv/bin/python" -c 'import pgbloomfilter, sys; assert pgbloomfilter.__file__.startswith(sys.argv[1]); print("installed", pgbloomfilter.__version__)' "$venv")
