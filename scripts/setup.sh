#!/usr/bin/env bash
# Installs the Debian packages idemproof needs (only those missing) and builds
# the project into build/. Safe to run again: it does nothing it need not do.
#   IDEMPROOF_BUILD_DIR  build folder (default: build)
#   IDEMPROOF_JOBS       parallel compile jobs (default: 2)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake pkg-config
  libboost1.74-dev libcurl4-openssl-dev libyaml-cpp-dev librapidcheck-dev
  catch2 nlohmann-json3-dev libsqlite3-dev sqlite3 libcli11-dev libpq-dev libssl-dev
  libhiredis-dev redis-server chromium liburing-dev libre2-dev
  python3 nodejs   # the foreign services of tests/foreign/ (Python, Node.js)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir=${IDEMPROOF_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build_dir" -j"${IDEMPROOF_JOBS:-2}"
