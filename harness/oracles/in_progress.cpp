// in_progress: a duplicate that arrives while another request with the same
// key is running gets the declared in-progress status or an answer identical
// to the first; never a second execution, never an "empty success" (a 2xx
// whose body differs from the first). A key none of whose requests executed
// (NothingExecuted) is not judged.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict InProgress(const OracleInput& in) {
  const std::string name = "in_progress";
  const auto& contract = in.target.idempotency;
  Violations violations;
  int overlaps = 0, undecided = 0;
  std::string nothing_executed;
  for (const auto& g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    if (g.payload != "default" || g.ops.size() < 2) continue;
    // Duplicates of a key that never executed show nothing about in-progress handling.
    if (auto why = NothingExecuted(g.ops, contract, false); !why.empty()) {
      if (nothing_executed.empty()) nothing_executed = "key " + g.key + " (" + g.action + "): " + why;
      ++undecided;
      continue;
    }
    // Never a second execution.
    if (contract.replay) {
      nlohmann::json executed = nlohmann::json::array();
      for (const auto& op : g.ops)
        if (Classify(op, contract) == AnswerClass::kSuccess && !IsReplayMarked(*op.answer(), contract))
          executed.push_back(OpJson(op));
      if (executed.size() > 1)
        violations.Add({{"key", g.key},
                        {"problem", "key " + g.key + " (" + g.action + ") executed " + std::to_string(executed.size()) +
                                 " times: " + std::to_string(executed.size()) + " 2xx answers without the replay marker"},
                 {"executions", executed}});
    }
    if (const auto* a = in.target.FindAction(g.action); a != nullptr && a->records) {
      auto count = RecordCount(in.history, g.action, g.biz);
      if (count && *count > 1)
        violations.Add({{"key", g.key},
                        {"problem", "key " + g.key + " (" + g.action + "): " + std::to_string(*count) +
                                 " records for biz " + g.biz + " after duplicates"},
                 {"records", *count}});
    }
    // Each duplicate that overlapped another request of the key.
    const Operation* first = FirstTerminal(g, contract);
    auto vol = in.target.VolatilePathsFor(g.action);
    for (const auto& d : g.ops) {
      bool overlapped = false;
      for (const auto& o : g.ops) {
        if (o.invoke == d.invoke) continue;
        bool o_running = o.invoke_ns() <= d.invoke_ns() && (o.completion == nullptr || o.complete_ns() > d.invoke_ns());
        if (o_running && o.invoke->index < d.invoke->index) overlapped = true;
      }
      if (!overlapped) continue;
      AnswerClass c = Classify(d, contract);
      if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
        ++undecided;
        continue;
      }
      ++overlaps;
      if (c == AnswerClass::kInProgress) continue;
      if (first != nullptr && d.invoke == first->invoke) continue;  // the one that ran
      HttpAnswer a = *d.answer();
      std::vector<std::string> diffs;
      if (first != nullptr) diffs = AnswerDifferences(*first->answer(), a, vol, {});
      if (first != nullptr && diffs.empty()) continue;  // waited and got the same answer
      std::string what = (c == AnswerClass::kSuccess) ? "an empty success " : "";
      violations.Add({{"key", g.key},
                      {"problem", "key " + g.key + " (" + g.action + "): duplicate " + OpName(d) + " got " + what +
                               AnswerSummary(a) + " while another request was running (expected " +
                               contract.InProgressText() + " or the first answer" +
                               (first ? " " + AnswerSummary(*first->answer()) : std::string()) + ")"},
               {"duplicate", OpJson(d)},
               {"first", first ? OpJson(*first) : nlohmann::json(nullptr)}});
    }
  }
  nlohmann::json details = {{"violations", violations.json()}, {"overlapping_duplicates", overlaps}, {"undecided", undecided}};
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details);
  if (overlaps == 0)
    return Verdict::Unknown(name,
                            nothing_executed.empty() ? "no duplicate overlapped a running request with the same key"
                                                     : nothing_executed,
                            details);
  return Verdict::Valid(name, std::to_string(overlaps) + " overlapping duplicate(s) got " +
                                  contract.InProgressText() + " or the first answer; one execution",
                        details);
}

}  // namespace idemproof::oracles
