#!/usr/bin/env bash
# `cmake --install` into a fresh prefix: the layout of cmake/Install.cmake,
# and the installed `idemproof` finds its suite, schemas and {{build_dir}}
# from its own location (not the source tree it was built from): run with no
# scenario path from an unrelated folder, it runs the installed suite against
# the installed example reference target. The build tree keeps its own.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
# `idemproof run` hunts for 60 s after its suite by default; the runs here test something else.
export IDEMPROOF_HUNT="${IDEMPROOF_HUNT:-0}"
source_dir=$1 build_dir=$2
work=$(mktemp -d /tmp/idemproof-install-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
check() {  # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
prefix=$work/prefix
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
for f in bin/idemproof bin/idemproof-ref bin/idemproof-stub; do check "$f is installed, executable" test -x "$prefix/$f"; done
check "the suite is installed" test -f "$prefix/share/idemproof/scenarios/client/double-submit.yaml"
check "the example targets are installed" test -f "$prefix/share/idemproof/scenarios/targets/reference.yaml"
check "the schemas are installed" test -f "$prefix/share/idemproof/schemas/target.schema.json"
check "the docs are installed" test -f "$prefix/share/doc/idemproof/README.md" -a -f "$prefix/share/doc/idemproof/ci.md"
# Every {{build_dir}}/X and {{source_dir}}/X an installed target names exists.
while read -r ref; do
  path=${ref/\{\{build_dir\}\}/$prefix/lib/idemproof}
  path=${path/\{\{source_dir\}\}/$prefix/share/idemproof}
  check "installed targets: $ref resolves" test -e "$path"
done < <(grep -rhoE '\{\{(build|source)_dir\}\}/[^" ,]+' "$prefix/share/idemproof/scenarios/targets" | sort -u)
check "{{build_dir}}/reference-impl/idemproof-ref is the installed bin/idemproof-ref" \
  test "$(readlink -f "$prefix/lib/idemproof/reference-impl/idemproof-ref")" = "$(readlink -f "$prefix/bin/idemproof-ref")"

suite=$("$prefix/bin/idemproof" --print-suite-dir)
check "installed: --print-suite-dir is the installed suite ($suite)" test "$suite" = "$prefix/share/idemproof/scenarios"
built=$("$build_dir/harness/cli/idemproof" --print-suite-dir)
check "build tree: --print-suite-dir is the checkout's ($built)" test "$built" = "$source_dir/scenarios"

# No scenario path, from a folder that is neither the checkout nor the prefix,
# with no IDEMPROOF_BUILD_DIR: the installed suite, the installed reference.
mkdir "$work/elsewhere"
status=0
(cd "$work/elsewhere" && env -u IDEMPROOF_BUILD_DIR "$prefix/bin/idemproof" run \
  --target "$prefix/share/idemproof/scenarios/targets/reference.yaml" --filter 'double-submit*' --out runs \
  >"$work/run.log" 2>&1) || status=$?
cat "$work/run.log"
check "installed: idemproof run --target (no path) exits 0 (exit $status)" test "$status" = 0
check "installed: the run ran the suite's double-submit scenario" grep -q "double-submit" "$work/run.log"
lint=$(cd "$work/elsewhere" && "$prefix/bin/idemproof" lint --target "$prefix/share/idemproof/scenarios/targets/reference.yaml" 2>&1) ||
  true
check "installed: idemproof lint --target (no path) lints the installed suite ($(head -1 <<<"$lint"))" \
  grep -qE '^[0-9]{2,} scenario\(s\) ok against target reference' <<<"$lint"
# The run started the installed reference: a build tree's {{build_dir}}
# (three folders above the executable: $work here) holds none.
check "installed: no reference where a build tree's {{build_dir}} would be" test ! -e "$work/reference-impl"
# Relocatable: the prefix moved, the executable finds the suite at its new place.
mv "$prefix" "$work/moved"
suite=$("$work/moved/bin/idemproof" --print-suite-dir)
check "installed, prefix moved: --print-suite-dir follows ($suite)" test "$suite" = "$work/moved/share/idemproof/scenarios"
exit "$fail"
