// no_false_dedup: every replay-marked 2xx (or retryable) answer has at least
// one record behind it: a "duplicate" verdict never replaced an execution.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict NoFalseDedup(const OracleInput& in) {
  const std::string name = "no_false_dedup";
  const auto& contract = in.target.idempotency;
  if (!contract.replay) return Verdict::NotApplicable(name, "target declares no replay marker");
  auto filter = ActionsParam(in.params);
  Violations violations;
  int marked = 0, judged = 0, unprobed = 0, undecided = 0;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    auto a = op.answer();
    if (!a || !IsReplayMarked(*a, contract)) continue;
    AnswerClass c = Classify(op, contract);
    if (c != AnswerClass::kSuccess && c != AnswerClass::kRetryable) continue;  // a replayed 4xx has no record
    ++marked;
    const auto* action = in.target.FindAction(e.action);
    if (action == nullptr || !action->records) {
      ++unprobed;
      continue;
    }
    auto count = RecordCount(in.history, e.action, e.biz);
    if (!count) {
      ++undecided;
      continue;
    }
    ++judged;
    if (*count > 0) continue;
    std::string ev = OpName(op) + " (" + e.action + ", key " + e.key + ") answered " + AnswerSummary(*a) +
                     " marked as a replay, but biz " + e.biz + " has no record";
    Finding v = MakeFinding(ev).With(FindingRole::kRequest, OpJson(op));
    v.records = 0;
    violations.Add(v);
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.replay_marked = marked;
  details.counts.judged = judged;
  details.counts.unprobed = unprobed;
  details.counts.undecided = undecided;
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(marked);
  if (judged > 0)
    return Verdict::Valid(name, std::to_string(judged) + " replay-marked answer(s), each with a record behind it",
                          details)
        .Counted(judged);
  if (marked == 0) return Verdict::Unknown(name, "no replay-marked answer to check", details).Counted(0);
  if (unprobed == marked)
    return Verdict::NotApplicable(name, "target declares no records probe for the replayed actions", details);
  return Verdict::Unknown(name, "the records probe gave no count for the replayed business ids", details);
}

}  // namespace idemproof::oracles
