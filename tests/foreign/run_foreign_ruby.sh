#!/usr/bin/env bash
# The suite against the third foreign service (box_office.rb: Ruby, WEBrick,
# its own Redis server; docs/foreign-target.md) from ONE target file
# (scenarios/targets/foreign-ruby.yaml):
#  - the correct service: exit 0, every scenario passes or is
#    not_applicable "needs ..." (nothing invalid, nothing unknown);
#  - the bugs the suite catches, each by the scenario aimed at its class:
#    exit 1 with that oracle invalid (a violation), RUNS times each (1).
# With --measure, instead: the whole suite once per --bug, printing whether
# it was caught (exit 1 and the invalid verdicts' scenario/oracle) or missed
# (exit 0): the table of docs/foreign-target.md ("What the suite catches").
# Usage: run_foreign_ruby.sh IDEMPROOF SOURCE_DIR WORK_DIR [--measure | RUNS]
set -uo pipefail
# `idemproof run` hunts for 60 s after its suite by default; the runs here test something else.
export IDEMPROOF_HUNT="${IDEMPROOF_HUNT:-0}"
idemproof=$1 src=$2 work=$3 mode=${4:-}
runs=1
[[ $mode =~ ^[0-9]+$ ]] && runs=$mode
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
                         rerun-after-partial-failure rerun-after-window
                         store-fault-around-write store-fault-slow-store store-fault-lease-overrun store-fault-killed-owner
                         consumer-killed-mid-work killed-mid-run lease-overrun-live http-redelivery
                         retry-after-honoured failure-replayed-unchanged same-body-new-key long-key-prefix
                         large-answer-replay replay-after-cancel replay-after-change" \
                        "kill-after-charge kill-after-downstream repeated-callback route-spelling"

echo "== the bugs the suite catches, each by the scenario aimed at its class, $runs run(s) each"
# bug scenario oracle: one row per bug, by the family aimed at its class
# (marker-before-rows and lease-no-renewal also by the older scenarios that
# caught them by chance: a fail_after between a marker and its rows, a
# frozen owner).
# A fourth column gives a timing-dependent row more than one attempt per run:
# fire-and-forget-store under store-fault-lease-overrun shows only when the
# owner's answer leaves before its background write reaches the store. One
# CI run missed it (the write had landed although the reset came after the
# answer); the box office's answer waits for its lease renewer, which takes
# the store's one connection, so a renewal falling in the completion can hold
# the answer until the write committed. The slow-store row has no renewer.
while read -r bug scenario oracle attempts; do
  for i in $(seq "$runs"); do
    for a in $(seq "${attempts:-1}"); do
      name=$bug-$i${attempts:+-a$a}
      if [ "$a" -lt "${attempts:-1}" ]; then  # an attempt that may miss: its failure is not yet the row's
        "$idemproof" run "${paths[@]}" --target "$target" --out "$work/runs-$name" --seed "$((7 + a - 1))" \
          --flaw "$bug" --filter "$scenario" >"$work/$name.out" 2>&1 </dev/null
        rc=$?
        cp "$work/runs-$name/latest/results.json" "$work/$name.json" 2>/dev/null
        if [ "$rc" = 1 ]; then  # caught: by the aimed oracle, or the row fails
          echo "$name: exit 1 (want 1), at attempt $a"
          verdict "$name" "$scenario" "$oracle" invalid violation
          break
        fi
        echo "$name: exit $rc, not caught at attempt $a of ${attempts}: trying again"
        continue
      fi
      run "$name" 1 "$target" --flaw "$bug" --filter "$scenario" && verdict "$name" "$scenario" "$oracle" invalid violation
    done
  done
done <<'EOF'
marker-before-rows rerun-after-partial-failure range_continuity
lease-no-renewal paused-owner-takeover one_record
replay-reads-current replay-after-cancel identical_replay
body-hash-key same-body-new-key new_key_executes
key-truncate long-key-prefix new_key_executes
answer-truncate large-answer-replay identical_replay
failure-replay-differs failure-replayed-unchanged identical_replay
fire-and-forget-store store-fault-slow-store key_released
fire-and-forget-store store-fault-lease-overrun key_released 2
seen-before-apply consumer-killed-mid-work applied_once
marker-before-rows killed-mid-run range_continuity
lease-no-renewal lease-overrun-live one_record
retry-after-zero retry-after-honoured retry_after
key-includes-query crash-mid-request lease_recovery
EOF

echo "== $failures failure(s)"
[ "$failures" -eq 0 ]
