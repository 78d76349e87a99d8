# Shared by the foreign-target scripts (run_foreign.sh, run_foreign_node.sh):
# running idemproof on a target and reading verdicts out of results.json.
# Sourced; REQUIRES: $idemproof, $work set, the current directory the source tree.
# `idemproof run` hunts for 60 s after its suite by default; the runs here test something else.
export IDEMPROOF_HUNT="${IDEMPROOF_HUNT:-0}"
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run NAME EXPECTED_EXIT TARGET [idemproof run options...]: runs the
# scenarios under ${paths[@]} (default: the whole suite), leaves the run
# directory's results.json as $work/NAME.json.
paths=(scenarios/)
run() {
  local name=$1 want=$2 target=$3
  shift 3
  local t0=$SECONDS
  "$idemproof" run "${paths[@]}" --target "$target" --out "$work/runs-$name" --seed 7 "$@" >"$work/$name.out" 2>&1 </dev/null
  local rc=$?
  echo "$name: exit $rc (want $want), $((SECONDS - t0)) s"
  cp "$work/runs-$name/latest/results.json" "$work/$name.json" 2>/dev/null
  if [ "$rc" != "$want" ]; then
    fail "$name: exit $rc, expected $want"
    tail -40 "$work/$name.out"
    return 1
  fi
}

# verdict NAME SCENARIO ORACLE STATUS [SEVERITY]: results.json of run NAME
# has that verdict (an invalid one also of that severity: violation, deviation).
verdict() {
  python3 - "$work/$1.json" "$2" "$3" "$4" "${5:-}" <<'EOF' || fail "$1: $2/$3 is not $4 ${5:-}"
import json, sys
path, scenario, oracle, want, severity = sys.argv[1:]
doc = json.load(open(path))
# a bound row ("double-submit[create_transfer]") answers for its scenario's name
got = [v for s in doc["scenarios"] if scenario in (s["name"], s.get("scenario"))
       for v in s["verdicts"] if v["oracle"] == oracle]
if not got or any(v["status"] != want or (severity and v.get("severity") != severity) for v in got):
    print("  %s/%s: %s" % (scenario, oracle, [(v["status"], v.get("severity"), v["evidence"][:200]) for v in got]
                           or "no verdict"))
    sys.exit(1)
print("  %s/%s: %s %s(%s)" % (scenario, oracle, want, severity + " " if severity else "", got[0]["evidence"][:110]))
EOF
}

# The correct service: each scenario of $2 passes (valid verdicts, n.a.
# oracles allowed), each of $3 is not_applicable "needs ..." as a whole;
# any other (a scenario added later) must be one or the other.
check_correct() {
  python3 - "$work/$1.json" "$2" "$3" <<'EOF' || fail "$1: verdicts"
import json, sys
path, passing, not_applicable = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split())
doc = json.load(open(path))
ok = True
def passed(s):
    statuses = {v["status"] for v in s["verdicts"]}
    return not s.get("error") and "valid" in statuses and statuses <= {"valid", "not_applicable"}
def needs(s):
    return bool(s["verdicts"]) and all(v["status"] == "not_applicable" and v["evidence"].startswith("needs ")
                                       for v in s["verdicts"])
def base(s):  # a bound row ("double-submit[create_transfer]") counts for its scenario
    return s.get("scenario") or s["name"]
for s in doc["scenarios"]:
    want = "pass" if base(s) in passing else "n.a." if base(s) in not_applicable else "either"
    good = {"pass": passed(s), "n.a.": needs(s), "either": passed(s) or needs(s)}[want]
    if not good:
        ok = False
        print("  %s should %s: %s %s" % (s["name"], want, [(v["oracle"], v["status"], v["evidence"][:120])
                                                           for v in s["verdicts"]], s.get("error", "")))
missing = (passing | not_applicable) - {base(s) for s in doc["scenarios"]}
if missing:
    print("  scenarios missing from the run: %s" % sorted(missing)); ok = False
print("  %d scenario(s) passed, %d not applicable" % (sum(map(passed, doc["scenarios"])),
                                                     sum(map(needs, doc["scenarios"]))))
sys.exit(0 if ok else 1)
EOF
}

