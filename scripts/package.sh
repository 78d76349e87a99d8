#!/usr/bin/env bash
# Builds the Debian package of this checkout, idemproof_<version>_<arch>.deb
# (cmake/Install.cmake: bin/idemproof, idemproof-ref, idemproof-stub, the
# suite, schemas and docs; Depends from dpkg-shlibdeps), and prints its path.
# Usage: scripts/package.sh [--no-build] [OUT_DIR]
#   OUT_DIR              where the .deb goes (default: BUILD_DIR/packages)
#   --no-build           package what BUILD_DIR holds (its three executables
#                        built already): no package install, no configure, no
#                        build (the package test of tests/install does this)
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_JOBS       parallel compile jobs (default: 2)
# Install it: sudo apt-get install ./idemproof_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
build=yes
if [ "${1:-}" = --no-build ]; then
  build=no
  shift
fi
build_dir=${IDEMPROOF_BUILD_DIR:-build}
out=${1:-$build_dir/packages}
if [ "$build" = yes ]; then
  # The packages the build needs (dpkg-dev and file: cpack's DEB generator),
  # then only the three executables the package holds.
  IDEMPROOF_PACKAGES=suite IDEMPROOF_TARGETS="idemproof idemproof-ref idemproof-stub" bash scripts/setup.sh
fi
for exe in harness/cli/idemproof reference-impl/idemproof-ref payment-stub/idemproof-stub; do
  if [ ! -x "$build_dir/$exe" ]; then
    echo "package.sh: $build_dir/$exe is not built (run without --no-build)" >&2
    exit 2
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
rm -f "$out"/idemproof_*.deb
(cd "$build_dir" && cpack --config CPackConfig.cmake -B "$out" >"$out/cpack.log" 2>&1) || {
  cat "$out/cpack.log" >&2
  exit 1
}
rm -rf "$out/_CPack_Packages"
deb=$(ls "$out"/idemproof_*.deb)
echo "$deb"
