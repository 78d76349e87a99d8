#!/usr/bin/env bash
# Single-packet HTTP/2 bursts over TLS (issue #35): the reference behind
# haproxy's TLS front (tls_front.sh: ALPN h2,http/1.1, a CA made per run)
# with `http: 2` in the target file, so every `mode: last_byte` burst is one
# TLS connection whose streams' final frames are sealed in one record and
# released by one write.
#  - synchronized-burst on the correct reference: exit 0, one_record valid,
#    the history's burst note says single_packet_h2, release_writes 1, one
#    TLS record, every final frame in segment 0 (tests/h2/check_history.py);
#  - --flaw check-then-insert caught through that burst: exit 1, one_record
#    invalid (a race: up to 3 runs);
#  - a wrong CA: exit 2 with the TLS error, no request reached the service.
# The burst's own refusals (a CA it does not trust, a server that does not
# select h2) are tests/harness-runtime/h2_burst_tls_test.cpp's.
# Usage: run_h2_tls.sh IDEMPROOF SOURCE_DIR WORK_DIR
. "$2/tests/transport/transport_lib.sh" "$@"

certs=$work/certs
bash tests/transport/tls_front.sh target scenarios/targets/reference.yaml "$work/tls.yaml" "$certs" tls || exit 1
sed 's|^\(base_url: "https://.*"\)$|\1\nhttp: 2|' "$work/tls.yaml" >"$work/h2-tls.yaml"
grep -q '^http: 2$' "$work/h2-tls.yaml" || { fail "no http: 2 written into the target"; exit 1; }
sed 's|certs/ca.pem"}|certs/other-ca.pem"}|' "$work/h2-tls.yaml" >"$work/wrong-ca.yaml"
cmp -s "$work/h2-tls.yaml" "$work/wrong-ca.yaml" && { fail "wrong-ca: nothing changed"; exit 1; }

history_of() { ls "$work/runs-$1"/*/"$2"/history.jsonl 2>/dev/null | head -1; }
# How many requests the service behind the front answered in a run (its arrival stamps).
answered() { grep -rho '"X-Arrival-Ns"' "$work/runs-$1" 2>/dev/null | wc -l; }

paths=(scenarios/concurrency/synchronized-burst.yaml)
run clean 0 "$work/h2-tls.yaml"
verdict clean synchronized-burst one_record valid
python3 tests/h2/check_history.py "$(history_of clean synchronized-burst.create_order)" single-packet 32 tls ||
  fail "clean: the burst was not one TLS record in one write"

caught=0
for attempt in 1 2 3; do
  # A race missed on a loaded machine is tried again.
  before=$failures
  run check-then-insert 1 "$work/h2-tls.yaml" --flaw check-then-insert >/dev/null &&
    verdict check-then-insert synchronized-burst one_record invalid violation && { caught=1; break; }
  failures=$before
done
[ $caught = 1 ] && echo "check-then-insert: caught, attempt $attempt" ||
  fail "check-then-insert: not caught in 3 runs: $(tail -n 3 "$work/check-then-insert.out")"
python3 tests/h2/check_history.py "$(history_of check-then-insert synchronized-burst.create_order)" single-packet 32 tls ||
  fail "check-then-insert: the burst was not one TLS record in one write"

run wrong-ca 2 "$work/wrong-ca.yaml"
grep -q "failed the TLS handshake, nothing was sent.*unable to get local issuer certificate" "$work/wrong-ca.out" ||
  fail "wrong-ca: no TLS error on the console: $(tail -2 "$work/wrong-ca.out")"
[ "$(answered wrong-ca)" = 0 ] || fail "wrong-ca: $(answered wrong-ca) answer(s) came from the service"

[ "$failures" = 0 ] && echo "h2 over TLS: all checks passed" || echo "h2 over TLS: $failures failure(s)"
exit $((failures > 0))
