#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_TEST_JOBS  tests run at once (default: 2; most wait on processes
#                        and sockets, so two halve the wall time on 2 cores)
#   extra arguments go to ctest (e.g. -L fast, -R 'flaw matrix')
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build_dir=${IDEMPROOF_BUILD_DIR:-build}
# Where the project's shared tools sit beside the checkout (as in CI), check
# that set-up installs every package the build used: a package installed by
# hand makes a green run here and a broken build on a fresh machine.
check=../shared/tools/check-packages.sh
if [ -f "$check" ]; then
  bash "$check" "$build_dir" scripts/setup.sh
fi
cd "$build_dir"
ctest --output-on-failure --timeout 1200 -j"${IDEMPROOF_TEST_JOBS:-2}" "$@"
