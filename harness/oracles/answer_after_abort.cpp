// answer_after_abort (issue 46, "a client abort"): after a client gave up on
// a request (it was sent, and no answer came: a timeout, a connection cut),
// every later 2xx answer for that key is the real answer, not what a
// middleware captured from a response stream the client had left: an empty
// body, or a body cut short. The real answer's shape is learnt from the
// action's answers the clients received whole in the same run (keys nobody
// gave up on): a body, JSON or not.
#include "oracles/answer_after_abort.h"
#include "oracles/oracle_support.h"

namespace idemproof::oracles {
namespace {

bool Abandoned(const Operation& op) { return !op.completed_ok() && !op.never_sent() && op.completion != nullptr; }

bool ParsesAsJson(const std::string& body) { return nlohmann::json::accept(body); }

// The shape of the answers a client received whole for one action.
struct WholeAnswers {
  const Operation* example = nullptr;  // the first 2xx with a body
  bool json = false;                   // that body is JSON
};

}  // namespace

Verdict AnswerAfterAbort(const OracleInput& in) {
  const std::string name = "answer_after_abort";
  const auto filter = ActionsParam(in.params);
  const auto ops = RequestOperations(in.history);
  auto wanted = [&](const Operation& op) {
    return op.invoke->key != "" &&
           (filter.empty() || std::find(filter.begin(), filter.end(), op.invoke->action) != filter.end());
  };
  // The keys a client gave up on: (action, key) -> the first abandoned request.
  std::map<std::pair<std::string, std::string>, const Operation*> abandoned;
  for (const auto& op : ops)
    if (wanted(op) && Abandoned(op)) abandoned.emplace(std::make_pair(op.invoke->action, op.invoke->key), &op);
  std::map<std::string, WholeAnswers> whole;
  for (const auto& op : ops) {
    if (!wanted(op) || abandoned.count({op.invoke->action, op.invoke->key})) continue;
    auto a = op.answer();
    if (!a || !a->is_2xx() || a->truncated || a->body.empty()) continue;
    WholeAnswers& w = whole[op.invoke->action];
    if (w.example == nullptr) w = {&op, ParsesAsJson(a->body)};
  }
  Violations violations;
  int judged = 0, undecided = 0;
  nlohmann::json judged_list = nlohmann::json::array();
  for (const auto& [subject, gave_up] : abandoned) {
    const auto& [action, key] = subject;
    for (const auto& op : ops) {
      if (op.invoke->action != action || op.invoke->key != key || op.invoke_ns() <= gave_up->invoke_ns()) continue;
      auto a = op.answer();
      if (!a || !a->is_2xx()) continue;  // in progress, refused: other oracles' to judge
      auto w = whole.find(action);
      if (a->truncated || w == whole.end()) {
        ++undecided;
        continue;
      }
      ++judged;
      const auto example = w->second.example->answer();
      const std::string against = OpName(*w->second.example) + " (key " + w->second.example->invoke->key +
                                  ") was answered " + std::to_string(example->status) + " with " +
                                  std::to_string(example->body.size()) + " bytes" +
                                  (w->second.json ? " of JSON" : "");
      std::string wrong;
      if (a->body.empty()) {
        wrong = "an empty body";
      } else if (w->second.json && !ParsesAsJson(a->body)) {
        wrong = "a body that is not whole JSON (" + std::to_string(a->body.size()) + " bytes: cut short?)";
      }
      judged_list.push_back({{"request", OpJson(op)}, {"gave_up", OpJson(*gave_up)}, {"wrong", wrong}});
      if (wrong.empty()) continue;
      const std::string ev = OpName(op) + " (" + action + ", key " + key + ") was answered " +
                             std::to_string(a->status) + " with " + wrong +
                             (IsReplayMarked(*a, in.target.idempotency) ? " marked as a replay" : "") +
                             " after the client gave up on " + OpName(*gave_up) +
                             ": the answer stored is not the real one (" + against + ")";
      violations.Add(MakeFinding(ev).With(FindingRole::kRequest, OpJson(op)));
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.keys_given_up = static_cast<std::int64_t>(abandoned.size());
  details.records.judged_rows = judged_list;
  details.counts.undecided = undecided;
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " answer(s) after a client gave up, each the real answer (a body like the "
                                           "action's whole answers)",
                  "no answer after the abort could be compared: no answer of the action was received whole, or "
                  "the body was truncated",
                  abandoned.empty() ? "no client gave up on a keyed request"
                                    : "no retry after the abort was answered 2xx");
}

}  // namespace idemproof::oracles
