// caller_scope: one key in the hands of two callers (the target's
// `callers:`, a step's `caller:`) is two keys. For every (action, key) that
// two callers used, the first request of each caller after the key's first
// user is
//  - never answered with another caller's result: replay-marked, or (for a
//    target without a marker) equal to an answer another caller got before —
//    a data leak;
//  - never handed another caller's credential-like answer headers
//    (Set-Cookie, Authorization, anything naming a token or session);
//  - never refused as in progress or mismatched because of the other
//    caller's use — a denial of service. Only a use that may have taken the
//    key is one: another caller's request sent before the refusal and not
//    itself refused. A refusal that also met the key's first users (the
//    target merges the key with another one, e.g. a truncated twin) is not
//    the other caller's doing: not judged here, and the details say so.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// Headers whose value belongs to one caller.
bool CredentialLike(const std::string& name) {
  const std::string n = Lower(name);
  return n == "set-cookie" || n == "authorization" || n == "proxy-authorization" ||
         n.find("token") != std::string::npos || n.find("session") != std::string::npos;
}

std::string CallerName(const std::string& caller) { return caller.empty() ? "(no caller)" : caller; }

}  // namespace

Verdict CallerScope(const OracleInput& in) {
  const std::string name = "caller_scope";
  const auto& contract = in.target.idempotency;
  if (in.target.callers.size() < 2)
    return Verdict::NotApplicable(name, "the target declares fewer than two callers (callers:)");
  const auto filter = ActionsParam(in.params);
  std::map<std::pair<std::string, std::string>, std::vector<Operation>> by_key;  // (action, key) -> ops
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (e.key.empty()) continue;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    by_key[{e.action, e.key}].push_back(op);
  }
  Violations violations;
  std::vector<std::string> not_theirs;  // refusals the other caller's use does not explain
  AnswerTally set_aside;                // first requests of a second caller not judged, by why
  int shared = 0, judged = 0, undecided = 0;
  for (auto& [id, ops] : by_key) {
    const auto& [action, key] = id;
    std::stable_sort(ops.begin(), ops.end(),
                     [](const Operation& a, const Operation& b) { return a.invoke_ns() < b.invoke_ns(); });
    std::set<std::string> callers;
    for (const auto& op : ops) callers.insert(CallerOf(*op.invoke));
    if (callers.size() < 2) continue;
    ++shared;
    const std::string owner = CallerOf(*ops.front().invoke);
    const auto vol = in.target.VolatilePathsFor(action);
    std::set<std::string> seen{owner};
    for (const auto& op : ops) {
      const std::string caller = CallerOf(*op.invoke);
      if (seen.count(caller)) continue;  // judged at its first request only
      seen.insert(caller);
      const AnswerClass c = Classify(op, contract);
      if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
        ++undecided;
        set_aside.AddAs(c == AnswerClass::kNoAnswer ? "no answer" : std::to_string(op.answer()->status) + " retryable");
        continue;
      }
      ++judged;
      const HttpAnswer a = *op.answer();
      // What another caller was answered before this request went out.
      const Operation* copied = nullptr;
      std::vector<std::string> leaked;
      for (const auto& o : ops) {
        if (CallerOf(*o.invoke) == caller || o.completion == nullptr || o.complete_ns() > op.invoke_ns()) continue;
        auto oa = o.answer();
        if (!oa) continue;
        if (copied == nullptr && IsTerminal(Classify(o, contract)) && AnswerDifferences(*oa, a, vol, {}).empty())
          copied = &o;
        for (const auto& [h, v] : a.headers) {
          if (!CredentialLike(h)) continue;
          auto theirs = oa->Header(h);
          if (theirs && *theirs == v && std::find(leaked.begin(), leaked.end(), h) == leaked.end()) leaked.push_back(h);
        }
      }
      const std::string head = "key " + key + " (" + action + ") of caller " + CallerName(owner) + ", reused by caller " +
                               CallerName(caller) + ": " + OpName(op) + " ";
      Finding v = MakeFinding("", {{"key", key}, {"action", action}, {"owner", owner}, {"caller", caller}})
                      .With(FindingRole::kRequest, OpJson(op));
      if (IsTerminal(c) && contract.replay && IsReplayMarked(a, contract)) {
        v.problem = head + "was answered as a replay " + AnswerSummary(a) +
                       ": another caller's result (a data leak)";
      } else if (IsTerminal(c) && !contract.replay && copied != nullptr) {
        v.problem = head + "got the answer of " + CallerName(CallerOf(*copied->invoke)) + "'s " + OpName(*copied) +
                       " " + AnswerSummary(a) + ": another caller's result (a data leak)";
        v.With(FindingRole::kReplayOf, OpJson(*copied));
      } else if (c == AnswerClass::kInProgress || c == AnswerClass::kMismatch) {
        // Whose use refused it: another caller's request sent before the
        // answer that may have taken the key (not refused itself).
        const Operation* holder = nullptr;
        for (const auto& o : ops) {
          if (CallerOf(*o.invoke) == caller || o.invoke_ns() >= op.complete_ns()) continue;
          if (o.completion != nullptr && o.completion->type == EventType::kFail) continue;
          const AnswerClass oc = Classify(o, contract);
          if (oc == AnswerClass::kInProgress || oc == AnswerClass::kMismatch || oc == AnswerClass::kMissingKey) continue;
          holder = &o;
          break;
        }
        if (holder == nullptr) {
          --judged;
          ++undecided;
          set_aside.AddAs(std::to_string(a.status) + " refused before any request could hold the key");
          not_theirs.push_back(head + "was refused " + AnswerSummary(a) + ", as every request of the key before it " +
                               "was (" + OpName(ops.front()) + " of caller " + CallerName(owner) +
                               " included): not the other caller's doing — the key was refused before anyone " +
                               "could hold it (merged with another key? a truncated twin)");
          continue;
        }
        v.problem = head + "was refused " + AnswerSummary(a) + " because caller " + CallerName(owner) +
                       " used the key (" + OpName(*holder) + "): one caller's key blocks another's";
      } else if (!leaked.empty()) {
        std::string names;
        for (const auto& h : leaked) names += (names.empty() ? "" : ", ") + h;
        v.problem = head + "was answered with another caller's " + names;
      } else {
        continue;
      }
      violations.Add(v);
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.shared_keys = shared;
  details.counts.judged = judged;
  details.counts.undecided = undecided;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  // What was not judged, said with any verdict but a violation: the count by
  // why, then the first refusal not blamed on the other caller in words.
  std::string aside = SetAsideClause(set_aside);
  if (!not_theirs.empty()) {
    details.lists.not_the_other_caller = not_theirs;
    aside += "; " + not_theirs.front() + (not_theirs.size() > 1 ? " (and " + std::to_string(not_theirs.size() - 1) +
                                                                     " more)" : "");
  }
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(shared);
  if (shared == 0) return Verdict::Unknown(name, "no key was sent by two callers", details).Counted(0);
  if (judged == 0)
    return Verdict::Unknown(name, "no reuse of a key by another caller got a decisive answer" + aside, details)
        .Counted(shared);
  return Verdict::Valid(name, std::to_string(shared) + " key(s) sent by two callers; each caller got its own " +
                                  "execution, nothing of the other's" + aside,
                        details)
      .Counted(shared);
}

}  // namespace idemproof::oracles
