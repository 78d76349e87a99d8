#!/usr/bin/env bash
# libFuzzer over the harness's and the reference's input surfaces (issue 16):
# the target and scenario loaders, JSON paths, templates, request variant
# patches, the proxy's HTTP parsing and the reference's request handling
# (tests/fuzz/, one file each).
# Installs clang-14 and its runtime (libclang-rt-14-dev) when missing, builds
# build-fuzz/ with clang -fsanitize=fuzzer,address,undefined, and runs each
# target for FUZZ_SECONDS (default 60) from its seeds: the shipped YAML files
# for the loaders, tests/fuzz/seeds/NAME and tests/fuzz/regressions/NAME.
# A crash, a leak, a failed invariant or an input slower than 10 s stops that
# target; its input lands in build-fuzz/findings/NAME/ (copy it into
# tests/fuzz/regressions/NAME/ once fixed: the normal build's
# fuzz-inputs/NAME test replays it). Exit 1 when any target found something.
#   scripts/fuzz.sh [NAME...]     e.g. scripts/fuzz.sh json-path template
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_BUILD_DIR build folder (default build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --packages-only
bash scripts/install_missing.sh clang-14 libclang-rt-14-dev
build=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
all=(target-loader scenario-loader json-path template proxy-http reference variant-patch)
names=("$@")
((${#names[@]})) || names=("${all[@]}")
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DIDEMPROOF_FUZZ=ON -DIDEMPROOF_WERROR=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
targets=()
for n in "${names[@]}"; do targets+=("fuzz-$n"); done
cmake --build "$build" -j"${IDEMPROOF_JOBS:-2}" --target "${targets[@]}"

found=0
printf '| fuzz target | seconds | runs | corpus | result |\n|---|---:|---:|---:|---|\n' >"$build/fuzz-summary.md"
for n in "${names[@]}"; do
  exe="$build/tests/fuzz/fuzz-$n"
  corpus="$build/corpus/$n" findings="$build/findings/$n"
  mkdir -p "$corpus" "$findings"
  mapfile -t seeds <"$build/tests/fuzz/fuzz-$n.seeds"
  log="$build/fuzz-$n.log"
  echo "== fuzz-$n: $seconds s (log $log)"
  # detect_leaks: LeakSanitizer on; -timeout: one input may take 10 s at most;
  # -rss_limit_mb: the loaders' alias bombs and huge bodies must stay bounded.
  set +e
  ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  size=$(find "$corpus" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    result=clean
  else
    result="FOUND (exit $rc): $(ls "$findings" | head -3 | tr '\n' ' ')"
    found=1
    grep -E 'ERROR|invariant failed|SUMMARY' "$log" | head -5
  fi
  echo "   $result, $runs runs"
  printf '| %s | %s | %s | %s | %s |\n' "$n" "$seconds" "$runs" "$size" "$result" >>"$build/fuzz-summary.md"
done
cat "$build/fuzz-summary.md"
exit "$found"
