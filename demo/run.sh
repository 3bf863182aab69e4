#!/bin/bash
# The main job: install dependencies, build, install the extension into a
# throwaway cluster and run the demo (demo/demo.sql).
set -euo pipefail
cd "$(dirname "$0")/.."
bash test/install-deps.sh
make -s -j"$(nproc)"
make -s install
pg_virtualenv psql -X -q -f demo/demo.sql
