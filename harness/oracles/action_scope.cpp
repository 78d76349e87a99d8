// action_scope: one key used on two different actions executes both: the
// dedup record is scoped by action, not by the key alone. A replay of the
// other action is told by the replay marker, or, on a target that marks no
// replays, by being equal to the other action's earlier terminal answer (two
// different business actions do not render the same status and body).
// A key reused on another action may be refused with the target's mismatch
// status (the IETF draft's and Stripe's fingerprint cover the route): that
// is no violation. The violation is a replay of another action's answer, or
// the action not executed with no mismatch refusal to say why. Answers that
// decide nothing (no answer, a retryable failure) are set aside and counted.
#include <map>
#include <set>

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict ActionScope(const OracleInput& in) {
  const std::string name = "action_scope";
  const auto& contract = in.target.idempotency;
  std::map<std::string, std::map<std::string, std::vector<Operation>>> by_key;  // key -> action -> ops
  for (const auto& op : RequestOperations(in.history))
    if (!op.invoke->key.empty()) by_key[op.invoke->key][op.invoke->action].push_back(op);

  Violations violations;
  AnswerTally set_aside;  // no answer, a retryable failure: decided nothing
  int shared = 0, judged = 0, undecided = 0, refused_as_mismatch = 0;
  for (const auto& [key, ops_by_action] : by_key) {
    const auto& actions = ops_by_action;  // a lambda below captures it (clang 14: not a binding)
    if (actions.size() < 2) continue;
    ++shared;
    // The other action's terminal answer this op's answer repeats, if any
    // (only asked when the target marks no replays).
    auto copied_from = [&](const std::string& action, const Operation& op) -> const Operation* {
      for (const auto& [other, other_ops] : actions) {
        if (other == action) continue;
        for (const auto& o : other_ops) {
          if (!IsTerminal(Classify(o, contract)) || o.complete_ns() > op.invoke_ns()) continue;
          if (AnswerDifferences(*o.answer(), *op.answer(), in.target.VolatilePathsFor(other), {}).empty()) return &o;
        }
      }
      return nullptr;
    };
    for (const auto& [action, ops] : actions) {
      bool executed = false, decisive = false, lost = false, refused_after_loss = false;
      const Operation* refusal = nullptr;
      const Operation* copied = nullptr;  // the other action's answer the refusal repeats
      for (const auto& op : ops) {
        AnswerClass c = Classify(op, contract);
        lost = lost || (c == AnswerClass::kNoAnswer && !op.never_sent());
        if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
          set_aside.AddAs(c == AnswerClass::kNoAnswer ? std::string("no answer")
                                                      : std::to_string(op.answer()->status) + " retryable");
          continue;
        }
        decisive = true;
        auto a = op.answer();
        bool marked = IsReplayMarked(*a, contract);
        const Operation* copy = (!contract.replay && IsTerminal(c)) ? copied_from(action, op) : nullptr;
        if (IsTerminal(c) && !marked && copy == nullptr) {
          executed = true;
        } else if (refusal == nullptr) {
          refusal = &op;
          copied = copy;
          refused_after_loss = lost;
        }
      }
      // Its own request whose answer was lost before the refusal may have
      // executed: the refusal then replays that one, not another action's
      // (the history cannot tell). A loss after the refusal excuses nothing.
      if (!decisive || (refused_after_loss && !executed)) {
        ++undecided;
        continue;
      }
      ++judged;
      if (executed) continue;
      // The key taken as used by another request (its route): the mismatch refusal, allowed.
      if (copied == nullptr && !IsReplayMarked(*refusal->answer(), contract) &&
          Classify(*refusal, contract) == AnswerClass::kMismatch) {
        ++refused_as_mismatch;
        continue;
      }
      std::string ev = "key " + key + " on action " + action + " did not execute: " + OpName(*refusal) + " got " +
                       AnswerSummary(*refusal->answer()) +
                       (IsReplayMarked(*refusal->answer(), contract) ? " (a replay of another action)" : "") +
                       (copied ? " (equal to the answer of " + copied->invoke->action + " " + OpName(*copied) +
                                     ": a replay of another action)"
                               : "");
      Finding v = MakeFinding(ev, {{"key", key}, {"action", action}}).With(FindingRole::kRequest, OpJson(*refusal));
      if (copied) v.With(FindingRole::kReplayOf, OpJson(*copied));
      violations.Add(v);
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.shared_keys = shared;
  details.counts.judged = judged;
  details.counts.undecided = undecided;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string aside = SetAsideClause(set_aside);
  if (!violations.empty()) return Verdict::Invalid(name, violations.first() + aside, details).Counted(shared);
  if (shared == 0) return Verdict::Unknown(name, "no key was sent on two different actions", details).Counted(0);
  if (judged == 0)
    return Verdict::Unknown(name, "no request with a shared key got a decisive answer" + aside, details)
        .Counted(shared);
  const std::string refused =
      refused_as_mismatch == 0
          ? std::string("each action executed")
          : std::to_string(refused_as_mismatch) + " action(s) refused the reused key with the mismatch status " +
                std::to_string(contract.mismatch) + " (allowed: the fingerprint covers the route), the rest executed";
  return Verdict::Valid(name, std::to_string(shared) + " key(s) shared by two actions; " + refused + aside, details)
      .Counted(shared);
}

}  // namespace idemproof::oracles
