// mismatch_rejected and missing_key_rejected: requests a correct target must
// refuse with the declared status (a 5xx to a missing key is a violation).
// mismatch_rejected judges `payload: other` and the changed forms
// (model/payload.h) after the key's default use, and racing it: of two
// payloads racing under one key at most one may get a 2xx. A reuse more than
// the declared window after the answer that opened the key's last window is
// not judged: the record may have expired. A request refused by
// authentication (AuthRefused: 401, 403) never reached the key check: a
// reuse so answered, or one whose key's default uses all were, is not judged
// (premise not reached, with the statuses). A valid verdict quotes the
// statuses the judged reuses got.
// keyless_executes: with `key: optional`, a keyless request is executed (2xx)
// and never answered as a replay.
#include <algorithm>
#include <map>
#include <tuple>

#include "model/payload.h"
#include "oracles/refusals.h"

namespace idemproof::oracles {

Verdict MismatchRejected(const OracleInput& in) {
  const std::string name = "mismatch_rejected";
  const auto& contract = in.target.idempotency;
  auto groups = GroupRequestsByKey(in.history, ActionsParam(in.params));
  // Every payload's uses of one key (one action, one caller's hands).
  using KeyId = std::tuple<std::string, std::string, std::string>;
  std::map<KeyId, std::vector<const RequestGroup*>> uses;
  for (const auto& g : groups) uses[{g.action, g.key, g.caller}].push_back(&g);

  Violations violations;
  int judged = 0, undecided = 0, past_window = 0;
  AnswerTally answered;       // the judged reuses' answers
  AnswerTally auth_refused;   // reuses turned away before the key check
  AnswerTally key_unheld;     // reuses of a key whose default uses all were
  AnswerTally set_aside;      // reuses that reached the key and decided nothing, by why
  for (const auto& g : groups) {
    if (!IsOtherRequestClass(g.payload)) continue;
    const std::vector<const RequestGroup*>& key_uses = uses.at({g.action, g.key, g.caller});
    auto it = std::find_if(key_uses.begin(), key_uses.end(), [](const RequestGroup* u) { return u->payload == "default"; });
    if (it == key_uses.end()) continue;
    // The default uses that reached the key check: only they can hold the key.
    RequestGroup original = **it;
    std::erase_if(original.ops, [&](const Operation& o) { return AuthRefused(o, contract); });
    for (const auto& op : g.ops) {
      if (AuthRefused(op, contract)) {
        auth_refused.Add(op);
        continue;
      }
      if (original.ops.empty()) {
        key_unheld.Add(op);
        continue;
      }
      // What the key held when this other payload came: a result stored by a
      // default use that finished before it, or a default use still running.
      // A key whose earlier uses all failed retryably (released) or were lost
      // (perhaps never stored) may be free: executing then is no violation.
      bool used_before = false, running = false, stored = false, running_executed = false;
      for (const auto& o : original.ops) {
        if (o.invoke_ns() >= op.invoke_ns()) continue;
        used_before = true;
        const AnswerClass oc = Classify(o, contract);
        if (o.completion == nullptr || o.complete_ns() > op.invoke_ns()) {
          running = true;
          running_executed = running_executed || oc == AnswerClass::kSuccess;
        } else if (IsTerminal(oc)) {
          stored = true;
        }
      }
      // Past the declared window the stored result may have expired: another
      // payload may then take the key (or still be refused): not judged. The
      // window is opened by any use of the key, this payload's too: once it
      // took the expired key, its own retries in that window are replays.
      if (stored && contract.window) {
        std::vector<Operation> before;
        for (const RequestGroup* use : key_uses)
          for (const auto& o : use->ops)
            if (o.invoke_ns() < op.invoke_ns() && !AuthRefused(o, contract)) before.push_back(o);
        std::sort(before.begin(), before.end(),
                  [](const Operation& a, const Operation& b) { return a.invoke_ns() < b.invoke_ns(); });
        const auto segments = WindowSegments(before, contract);
        const Operation* opener = nullptr;  // whose answer opened the last window
        for (const auto& o : segments.back()) {
          if (IsTerminal(Classify(o, contract))) {
            opener = &o;
            break;
          }
        }
        const auto window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(*contract.window).count();
        if (opener != nullptr && (op.invoke_ns() - opener->complete_ns() > window_ns ||
                                  opener->invoke->payload == op.invoke->payload)) {
          ++past_window;
          set_aside.AddAs("reuse past the declared window");
          continue;
        }
      }
      AnswerClass c = Classify(op, contract);
      auto a = op.answer();
      if (!used_before) {
        // The other payload came first: the key's first use, unless a default
        // use overlapped it (a burst mixing both). Racing, at most one of the
        // two may succeed: two 2xx mean both executed, or one got the other's answer.
        const Operation* raced_success = nullptr;
        bool raced = false;
        for (const auto& o : original.ops) {
          const bool overlaps = op.completion == nullptr || o.invoke_ns() <= op.complete_ns();
          if (!overlaps || (o.completion != nullptr && o.complete_ns() < op.invoke_ns())) continue;
          raced = true;
          if (Classify(o, contract) == AnswerClass::kSuccess && raced_success == nullptr) raced_success = &o;
        }
        if (!raced) continue;
        if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
          ++undecided;
          set_aside.AddAs(c == AnswerClass::kNoAnswer ? "no answer" : std::to_string(a->status) + " retryable");
          continue;
        }
        ++judged;
        answered.Add(op);
        if (c == AnswerClass::kSuccess && raced_success != nullptr) {
          violations.Add(MakeFinding("key " + g.key + ": " + OpName(op) + " and " + OpName(*raced_success) +
                                         " raced under one key with different payloads and both got 2xx (" +
                                         AnswerSummary(*a) + ", " + AnswerSummary(*raced_success->answer()) +
                                         "): both executed, or one got the other's answer",
                                     {{"key", g.key}, {"action", g.action}})
                             .With(FindingRole::kRequest, OpJson(op))
                             .With(FindingRole::kFirst, OpJson(*raced_success)));
        }
        continue;
      }
      if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
        ++undecided;
        set_aside.AddAs(c == AnswerClass::kNoAnswer ? "no answer" : std::to_string(a->status) + " retryable");
        continue;
      }
      if (contract.IsMismatch(a->status)) {
        ++judged;
        answered.Add(op);
        continue;
      }
      // A request the harness changed (a value, a field) may fail the
      // target's validation before its key is looked up: refused all the same
      // (a 400 that is also the declared missing-key status too: it had a key).
      // With validation_first declared, so may another payload.
      const bool derived = IsChangedFormName(op.invoke->payload);
      if ((derived || contract.validation_first) &&
          (c == AnswerClass::kOtherFinal || c == AnswerClass::kMissingKey) && a->status >= 400 && a->status < 500 &&
          !(contract.replay && IsReplayMarked(*a, contract))) {
        ++judged;
        answered.Add(op);
        continue;
      }
      if (c == AnswerClass::kInProgress && running) {
        ++judged;
        answered.Add(op);
        continue;
      }
      // Both payloads executed under one key at once is wrong whatever the order.
      if (!stored && !(running_executed && c == AnswerClass::kSuccess)) {
        ++undecided;
        set_aside.AddAs(std::to_string(a->status) + " while no result of the key was stored");
        continue;
      }
      ++judged;
      answered.Add(op);
      std::string ev;
      const Operation* first = FirstTerminal(original, contract);
      const std::string reused = derived ? "reused with a changed request (" + ChangeSummary(op) + ")"
                                         : "reused with another payload";
      if (c == AnswerClass::kSuccess && first != nullptr &&
          AnswerDifferences(*first->answer(), *a, in.target.VolatilePathsFor(g.action), {}).empty()) {
        ev = "key " + g.key + " " + reused + " got the first result " + AnswerSummary(*a) +
             " instead of " + contract.MismatchText();
      } else if (c == AnswerClass::kSuccess) {
        ev = "key " + g.key + " " + reused + " was executed: " + AnswerSummary(*a) + " instead of " +
             contract.MismatchText();
      } else {
        ev = "key " + g.key + " " + reused + " answered " + AnswerSummary(*a) + " instead of " +
             contract.MismatchText();
      }
      Finding v = MakeFinding(ev, {{"key", g.key}, {"action", g.action}}).With(FindingRole::kRequest, OpJson(op));
      if (first != nullptr) v.With(FindingRole::kFirst, OpJson(*first));
      // Refused, and not with the first result: only the status code is wrong.
      const bool refused = a->status >= 400 && a->status < 500 && !(contract.replay && IsReplayMarked(*a, contract));
      if (refused && (first == nullptr ||
                      !AnswerDifferences(*first->answer(), *a, in.target.VolatilePathsFor(g.action), {}).empty()))
        v.rule = "status";
      violations.Add(v);
    }
  }
  // Why some reuses were not judged: they never reached the key check.
  std::string unreached;
  if (auth_refused.total() > 0)
    unreached = std::to_string(auth_refused.total()) + " reuse(s) answered " + auth_refused.Text() +
                ": refused by authentication before any key was looked up";
  if (key_unheld.total() > 0)
    unreached += (unreached.empty() ? "" : "; ") + std::to_string(key_unheld.total()) +
                 " reuse(s) of a key whose every use was refused by authentication: no key was held";
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = judged;
  details.counts.undecided = undecided;
  details.counts.past_window = past_window;
  details.tallies.answered = answered.Counts();
  details.tallies.auth_refused = auth_refused.Counts();
  details.tallies.key_unheld = key_unheld.Counts();
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string note = (unreached.empty() ? "" : " (" + unreached + ")") + SetAsideClause(set_aside);
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " reuse(s) of a key with another payload, answered " + answered.Text() +
                      " (declared: " + contract.MismatchText() + ")" + note,
                  "no reuse with another payload got a decisive answer" + note,
                  unreached.empty() ? "the scenario never reused a key with another payload"
                                    : "no reuse with another payload reached the key check: " + unreached);
}

namespace {
// The requests sent without a key, of the `actions` parameter's actions.
std::vector<Operation> KeylessRequests(const OracleInput& in) {
  const auto filter = ActionsParam(in.params);
  std::vector<Operation> out;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (e.key.empty() && (filter.empty() || std::find(filter.begin(), filter.end(), e.action) != filter.end()))
      out.push_back(op);
  }
  return out;
}
}  // namespace

Verdict MissingKeyRejected(const OracleInput& in) {
  const std::string name = "missing_key_rejected";
  const auto& contract = in.target.idempotency;
  if (contract.key_optional)
    return Verdict::NotApplicable(name, "the key is optional (idempotency.key: optional): keyless_executes judges");
  Violations violations;
  RefusalTally t;
  for (const auto& op : KeylessRequests(in)) {
    const auto& e = *op.invoke;
    const auto a = JudgeRefusal(op, contract, contract.missing_key, t);
    if (!a) continue;
    std::string ev = e.action + " without " + (contract.key_header.empty() ? "its key" : contract.key_header) + " " +
                     (a->is_2xx() ? "was executed: " : "answered ") + AnswerSummary(*a) + " instead of " +
                     std::to_string(contract.missing_key);
    Finding v = MakeFinding(ev).With(FindingRole::kRequest, OpJson(op));
    if (a->status >= 400 && a->status < 500) v.rule = "status";  // refused, with another code
    violations.Add(v);
  }
  const int judged = t.judged, undecided = t.undecided;
  const AnswerTally& answered = t.answered;
  const AnswerTally& auth_refused = t.auth_refused;
  const VerdictDetails details = RefusalDetails(violations, t);
  const std::string unreached =
      auth_refused.total() == 0 ? ""
                                : std::to_string(auth_refused.total()) + " request(s) without a key answered " +
                                      auth_refused.Text() + ": refused by authentication before any key was looked up";
  const std::string note = unreached.empty() ? "" : " (" + unreached + ")";
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " request(s) without a key, answered " + answered.Text() + note +
                      SetAsideClause(t.set_aside),
                  "no request without a key got a decisive answer" + note,
                  unreached.empty() ? "the scenario sent no request without a key"
                                    : "no request without a key reached the key check: " + unreached);
}

Verdict KeylessExecutes(const OracleInput& in) {
  const std::string name = "keyless_executes";
  const auto& contract = in.target.idempotency;
  if (!contract.key_optional)
    return Verdict::NotApplicable(name, "the key is required (idempotency.key): missing_key_rejected judges");
  Violations violations;
  int judged = 0, undecided = 0;
  for (const auto& op : KeylessRequests(in)) {
    const auto& e = *op.invoke;
    auto a = op.answer();
    if (!a) {
      ++undecided;
      continue;
    }
    ++judged;
    std::string problem;
    if (!a->is_2xx()) {
      problem = e.action + " without a key (optional by the target's contract) was not executed: " + AnswerSummary(*a);
    } else if (contract.replay && IsReplayMarked(*a, contract)) {
      problem = e.action + " without a key was answered as a replay (" + contract.replay->Describe() +
                "): keyless requests must not be deduplicated";
    }
    if (!problem.empty()) violations.Add(MakeFinding(problem).With(FindingRole::kRequest, OpJson(op)));
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = judged;
  details.counts.undecided = undecided;
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " request(s) without a key executed, none marked a replay",
                  "no request without a key got an answer", "the scenario sent no request without a key");
}

}  // namespace idemproof::oracles
