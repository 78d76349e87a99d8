#!/usr/bin/env bash
# The README's main job: install what is missing, build what a run needs, then run the whole
# scenario suite against the reference service (SQLite store, started by the
# harness itself) and say where the reports are.
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_OUT        where run directories go (default: idemproof-runs)
#   extra arguments go to `idemproof run` (e.g. --seed N, --filter GLOB, --flaw NAME)
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what a run needs: the CLI, the reference service and its payment stub
# (scripts/test.sh builds the rest, the 60-odd test executables).
IDEMPROOF_PACKAGES=${IDEMPROOF_PACKAGES:-suite} \
  IDEMPROOF_TARGETS=${IDEMPROOF_TARGETS:-idemproof idemproof-ref idemproof-stub} bash scripts/setup.sh
build_dir=${IDEMPROOF_BUILD_DIR:-build}
out=${IDEMPROOF_OUT:-idemproof-runs}
status=0
"$build_dir/harness/cli/idemproof" run scenarios/ \
  --target scenarios/targets/reference.yaml \
  --build-dir "$build_dir" \
  --out "$out" "$@" || status=$?
latest=$(cd "$out/latest" 2>/dev/null && pwd -P || true)
if [ -n "$latest" ]; then
  echo
  echo "reports: $latest"
  echo "  results.json   verdicts, metrics, seed"
  echo "  junit.xml      for CI"
  for f in "$latest"/*.html "$latest"/*.md; do [ -e "$f" ] && echo "  $(basename "$f")"; done
  echo "  <scenario>/history.jsonl, target.stdout, target.stderr"
  echo "re-check offline: $build_dir/harness/cli/idemproof check $out/latest"
fi
exit "$status"
