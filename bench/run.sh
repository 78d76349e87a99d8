#!/usr/bin/env bash
# Builds the bench and what it starts, then prints its tables (Markdown).
#   bash bench/run.sh [idemproof-bench options]   e.g. --sections spread, --sections explore
#   bash bench/run.sh sim [idemproof-sim-bench options]
# idemproof-bench: burst spread, check-then-insert detection, proxy overhead
# (default sections), live explore (--sections explore: it also needs
# idemproof and idemproof-stub) and the reference's throughput on SQLite vs
# PostgreSQL (--sections store: Debian's postgresql, scripts/postgres-service.sh). idemproof-sim-bench: the deterministic
# simulation's interleavings/s and time to first violation per flaw.
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_JOBS       parallel compile jobs (default: 2)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${IDEMPROOF_BUILD_DIR:-build}
cmake -S . -B "$build" >/dev/null
if [ "${1:-}" = sim ]; then
  shift
  cmake --build "$build" -j"${IDEMPROOF_JOBS:-2}" --target idemproof-sim-bench >/dev/null
  exec "$build/bench/idemproof-sim-bench" "$@"
fi
# The overhead section's peer: HAProxy in front of the same reference.
bash scripts/install_missing.sh haproxy
cmake --build "$build" -j"${IDEMPROOF_JOBS:-2}" --target idemproof-bench idemproof-ref idemproof idemproof-stub >/dev/null
exec "$build/bench/idemproof-bench" --ref "$build/reference-impl/idemproof-ref" "$@"
