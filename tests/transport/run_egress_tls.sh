#!/usr/bin/env bash
# Egress in front of an HTTPS downstream (issue #35): the reference's payment
# stub behind a real TLS front (tls_front.sh started as the stub service's
# command), from a target file that differs from
# scenarios/targets/reference-egress.yaml only in the stub service's start,
# url and tls: and the egress's tls:. The harness's egress proxy takes the
# reference's plain HTTP and speaks TLS to the stub.
#  - kill-after-charge (the kill fault on the egress hop) and
#    kill-after-downstream: exit 0, the egress record holds the charges, each
#    answered by the stub through TLS, and the ledger probe counts one;
#  - reference.yaml's own hook to the stub and its ledger probe (base: stub)
#    over the service's tls:, its egress taking that tls: too: exit 0;
#  - no-intent caught through it: exit 1 (downstream_once reads the record);
#  - the egress's tls: names a wrong CA: exit 2 with the TLS error, no charge
#    reached the stub; the service's own tls: a wrong CA: exit 2 too (its
#    ready check); a misspelt key in a service's tls: is a located error;
#  - insecure: true on the egress: exit 0, results.json, report.md and
#    report.html name the egress whose certificate was not checked.
# Usage: run_egress_tls.sh IDEMPROOF SOURCE_DIR WORK_DIR
. "$2/tests/transport/transport_lib.sh" "$@"

certs=$work/certs
bash tests/transport/tls_front.sh certs "$certs" || exit 1
# egress-tls.yaml: reference-egress.yaml with the stub behind the front, the
# egress naming its own tls:. hooks-tls.yaml: reference.yaml with the same
# stub, reached by the reference through an egress that names no tls: (it
# takes the service's), and by the harness's own hook and ledger probe
# (base: stub) over the service's tls:.
python3 - "$src" "$work" "$(cd "$certs" && pwd)" <<'PY' || exit 1
import sys
src, work, certs = sys.argv[1:]
def swap(text, old, new, source):
    if old not in text:
        sys.exit(f"run_egress_tls.sh: {source} no longer has {old!r}")
    return text.replace(old, new, 1)
def stub_behind_front(source):
    text = open(f"{src}/scenarios/targets/{source}").read()
    return swap(text, '''    argv: ["{{build_dir}}/payment-stub/idemproof-stub", "--port", "0"]
    port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'
''', f'''    argv: ["bash", "{src}/tests/transport/tls_front.sh", "front", "--certs", "{certs}", "--",
           "{{{{build_dir}}}}/payment-stub/idemproof-stub", "--port", "0"]
    port_from_stdout: 'tls front on 127\\.0\\.0\\.1:(\\d+)'
    url: "https://127.0.0.1:{{{{port}}}}"
    tls: {{ca_file: "{certs}/ca.pem"}}
''', source)
text = stub_behind_front("reference-egress.yaml")
text = swap(text, "name: reference-egress\n", "name: reference-egress-tls\n", "reference-egress.yaml")
text = swap(text, '''    upstream: "{{services.stub.url}}"
''', f'''    upstream: "{{{{services.stub.url}}}}"
    tls: {{ca_file: "{certs}/ca.pem"}}
''', "reference-egress.yaml")
open(f"{work}/egress-tls.yaml", "w").write(text)
text = stub_behind_front("reference.yaml")
text = swap(text, '"--payment-provider", "{{services.stub.url}}"', '"--payment-provider", "{{egress.stub.url}}"',
            "reference.yaml")
open(f"{work}/hooks-tls.yaml", "w").write(text + 'egress:\n  stub: {upstream: "{{services.stub.url}}"}\n')
PY
variant() {  # variant NAME SED-EXPRESSION: $work/NAME.yaml from egress-tls.yaml
  sed "$2" "$work/egress-tls.yaml" >"$work/$1.yaml"
  cmp -s "$work/egress-tls.yaml" "$work/$1.yaml" && { fail "variant $1: nothing changed"; return 1; }
}
# The egress's tls: is the second one (after the service's).
variant egress-wrong-ca '/^egress:/,$ s|/ca.pem"}|/other-ca.pem"}|'
variant service-wrong-ca '/^services:/,/^egress:/ s|/ca.pem"}|/other-ca.pem"}|'
variant service-typo '/^services:/,/^egress:/ s|tls: {ca_file:|tls: {ca_fil:|'
variant egress-insecure '/^egress:/,$ s|tls: {ca_file: .*}$|tls: {insecure: true}|'

# Charges the egress record saw, and how many of them the stub answered 2xx
# (through TLS: the proxy's only way to the stub).
charges() {
  python3 - "$work/runs-$1" <<'PY'
import glob, json, sys
sent = answered = 0
for path in glob.glob(sys.argv[1] + "/latest/**/history.jsonl", recursive=True):
    for line in open(path):
        e = json.loads(line)
        v = e.get("value", {})
        if e.get("process") == "egress" and v.get("method") == "POST" and v.get("path") == "/charge":
            sent += 1
            answered += isinstance(v.get("status"), int) and 200 <= v["status"] < 300
print(sent, answered)
PY
}

paths=(scenarios/side-effect/kill-after-charge.yaml scenarios/side-effect/kill-after-downstream.yaml)
run clean 0 "$work/egress-tls.yaml"
verdict clean kill-after-charge intent_reconciled valid
verdict clean kill-after-charge faults_fired valid
verdict clean kill-after-downstream downstream_once valid
read -r sent answered <<<"$(charges clean)"
echo "  egress record: $sent charge(s), $answered answered 2xx by the stub through TLS"
[ "$sent" -ge 2 ] && [ "$sent" = "$answered" ] || fail "clean: the egress record has $sent charge(s), $answered answered"
python3 - "$work/runs-clean" <<'PY' || fail "clean: the ledger probe did not count one charge"
import glob, json, sys
for path in glob.glob(sys.argv[1] + "/latest/**/history.jsonl", recursive=True):
    if "kill-after-charge" not in path: continue
    values = [json.loads(l)["value"] for l in open(path)]
    ledger = [v["value"] for v in values if v.get("label") == "charges" and "value" in v]
    print("  kill-after-charge ledger (charges): %s" % ledger[-1:])
    sys.exit(0 if ledger and isinstance(ledger[-1], list) and len(ledger[-1]) == 1 else 1)
sys.exit(1)
PY

# The hook arming the stub's kill and the ledger probe go to the https://
# stub with its tls:, the reference's charges through the egress.
paths=(scenarios/side-effect/kill-after-charge.yaml)
run hooks 0 "$work/hooks-tls.yaml"
verdict hooks kill-after-charge intent_reconciled valid
verdict hooks kill-after-charge one_record valid
read -r sent answered <<<"$(charges hooks)"
echo "  egress record: $sent charge(s) (the stub kills the reference before it answers the first)"
[ "$sent" -ge 1 ] || fail "hooks: no charge in the egress record"
python3 - "$work/runs-hooks" <<'PY' || fail "hooks: the ledger probe (base: stub) did not read one charge"
import glob, json, sys
ok = [json.loads(l)["value"] for p in glob.glob(sys.argv[1] + "/latest/**/history.jsonl", recursive=True)
      for l in open(p) if '"ledger"' in l]
ledger = [v["value"] for v in ok if v.get("label") == "ledger" and "value" in v]
print("  ledger probe over the service's tls: %s" % ledger[-1:])
sys.exit(0 if ledger and ledger[-1] == [ledger[-1][0]] else 1)
PY

paths=(scenarios/side-effect/kill-after-downstream.yaml)
run no-intent 1 "$work/egress-tls.yaml" --flaw no-intent
verdict no-intent kill-after-downstream downstream_once invalid violation

run egress-wrong-ca 2 "$work/egress-wrong-ca.yaml"
grep -q "egress stub.*failed the TLS handshake, nothing was sent.*unable to get local issuer certificate" \
  "$work/egress-wrong-ca.out" || fail "egress-wrong-ca: no TLS error on the console: $(tail -3 "$work/egress-wrong-ca.out")"
read -r sent answered <<<"$(charges egress-wrong-ca)"
[ "$answered" = 0 ] || fail "egress-wrong-ca: $answered charge(s) reached the stub"

run service-wrong-ca 2 "$work/service-wrong-ca.yaml"
grep -q "service stub.*failed the TLS handshake, nothing was sent.*unable to get local issuer certificate" \
  "$work/service-wrong-ca.out" || fail "service-wrong-ca: no TLS error on the console: $(tail -3 "$work/service-wrong-ca.out")"

run service-typo 2 "$work/service-typo.yaml"
grep -q "service-typo.yaml:[0-9]*:[0-9]*.*ca_fil" "$work/service-typo.out" ||
  fail "service-typo: no located error: $(tail -2 "$work/service-typo.out")"

# insecure: true on the egress: the charges go through unchecked, and every
# page of the run says whose certificate was not checked.
paths=(scenarios/side-effect/kill-after-downstream.yaml)
run egress-insecure 0 "$work/egress-insecure.yaml"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["target"]; sys.exit(t.get("tls_unverified") != ["egress stub"] or "tls_verification" in t)' \
  "$work/egress-insecure.json" || fail "egress-insecure: results.json does not name the egress as unverified"
for page in report.md report.html; do
  grep -q "TLS verification was off for egress stub" "$work/runs-egress-insecure/latest/$page" ||
    fail "egress-insecure: $page does not say the egress was not verified"
done
python3 -c 'import json,sys; sys.exit("tls_unverified" in json.load(open(sys.argv[1]))["target"])' \
  "$work/clean.json" || fail "clean: results.json says a peer was not verified"

[ "$failures" = 0 ] && echo "egress tls: all checks passed" || echo "egress tls: $failures failure(s)"
exit $((failures > 0))
