// NothingExecuted: the shared premise check of the counting oracles.
#include <map>

#include "model/history_events.h"

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

std::string NothingExecuted(const std::vector<Operation>& ops, const IdempotencyContract& contract,
                            bool swallowed_2xx) {
  if (swallowed_2xx) return "";
  bool all_asked_refusals = !ops.empty();
  std::map<std::string, int> answers;  // "401" / "no answer" -> how many
  for (const auto& op : ops) {
    AnswerClass c = Classify(op, contract);
    if (c == AnswerClass::kSuccess) return "";
    if (c != AnswerClass::kMismatch && c != AnswerClass::kMissingKey) all_asked_refusals = false;
    auto a = op.answer();
    ++answers[a ? std::to_string(a->status) : "no answer"];
  }
  if (all_asked_refusals) return "";
  std::string seen;
  for (const auto& [what, n] : answers) seen += (seen.empty() ? "" : ", ") + what + " x" + std::to_string(n);
  return "nothing executed: " + std::to_string(ops.size()) + " request(s), none answered 2xx (" +
         (seen.empty() ? "none sent" : seen) + ")";
}

std::optional<std::string> PremiseBroken(const OracleSignature& signature, const History& history) {
  for (const auto& e : history.events()) {
    if (e.f != event_f::kTargetExited) continue;
    const std::string why = e.value.is_object() ? e.value.value("why", std::string("ended")) : "ended";
    const std::string instance = e.value.is_object() ? e.value.value("instance", std::string()) : "";
    return "the target process" + (instance.empty() ? "" : " (" + instance + ")") + " " + why +
           " during the scenario, not by a step (history event #" + std::to_string(e.index) +
           "): what it answered after proves nothing";
  }
  if (!signature.compares_bodies) return std::nullopt;
  for (const auto& op : RequestOperations(history)) {
    auto a = op.answer();
    if (a && a->truncated)
      return "the answer body of " + OpName(op) + " was truncated at max_body (" + a->TruncationNote() +
             "): bodies cannot be compared";
  }
  return std::nullopt;
}

}  // namespace idemproof::oracles
