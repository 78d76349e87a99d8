#!/usr/bin/env bash
# The Debian package on a clean Debian machine: `apt-get install
# ./idemproof_*.deb` into a fresh minbase root of this machine's release
# (clean_root.sh: its dependencies come from the Debian mirror), then, in that
# root, the installed `idemproof run` over the installed suite against the
# installed example reference target: exit 0. Nothing of the checkout or the
# build folder is in the root; the package is the only thing copied in.
# Usage: package_test.sh SOURCE_DIR BUILD_DIR DEB_DIR (holding one idemproof_*.deb)
set -euo pipefail
source_dir=$1 build_dir=$2
deb=$(ls "$3"/idemproof_*.deb)
here=$(cd "$(dirname "$0")" && pwd)
cache=$build_dir/install-test
root=$cache/package-root
fail=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
absent() { [ ! -e "$root/upper$1" ] && [ ! -e "$root/lower$1" ]; }  # as the chroot sees it
in_root() { bash "$here/clean_root.sh" run "$cache" "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"; }
start=$SECONDS

echo "package: $deb"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
check "the package depends on Debian runtime libraries (libcurl4, libyaml-cpp)" \
  grep -qE 'libcurl4.*libyaml-cpp|libyaml-cpp.*libcurl4' <<<"$depends"
check "no -dev package among its Depends" bash -c '! grep -q -- "-dev" <<<"$1"' _ "$depends"

bash "$here/clean_root.sh" make "$cache" "$root"
t=$SECONDS
check "the checkout is not in the root" absent "$source_dir"
check "the build folder is not in the root" absent "$(cd "$build_dir" && pwd -P)"
check "no idemproof in the clean root" absent /usr/bin/idemproof
# The upper layer's folder stands for the lower's: it keeps /tmp's 1777, or
# apt's unprivileged helper cannot write its temporary files ("not signed").
install -d -m 1777 "$root/upper/tmp"
cp "$deb" "$root/upper/tmp/"
status=0
in_root bash -c 'cd /tmp && apt-get update -qq && apt-get install -y -qq ./idemproof_*.deb' >"$cache/apt.log" 2>&1 ||
  status=$?
tail -3 "$cache/apt.log"
check "apt-get install ./idemproof_*.deb exits 0 (exit $status) in $((SECONDS - t)) s" test "$status" = 0
rm -f "$root"/upper/tmp/idemproof_*.deb

suite=$(in_root idemproof --print-suite-dir || true)
check "idemproof --print-suite-dir: /usr/share/idemproof/scenarios ($suite)" test "$suite" = /usr/share/idemproof/scenarios
while read -r ref; do
  path=${ref/\{\{build_dir\}\}//usr/lib/idemproof}
  path=${path/\{\{source_dir\}\}//usr/share/idemproof}
  check "installed targets: $ref resolves" in_root test -e "$path"
done < <(grep -rhoE '\{\{(build|source)_dir\}\}/[^" ,]+' "$root/upper/usr/share/idemproof/scenarios/targets" | sort -u)

# The installed suite (no path) against the installed reference, in the root.
t=$SECONDS
status=0
in_root bash -c 'mkdir -p /root/work && cd /root/work &&
  idemproof run --target /usr/share/idemproof/scenarios/targets/reference.yaml --out runs --junit junit.xml --hunt 0' \
  >"$cache/run.log" 2>&1 || status=$?
cat "$cache/run.log"
check "installed: idemproof run --target reference.yaml exits 0 (exit $status) in $((SECONDS - t)) s" test "$status" = 0
check "installed: the run wrote junit.xml and report.html" \
  in_root test -s /root/work/junit.xml -a -s /root/work/runs/latest/report.html
echo "package test: $((SECONDS - start)) s"
exit "$fail"
