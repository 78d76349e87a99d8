#!/usr/bin/env bash
# HTTPS through a real TLS front (issue #35): the reference service behind
# Debian's haproxy (tls_front.sh: a CA and a server certificate made per run,
# haproxy started as the target's start command), from a target file that
# differs from scenarios/targets/reference.yaml only in its base_url, start
# and tls: (tls_front.sh target).
#  - clean: the libcurl sends, the naive burst and the last-byte burst (its
#    final byte sealed in a TLS record) through TLS: exit 0;
#  - a proxy fault (lost-answer-retry: the chaos proxy speaks TLS to the
#    target) clean, and request-id-key caught through it;
#  - check-then-insert caught by the last-byte burst, a key flaw
#    (no-fingerprint) by a plain send, both through HTTPS/1.1: exit 1;
#  - server_name: SNI and the name verified instead of 127.0.0.1 (the libcurl
#    client and the burst), exit 0; a name the certificate lacks: exit 2;
#  - a wrong CA: exit 2 with the TLS error, no request reached the service;
#  - insecure: true: exit 0, results.json and report.md say verification was off.
# Usage: run_transport.sh IDEMPROOF SOURCE_DIR WORK_DIR
. "$2/tests/transport/transport_lib.sh" "$@"

front=tests/transport/tls_front.sh
certs=$work/certs
bash $front target scenarios/targets/reference.yaml "$work/tls.yaml" "$certs" || exit 1
variant() {  # variant NAME SED-EXPRESSION: $work/NAME.yaml from tls.yaml
  sed "$2" "$work/tls.yaml" >"$work/$1.yaml"
  cmp -s "$work/tls.yaml" "$work/$1.yaml" && { fail "variant $1: nothing changed"; return 1; }
}
variant wrong-ca 's|certs/ca.pem"}|certs/other-ca.pem"}|'
variant insecure 's|^tls: {ca_file: .*}$|tls: {insecure: true}|'
variant named 's|^tls: {ca_file: \(.*\)}$|tls: {ca_file: \1, server_name: front.idemproof.test}|'
variant relative 's|^tls: {ca_file: .*}$|tls: {ca_file: certs/ca.pem}|'
variant typo 's|^tls: {ca_file: \(.*\)}$|tls: {ca_fil: \1}|'
variant contradicting 's|^tls: {ca_file: \(.*\)}$|tls: {ca_file: \1, insecure: true}|'
variant misnamed 's|^tls: {ca_file: \(.*\)}$|tls: {ca_file: \1, server_name: elsewhere.idemproof.test}|'

# How many requests the service behind the front answered in a run (its
# arrival stamps): none may pass a handshake that failed.
answered() { grep -rho '"X-Arrival-Ns"' "$work/runs-$1" 2>/dev/null | wc -l; }

paths=(scenarios/client/double-submit.yaml scenarios/concurrency/identical-burst.yaml
       scenarios/concurrency/synchronized-burst.yaml scenarios/client/key-reuse-other-payload.yaml
       scenarios/gateway/lost-answer-retry.yaml)
run clean 0 "$work/tls.yaml"
verdict clean lost-answer-retry faults_fired valid
verdict clean synchronized-burst one_record valid
verdict clean key-reuse-other-payload mismatch_rejected valid
python3 - "$work/clean.json" <<'PY' || fail "clean: the last-byte burst recorded no spread"
import json, sys, glob, os
doc = json.load(open(sys.argv[1]))
row = [s for s in doc["scenarios"] if s["name"].startswith("synchronized-burst")][0]
hist = os.path.join(os.path.dirname(sys.argv[1]), "runs-clean", "latest", row["history_file"])
spreads = [l for l in open(hist) if '"target_spread_us"' in l]
print("  synchronized-burst through TLS: %s" % (spreads[0].strip()[:160] if spreads else "no spread"))
sys.exit(0 if spreads else 1)
PY

paths=(scenarios/concurrency/synchronized-burst.yaml)
# A race: one burst can miss the flaw's window on a loaded machine (a CI run
# beside other tests: 32 requests, one execution); up to 3 runs, each a
# fresh burst, as the h2 scripts do. Only the last attempt's misses count.
before=$failures
for attempt in 1 2 3; do
  failures=$before
  run check-then-insert 1 "$work/tls.yaml" --flaw check-then-insert &&
    verdict check-then-insert synchronized-burst one_record invalid violation
  [ "$failures" = "$before" ] && break
done
echo "check-then-insert: attempt $attempt"
paths=(scenarios/client/key-reuse-other-payload.yaml)
run no-fingerprint 1 "$work/tls.yaml" --flaw no-fingerprint
verdict no-fingerprint key-reuse-other-payload mismatch_rejected invalid

# The chaos proxy in front of the https:// target (plain HTTP from the
# harness on loopback, TLS from the proxy to the target).
paths=(scenarios/gateway/lost-answer-retry.yaml)
run request-id-key 1 "$work/tls.yaml" --flaw request-id-key
verdict request-id-key lost-answer-retry one_record invalid violation

paths=(scenarios/client/double-submit.yaml scenarios/concurrency/synchronized-burst.yaml)
run named 0 "$work/named.yaml"
verdict named synchronized-burst one_record valid
run misnamed 2 "$work/misnamed.yaml"
grep -q "match\|mismatch" "$work/misnamed.out" || fail "misnamed: no name error: $(tail -2 "$work/misnamed.out")"

# tls: in the target file: a ca_file relative to the file's folder; a
# misspelt key and ca_file with insecure: true are located errors.
run relative 0 "$work/relative.yaml"
run typo 2 "$work/typo.yaml"
grep -q "typo.yaml:[0-9]*:[0-9]*.*ca_fil" "$work/typo.out" || fail "typo: no located error: $(tail -2 "$work/typo.out")"
run contradicting 2 "$work/contradicting.yaml"
grep -q "contradicting.yaml:[0-9]*:[0-9]*.*insecure" "$work/contradicting.out" ||
  fail "contradicting: no located error: $(tail -2 "$work/contradicting.out")"

run wrong-ca 2 "$work/wrong-ca.yaml"
grep -q "failed the TLS handshake, nothing was sent.*unable to get local issuer certificate" "$work/wrong-ca.out" ||
  fail "wrong-ca: no TLS error on the console: $(tail -2 "$work/wrong-ca.out")"
[ "$(answered wrong-ca)" = 0 ] || fail "wrong-ca: $(answered wrong-ca) answer(s) came from the service"

paths=(scenarios/client/double-submit.yaml)
run insecure 0 "$work/insecure.yaml"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["target"]; sys.exit(t.get("tls_verification") != "off")' \
  "$work/insecure.json" || fail "insecure: results.json does not say tls_verification off"
grep -q "TLS verification was off" "$work/runs-insecure/latest/report.md" || fail "insecure: report.md does not say so"
python3 -c 'import json,sys; sys.exit("tls_verification" in json.load(open(sys.argv[1]))["target"])' \
  "$work/clean.json" || fail "clean: results.json says verification was off"

[ "$failures" = 0 ] && echo "transport: all checks passed" || echo "transport: $failures failure(s)"
exit $((failures > 0))
