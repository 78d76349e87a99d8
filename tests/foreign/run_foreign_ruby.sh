#!/usr/bin/env bash
# The suite against the third foreign service (box_office.rb: Ruby, WEBrick,
# its own Redis server; docs/foreign-target.md) from ONE target file
# (scenarios/targets/foreign-ruby.yaml):
#  - the correct service: exit 0, every scenario passes or is
#    not_applicable "needs ..." (nothing invalid, nothing unknown);
#  - the bugs today's suite catches, each by the scenario aimed at it: exit
#    1 with that oracle invalid (a violation).
# With --measure, instead: the whole suite once per --bug, printing whether
# it was caught (exit 1 and the invalid verdicts' scenario/oracle) or missed
# (exit 0): the table of docs/foreign-target.md ("What the suite misses").
# Usage: run_foreign_ruby.sh IDEMPROOF SOURCE_DIR WORK_DIR [--measure]
set -uo pipefail
idemproof=$1 src=$2 work=$3 mode=${4:-}
rm -rf "$work" && mkdir -p "$work"
cd "$src" || exit 2
target=scenarios/targets/foreign-ruby.yaml
. "$src/tests/foreign/foreign_lib.sh"
paths=("${FOREIGN_SCENARIOS:-scenarios/}")   # another scenario tree (a snapshot) to measure against

for tool in ruby redis-server; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/setup.sh installs it)"; exit 1; }
done
if ! ruby -e 'require "webrick"; require "redis"' 2>"$work/ruby.err"; then
  echo "FAIL: ruby lacks webrick or redis (scripts/setup.sh installs ruby-webrick ruby-redis):"
  cat "$work/ruby.err"
  exit 1
fi
if ! "$idemproof" lint "${paths[@]}" --target "$target" >"$work/lint.out" 2>&1; then
  echo "FAIL: $target does not load:"
  head -20 "$work/lint.out"
  exit 1
fi

bugs="seen-before-apply marker-before-rows lease-no-renewal replay-reads-current body-hash-key key-truncate
      answer-truncate failure-replay-differs retry-after-zero fire-and-forget-store key-includes-query"

if [ "$mode" = --measure ]; then
  for bug in $bugs; do
    "$idemproof" run "${paths[@]}" --target "$target" --out "$work/runs-$bug" --seed 7 --flaw "$bug" \
      >"$work/$bug.out" 2>&1 </dev/null
    rc=$?
    cp "$work/runs-$bug/latest/results.json" "$work/$bug.json" 2>/dev/null
    python3 - "$work/$bug.json" "$bug" "$rc" <<'EOF'
import json, sys
path, bug, rc = sys.argv[1:]
try:
    doc = json.load(open(path))
except OSError:
    print("%-24s exit %s, no results.json" % (bug, rc)); sys.exit(0)
bad = sorted({"%s/%s" % (s["name"], v["oracle"]) for s in doc["scenarios"] for v in s["verdicts"]
              if v["status"] in ("invalid", "unknown")})
print("%-24s exit %s  %s" % (bug, rc, "caught: " + ", ".join(bad) if bad else "MISSED"))
EOF
  done
  exit 0
fi

echo "== correct service"
run correct 0 "$target" &&
  check_correct correct "action-scope double-submit key-reuse-other-payload missing-key put-target-state
                         delete-releases-once replay-identity resubmit-after-pause duplicate-while-in-progress
                         identical-burst synchronized-burst hedged-pair lost-answer-retry proxy-replay
                         resubmit-after-restart retry-fresh-request-id retry-inside-window
                         retryable-failure-retry crash-mid-request paused-owner-takeover killed-after-answer
                         rerun-after-partial-failure rerun-after-window" \
                        "kill-after-charge repeated-callback"

echo "== the bugs today's suite catches, each by the scenario aimed at its class"
# bug scenario oracle. (body-hash-key is caught on its other side: the key
# reused with another body executes. key-includes-query is caught today only
# under a wrong diagnosis, a duplicate without the slow variant's query
# being another key: not listed, byte-identical retries will move it.)
while read -r bug scenario oracle; do
  run "$bug" 1 "$target" --flaw "$bug" --filter "$scenario" && verdict "$bug" "$scenario" "$oracle" invalid violation
done <<'EOF'
marker-before-rows rerun-after-partial-failure range_continuity
lease-no-renewal paused-owner-takeover one_record
body-hash-key key-reuse-other-payload mismatch_rejected
EOF

echo "== $failures failure(s)"
[ "$failures" -eq 0 ]
