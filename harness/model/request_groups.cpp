#include "model/request_groups.h"

#include "model/payload.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace idemproof {

const char* AnswerClassName(AnswerClass c) {
  switch (c) {
    case AnswerClass::kNoAnswer: return "no answer";
    case AnswerClass::kSuccess: return "success";
    case AnswerClass::kInProgress: return "in progress";
    case AnswerClass::kMismatch: return "mismatch";
    case AnswerClass::kMissingKey: return "missing key";
    case AnswerClass::kRetryable: return "retryable";
    case AnswerClass::kOtherFinal: return "final";
  }
  return "?";
}

AnswerClass Classify(const Operation& op, const IdempotencyContract& contract) {
  auto a = op.answer();
  if (!a) return AnswerClass::kNoAnswer;
  if (a->is_2xx()) return AnswerClass::kSuccess;
  if (contract.IsInProgress(a->status)) return AnswerClass::kInProgress;
  if (contract.IsMismatch(a->status)) return AnswerClass::kMismatch;
  if (!contract.key_optional && a->status == contract.missing_key) return AnswerClass::kMissingKey;
  if (contract.IsRetryable(a->status)) return AnswerClass::kRetryable;
  return AnswerClass::kOtherFinal;
}

bool IsTerminal(AnswerClass c) { return c == AnswerClass::kSuccess || c == AnswerClass::kOtherFinal; }

const Operation* FirstTerminal(const RequestGroup& group, const IdempotencyContract& contract) {
  // With a marker, the unmarked answer is the execution, even when a replay
  // (e.g. an empty success) completed before it.
  const Operation* first = nullptr;
  const Operation* first_marked = nullptr;
  for (const auto& op : group.ops) {
    if (!IsTerminal(Classify(op, contract))) continue;
    const Operation*& slot = IsReplayMarked(*op.answer(), contract) ? first_marked : first;
    if (slot == nullptr || op.complete_ns() < slot->complete_ns()) slot = &op;
  }
  return first != nullptr ? first : first_marked;
}

const Operation* EarliestTerminal(const RequestGroup& group, const IdempotencyContract& contract) {
  const Operation* first = nullptr;
  for (const auto& op : group.ops) {
    if (IsTerminal(Classify(op, contract)) && (first == nullptr || op.complete_ns() < first->complete_ns()))
      first = &op;
  }
  return first;
}

std::vector<const Operation*> RetriesAfter(const RequestGroup& group, const Operation& first,
                                           std::optional<Duration> window) {
  std::vector<const Operation*> out;
  for (const auto& op : group.ops) {
    if (op.invoke == first.invoke || op.invoke_ns() < first.complete_ns()) continue;
    if (window && op.invoke_ns() - first.complete_ns() > window->count()) continue;
    out.push_back(&op);
  }
  return out;
}

std::string CallerOf(const HistoryEvent& invoke) {
  if (!invoke.value.is_object()) return "";
  auto it = invoke.value.find("caller");
  return it != invoke.value.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<RequestGroup> GroupRequestsByKey(const History& history, const std::vector<std::string>& actions) {
  std::vector<RequestGroup> groups;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::size_t> where;
  for (const auto& op : RequestOperations(history)) {
    const HistoryEvent& e = *op.invoke;
    if (e.key.empty()) continue;
    if (!actions.empty() && std::find(actions.begin(), actions.end(), e.action) == actions.end()) continue;
    // An equal form of the default request is that request; a changed form another.
    std::string payload = PayloadClass(e.payload);
    const std::string caller = CallerOf(e);
    auto id = std::make_tuple(e.action, e.key, payload, caller);
    auto it = where.find(id);
    if (it == where.end()) {
      it = where.emplace(id, groups.size()).first;
      groups.push_back(RequestGroup{e.action, e.key, payload, e.biz, {}, caller});
    }
    groups[it->second].ops.push_back(op);
  }
  return groups;
}

}  // namespace idemproof
