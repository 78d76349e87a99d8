// action_scope: one key used on two different actions executes both: the
// dedup record is scoped by action, not by the key alone.
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

  nlohmann::json violations = nlohmann::json::array();
  std::string first_violation;
  int shared = 0, judged = 0, undecided = 0;
  for (const auto& [key, actions] : by_key) {
    if (actions.size() < 2) continue;
    ++shared;
    for (const auto& [action, ops] : actions) {
      bool executed = false, decisive = false;
      const Operation* refusal = nullptr;
      for (const auto& op : ops) {
        AnswerClass c = Classify(op, contract);
        if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) continue;
        decisive = true;
        auto a = op.answer();
        bool marked = IsReplayMarked(*a, contract);
        if ((c == AnswerClass::kSuccess || c == AnswerClass::kOtherFinal) && !marked) executed = true;
        else if (refusal == nullptr) refusal = &op;
      }
      if (!decisive) {
        ++undecided;
        continue;
      }
      ++judged;
      if (executed) continue;
      std::string ev = "key " + key + " on action " + action + " did not execute: " + OpName(*refusal) + " got " +
                       AnswerSummary(*refusal->answer()) +
                       (IsReplayMarked(*refusal->answer(), contract) ? " (a replay of another action)" : "");
      violations.push_back({{"key", key}, {"action", action}, {"problem", ev}, {"request", OpJson(*refusal)}});
      if (first_violation.empty()) first_violation = ev;
    }
  }
  nlohmann::json details = {{"violations", violations}, {"shared_keys", shared}, {"judged", judged},
                            {"undecided", undecided}};
  if (!violations.empty()) return Verdict::Invalid(name, first_violation, details);
  if (shared == 0) return Verdict::Unknown(name, "no key was sent on two different actions", details);
  if (judged == 0) return Verdict::Unknown(name, "no request with a shared key got a decisive answer", details);
  return Verdict::Valid(name, std::to_string(shared) + " key(s) shared by two actions; each action executed", details);
}

}  // namespace idemproof::oracles
