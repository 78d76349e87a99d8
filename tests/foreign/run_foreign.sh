#!/usr/bin/env bash
# The suite against a service idemproof was never written for
# (shop_service.py, Python standard library, docs/foreign-target.md), from its
# target files alone:
#  - the correct service passes every applicable scenario (exit 0), and the
#    scenarios needing what it does not declare (payments, stock, queues,
#    batch jobs) are not_applicable, never passes or failures;
#  - each of its bugs (--flaw = its --bug) is caught: exit 1 with the aimed
#    oracle invalid in results.json;
#  - the same with replays NOT marked, in-progress = mismatch = 409, the key
#    in a body member instead of a header, the id captured from Location and
#    records counted as a listing's length (foreign-python-unmarked.yaml);
#  - the same with replays marked in the JSON body
#    (foreign-python-body-marker.yaml).
# Each target file's correct service runs the WHOLE suite and must exit 0
# with nothing unknown or invalid: a subset once hid a scenario the correct
# service could never pass through the unmarked file (issue 31).
# Usage: run_foreign.sh IDEMPROOF SOURCE_DIR WORK_DIR
set -uo pipefail
idemproof=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
cd "$src" || exit 2
marked=scenarios/targets/foreign-python.yaml
unmarked=scenarios/targets/foreign-python-unmarked.yaml
body_marked=scenarios/targets/foreign-python-body-marker.yaml
. "$src/tests/foreign/foreign_lib.sh"

# What the correct service passes through every one of its target files, and
# what it lacks (check_correct; a scenario added later must be one or the other).
passing="action-scope changed-request-rejected double-submit equivalent-retry key-reuse-other-payload missing-key
         put-target-state replay-identity resubmit-after-pause burst-after-window duplicate-while-in-progress
         identical-burst mixed-burst synchronized-burst hedged-pair lost-answer-retry proxy-replay
         resubmit-after-restart retry-after-window retry-fresh-request-id retry-inside-window retryable-failure-retry
         crash-mid-request killed-after-answer paused-owner-takeover"
lacking="delete-releases-once kill-after-charge kill-after-downstream store-fault-lease-overrun store-fault-killed-owner repeated-callback http-redelivery stream-redelivery
         rerun-after-partial-failure rerun-after-window route-spelling"

echo "== correct service, replays marked X-Cache: replayed"
run correct 0 "$marked" && check_correct correct "$passing" "$lacking"

echo "== each bug caught by the scenario aimed at it"
# bug scenario oracle
while read -r bug scenario oracle; do
  run "$bug" 1 "$marked" --flaw "$bug" --filter "$scenario" && verdict "$bug" "$scenario" "$oracle" invalid
done <<'EOF'
race identical-burst one_record
ignore-body key-reuse-other-payload mismatch_rejected
replay-regenerates replay-identity identical_replay
store-5xx retryable-failure-retry retryable_released
key-only-cache action-scope action_scope
no-lease crash-mid-request lease_recovery
memory-keys resubmit-after-restart one_record
EOF

# A key reused on another route refused with the mismatch status is what
# Stripe and the draft's fingerprint (it covers the route) allow (issue 46
# item 3): global-key is no bug, and action_scope says valid.
echo "== global keys, a reuse on another route refused as a mismatch: allowed"
run global-key 0 "$marked" --flaw global-key --filter action-scope &&
  verdict global-key action-scope action_scope valid

echo "== replays not marked, 409 for in progress and mismatch, the key in the body, the id in Location"
run unmarked-correct 0 "$unmarked" &&
  check_correct unmarked-correct "$passing" "$lacking" &&
  verdict unmarked-correct retry-after-window identical_replay valid &&
  verdict unmarked-correct burst-after-window identical_replay valid &&
  verdict unmarked-correct replay-identity identical_replay valid &&
  verdict unmarked-correct action-scope action_scope valid &&
  verdict unmarked-correct put-target-state probe_equal valid &&
  verdict unmarked-correct missing-key missing_key_rejected valid &&
  verdict unmarked-correct lost-answer-retry identical_replay valid &&
  verdict unmarked-correct duplicate-while-in-progress in_progress valid &&
  verdict unmarked-correct key-reuse-other-payload mismatch_rejected valid &&
  verdict unmarked-correct crash-mid-request lease_recovery valid &&
  verdict unmarked-correct double-submit no_false_dedup not_applicable
while read -r bug scenario oracle; do
  run "unmarked-$bug-$scenario" 1 "$unmarked" --flaw "$bug" --filter "$scenario" &&
    verdict "unmarked-$bug-$scenario" "$scenario" "$oracle" invalid
done <<'EOF'
key-only-cache action-scope action_scope
replay-regenerates replay-identity identical_replay
replay-regenerates retry-after-window identical_replay
ignore-body key-reuse-other-payload mismatch_rejected
EOF
# Without a marker a stored 503 looks like the downstream failing again:
# undecided (exit 3), never a pass.
run unmarked-store-5xx 3 "$unmarked" --flaw store-5xx --filter retryable-failure-retry &&
  verdict unmarked-store-5xx retryable-failure-retry retryable_released unknown

echo "== replays marked in the JSON body (\"replayed\": true), not by a header"
run body-marker-correct 0 "$body_marked" &&
  check_correct body-marker-correct "$passing" "$lacking" &&
  verdict body-marker-correct replay-identity identical_replay valid &&
  verdict body-marker-correct lost-answer-retry identical_replay valid &&
  verdict body-marker-correct double-submit no_false_dedup valid &&
  verdict body-marker-correct duplicate-while-in-progress in_progress valid
run body-marker-replay-regenerates 1 "$body_marked" --flaw replay-regenerates --filter replay-identity &&
  verdict body-marker-replay-regenerates replay-identity identical_replay invalid

echo "== $failures failure(s)"
[ "$failures" -eq 0 ]
