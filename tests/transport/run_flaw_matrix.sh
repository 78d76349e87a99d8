#!/usr/bin/env bash
# The flaw matrix through the real fronts (issue #35): the reference behind
# haproxy's TLS front (https, HTTP/1.1: tls_front.sh target) and behind its
# h2c front (`http: 2`, prior knowledge: tests/h2/make_target.py), each front
# started as the target's own start command. On each front:
#  - the correct reference passes every scenario below in one run (exit 0,
#    each aimed oracle valid);
#  - each flaw, one run of the scenario aimed at it (the pairs of
#    tests/harness-runtime/cli_test.cpp's kFlawMatrix and docs/cli.md), is
#    caught: exit 1 with that oracle invalid. check-then-insert through the
#    burst of the front's transport (last-byte over TLS, single-packet over
#    h2c), the in-progress flaws (a Retry-After of 0, a lease not renewed, a
#    claim that never expires after a crash) and the key flaws.
# None of these goes through the harness's chaos proxy (its h2 upstream is
# checked by tests/h2/run_h2_burst.sh).
# Usage: run_flaw_matrix.sh IDEMPROOF SOURCE_DIR WORK_DIR
. "$2/tests/transport/transport_lib.sh" "$@"

certs=$work/certs
bash tests/transport/tls_front.sh target scenarios/targets/reference.yaml "$work/tls.yaml" "$certs" tls || exit 1
python3 tests/h2/make_target.py "$src" "$work/h2c.yaml" "$certs" || exit 1

# flaw  scenario (under scenarios/)  aimed oracle  attempts (a race: up to 3)
matrix=(
  "check-then-insert concurrency/synchronized-burst one_record 3"
  "retry-after-zero concurrency/retry-after-honoured retry_after 1"
  "no-lease-renewal side-effect/lease-overrun-live key_released 1"
  "no-lease-expiry side-effect/crash-mid-request lease_recovery 1"
  "request-id-key gateway/retry-fresh-request-id one_record 1"
  "no-fingerprint client/key-reuse-other-payload mismatch_rejected 1"
  "fast-path-skips-fingerprint client/changed-request-rejected mismatch_rejected 1"
  "key-truncate client/long-key-prefix new_key_executes 1"
  "body-hash-key client/same-body-new-key new_key_executes 1"
)

t_start=$SECONDS
for front in tls h2c; do
  target=$work/$front.yaml
  paths=()
  for row in "${matrix[@]}"; do
    read -r flaw scenario oracle attempts <<<"$row"
    paths+=("scenarios/$scenario.yaml")
  done
  run "$front-correct" 0 "$target"
  for row in "${matrix[@]}"; do
    read -r flaw scenario oracle attempts <<<"$row"
    verdict "$front-correct" "${scenario#*/}" "$oracle" valid
  done
  for row in "${matrix[@]}"; do
    read -r flaw scenario oracle attempts <<<"$row"
    paths=("scenarios/$scenario.yaml")
    caught=0
    for attempt in $(seq "$attempts"); do
      # A race missed on a loaded machine is tried again (at most $attempts runs).
      before=$failures
      run "$front-$flaw" 1 "$target" --flaw "$flaw" >/dev/null &&
        verdict "$front-$flaw" "${scenario#*/}" "$oracle" invalid && { caught=1; break; }
      failures=$before
    done
    if [ $caught = 1 ]; then
      echo "$front --flaw $flaw: caught by ${scenario#*/} ($oracle invalid), attempt $attempt"
    else
      fail "$front --flaw $flaw: not caught by ${scenario#*/} in $attempts run(s): $(tail -n 3 "$work/$front-$flaw.out")"
    fi
  done
done
echo "flaw matrix through the fronts: $((SECONDS - t_start)) s"
[ "$failures" = 0 ] && echo "flaw matrix: all checks passed" || echo "flaw matrix: $failures failure(s)"
exit $((failures > 0))
