#!/usr/bin/env bash
# ThreadSanitizer over the runtime's concurrent code: builds the runtime test
# executable with -fsanitize=thread in its own build folder (build-tsan/ by
# default, $TSAN_BUILD_DIR otherwise; Debian's g++) and runs the cases tagged
# [tsan]: spawned target instances start while background sends (and, apart,
# tight loops) look instances up.
# ThreadSanitizer makes the executable exit non-zero (66) on any data race it
# reports, so this script fails then. Extra arguments replace the test case
# (Catch2 test specs), e.g. scripts/tsan.sh "[interpreter]".
set -euo pipefail
cd "$(dirname "$0")/.."
build="${TSAN_BUILD_DIR:-build-tsan}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -Wno-tsan" -DCMAKE_C_FLAGS="-fsanitize=thread" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
# Only what the case needs: the runtime's libraries and the reference service
# it starts, then the test executable alone ("/fast": without the CLI and the
# stub the whole room's end-to-end cases would also need).
cmake --build "$build" -j"${JOBS:-2}" --target idemproof_runtime idemproof-ref idemproof_catch_main
cmake --build "$build" -j"${JOBS:-2}" --target test-harness-runtime/fast
# TSAN_EXTRA_TARGETS: more test executables to build here (scripts/sanitize.sh).
for t in ${TSAN_EXTRA_TARGETS:-}; do cmake --build "$build" -j"${JOBS:-2}" --target "$t"; done
if [ "$#" -eq 0 ]; then set -- "[tsan]"; fi
# second_deadlock_stack: both stacks of a lock-order report; the exit code 66
# (TSan's default) on a race is what fails the run.
TSAN_OPTIONS="second_deadlock_stack=1 ${TSAN_OPTIONS:-}" \
  "$build/tests/harness-runtime/test-harness-runtime" "$@"
