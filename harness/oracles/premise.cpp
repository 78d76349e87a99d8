// NothingExecuted: the shared premise check of the counting oracles; what
// the evidence of a judged request quotes (AnswerTally, AuthRefused).
#include <map>

#include "model/history_events.h"

#include "oracles/oracle_support.h"

namespace idemproof::oracles {

std::string NothingExecuted(const std::vector<Operation>& ops, const IdempotencyContract& contract,
                            bool swallowed_2xx) {
  if (swallowed_2xx) return "";
  bool all_asked_refusals = !ops.empty();
  AnswerTally answers;
  for (const auto& op : ops) {
    AnswerClass c = Classify(op, contract);
    if (c == AnswerClass::kSuccess) return "";
    if (c != AnswerClass::kMismatch && c != AnswerClass::kMissingKey) all_asked_refusals = false;
    answers.Add(op);
  }
  if (all_asked_refusals) return "";
  return "nothing executed: " + std::to_string(ops.size()) + " request(s), none answered 2xx (" +
         (answers.total() == 0 ? "none sent" : answers.Text()) + ")";
}

void AnswerTally::Add(const Operation& op) {
  auto a = op.answer();
  ++counts_[a ? std::to_string(a->status) : "no answer"];
  ++total_;
}

std::string AnswerTally::Text() const {
  std::string out;
  for (const auto& [what, n] : counts_) out += (out.empty() ? "" : ", ") + what + " x" + std::to_string(n);
  return out;
}

nlohmann::json AnswerTally::json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [what, n] : counts_) out[what] = n;
  return out;
}

bool AuthRefused(const Operation& op, const IdempotencyContract& contract) {
  auto a = op.answer();
  if (!a || (a->status != 401 && a->status != 403 && a->status != 407)) return false;
  // A status the contract declares (mismatch: 403, say) is the target's answer about the key.
  return Classify(op, contract) == AnswerClass::kOtherFinal;
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
      return "the answer body of " + OpName(op) + " was truncated at " + a->CutBy() + " (" + a->TruncationNote() +
             "): bodies cannot be compared";
  }
  return std::nullopt;
}

}  // namespace idemproof::oracles
