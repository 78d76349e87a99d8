#!/usr/bin/env bash
# The tests under sanitizers (issue 16), each build in its own folder:
#  1. AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer): every
#     test executable, the harness, the reference and the payment provider
#     they start,
#     built in build-asan/ and run by ctest. Any report fails its test
#     (halt_on_error; LeakSanitizer exits non-zero at the end).
#  2. ThreadSanitizer: the runtime's and the injectors' test executables in
#     build-tsan/ (scripts/tsan.sh), their fast cases plus the [tsan] ones,
#     and explore's [jobs] case (two trial workers, each its own interpreter).
# Exit 0 when both ran clean.
#   scripts/sanitize.sh [ctest args for 1.]   e.g. scripts/sanitize.sh -L fast
#   SANITIZE_ONLY=asan|tsan   run one of the two
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --packages-only
jobs=${IDEMPROOF_JOBS:-2}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
only=${SANITIZE_ONLY:-}

if [ "$only" != tsan ]; then
  build=build-asan
  # -O1 -g1: ASan's advice for speed with usable stacks (file:line), and
  # about a third less compile time than -O2 -g on 2 cores. The build type
  # "Sanitize" adds no flags of its own; bench/ is not built.
  flags="-O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Sanitize -DIDEMPROOF_BENCH=OFF "${launcher[@]}" -DIDEMPROOF_WERROR=OFF \
    -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build "$build" -j"$jobs"
  echo "== ASan + UBSan + LSan: ctest in $build"
  # The children (idemproof, idemproof-ref, idemproof-stub) inherit these options.
  (cd "$build" &&
    ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:${ASAN_OPTIONS:-}" \
    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
    ctest --output-on-failure --timeout 1800 -j"$jobs" "$@")
fi

if [ "$only" != asan ]; then
  echo "== ThreadSanitizer: the runtime's and the injectors' tests"
  TSAN_EXTRA_TARGETS="test-injectors test-harness-explore idemproof-stub" bash scripts/tsan.sh "~[slow],[tsan]"
  "${TSAN_BUILD_DIR:-build-tsan}/tests/injectors/test-injectors" "~[slow]"
  "${TSAN_BUILD_DIR:-build-tsan}/tests/harness-explore/test-harness-explore" "[jobs]"
fi
echo "sanitize: clean"
