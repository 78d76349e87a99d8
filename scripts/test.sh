#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd "${IDEMPROOF_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 1200 "$@"
