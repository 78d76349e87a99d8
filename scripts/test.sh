#!/usr/bin/env bash
# The README's test command: install what is missing, build, run every test.
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_TEST_JOBS  tests run at once (default: 3; they wait on processes,
#                        sockets and leases: a whole ctest -j2 run, 848 s, used
#                        196 CPU s of the 2 cores' 1,696; -j3 took 533 s, each
#                        test within a few % of its -j2 time; the race rows of
#                        the flaw matrix run alone anyway, [serial])
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
ctest --output-on-failure --timeout 1200 -j"${IDEMPROOF_TEST_JOBS:-3}" "$@"
