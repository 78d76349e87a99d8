#!/usr/bin/env bash
# Builds idemproof-bench and idemproof-ref (and idemproof, idemproof-stub for
# the explore section), then prints the bench's tables
# (Markdown). Extra arguments go to idemproof-bench, e.g. --sections spread
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_JOBS       parallel compile jobs (default: 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${IDEMPROOF_BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
# idemproof and idemproof-stub: the explore section runs the tool against the reference target file.
cmake --build "$build" -j"${IDEMPROOF_JOBS:-2}" --target idemproof-bench idemproof-ref idemproof idemproof-stub >/dev/null
exec "$build/bench/idemproof-bench" --ref "$build/reference-impl/idemproof-ref" "$@"
