#!/usr/bin/env bash
# The suite against the second foreign service (billing_service.js, Node.js,
# docs/foreign-target.md) from ONE target file with no wrapper and no
# command hook (scenarios/targets/foreign-node.yaml):
#  - the correct service: exit 0, every scenario passes or is
#    not_applicable "needs ..." (nothing invalid, nothing unknown);
#  - each --bug caught by the scenario aimed at it: exit 1 with that oracle
#    invalid in results.json, RUNS times each (default 5).
# The target file uses request variants, contract options, free_port and
# egress (issue 15). A target file that does not load is a failure.
# Usage: run_foreign_node.sh IDEMPROOF SOURCE_DIR WORK_DIR [RUNS]
set -uo pipefail
idemproof=$1 src=$2 work=$3 runs=${4:-5}
rm -rf "$work" && mkdir -p "$work"
cd "$src" || exit 2
target=scenarios/targets/foreign-node.yaml
. "$src/tests/foreign/foreign_lib.sh"

if ! "$idemproof" lint scenarios/ --target "$target" >"$work/lint.out" 2>&1; then
  echo "FAIL: $target does not load:"
  head -20 "$work/lint.out"
  exit 1
fi

echo "== correct service"
run correct 0 "$target" &&
  check_correct correct "action-scope double-submit key-reuse-other-payload missing-key put-target-state
                         replay-identity resubmit-after-pause duplicate-while-in-progress identical-burst
                         synchronized-burst hedged-pair lost-answer-retry proxy-replay resubmit-after-restart
                         retry-fresh-request-id retry-inside-window retryable-failure-retry crash-mid-request
                         paused-owner-takeover kill-after-charge kill-after-downstream downstream-failure-retry" \
                        "delete-releases-once store-fault-lease-overrun store-fault-killed-owner repeated-callback http-redelivery stream-redelivery
                         rerun-after-partial-failure rerun-after-window route-spelling"

echo "== each bug caught by the scenario aimed at it, $runs run(s) each"
# bug scenario oracle
while read -r bug scenario oracle; do
  for i in $(seq "$runs"); do
    run "$bug-$i" 1 "$target" --flaw "$bug" --filter "$scenario" && verdict "$bug-$i" "$scenario" "$oracle" invalid violation
  done
done <<'EOF'
race identical-burst one_record
ignore-body key-reuse-other-payload mismatch_rejected
claim-forever crash-mid-request lease_recovery
no-intent kill-after-charge intent_reconciled
no-retry-after duplicate-while-in-progress retry_after
replay-200 replay-identity identical_replay
completed-conflict replay-identity identical_replay
store-retryable downstream-failure-retry retryable_released
EOF

# Through a body patch (a "flaky" plan or sku) that the retry goes without,
# a refusal of the retry is of another request: retryable_released says
# unknown and why, never a wrong cause (issue 46 item 5). Out of band (the
# egress proxy failing the provider call, downstream-failure-retry, above)
# the retry is byte-identical and the stored 503 is caught.
echo "== store-retryable: the retry differs from the failure, unknown and said so"
run store-retryable-differs 3 "$target" --flaw store-retryable --filter retryable-failure-retry &&
  verdict store-retryable-differs retryable-failure-retry retryable_released unknown &&
  grep -q "differed from the failed request" "$work/store-retryable-differs.json" ||
  fail "store-retryable-differs: the evidence does not say the retry differed"

echo "== a missing Retry-After: a violation when required (above), a deviation when recommended"
# The same file with the one contract line changed: the no-retry-after bug
# then passes (exit 0, severity deviation), and --strict fails it (exit 1).
recommended=$work/foreign-node-recommended.yaml
sed 's/^  retry_after: required/  retry_after: recommended/' "$target" >"$recommended"
grep -q '^  retry_after: recommended' "$recommended" || fail "could not write $recommended"
run no-retry-after-recommended 0 "$recommended" --flaw no-retry-after --filter duplicate-while-in-progress &&
  verdict no-retry-after-recommended duplicate-while-in-progress retry_after invalid deviation
run no-retry-after-strict 1 "$recommended" --flaw no-retry-after --filter duplicate-while-in-progress --strict &&
  verdict no-retry-after-strict duplicate-while-in-progress retry_after invalid deviation

echo "== $failures failure(s)"
[ "$failures" -eq 0 ]
