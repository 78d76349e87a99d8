#!/usr/bin/env bash
# Soak (issue 16): the reference under a bounded concurrent load, SIGKILLed
# at random moments (default 40 times) and restarted on the same store; prints
# acknowledged, lost, duplicated, replay differences, stock drift and restart
# times as a table (bench/soak.py). Exit 1 when anything was lost or doubled.
#   bash bench/soak.sh [--kills N] [--workers N] [--seed N]
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${IDEMPROOF_BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
cmake --build "$build" -j"${IDEMPROOF_JOBS:-2}" --target idemproof-ref >/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/idemproof-soak.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 bench/soak.py --ref "$build/reference-impl/idemproof-ref" --dir "$work" "$@"
