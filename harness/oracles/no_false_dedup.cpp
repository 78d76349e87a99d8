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
  AnswerTally set_aside;  // replay-marked answers not judged, by why
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    auto a = op.answer();
    if (!a || !IsReplayMarked(*a, contract)) continue;
    AnswerClass c = Classify(op, contract);
    if (c != AnswerClass::kSuccess && c != AnswerClass::kRetryable) {  // a replayed refusal has no record
      set_aside.AddAs(std::to_string(a->status) + " replayed refusal");
      continue;
    }
    ++marked;
    const auto* action = in.target.FindAction(e.action);
    if (action == nullptr || !action->records) {
      ++unprobed;
      set_aside.AddAs(std::to_string(a->status) + " of an action with no records probe");
      continue;
    }
    auto count = RecordCount(in.history, e.action, e.biz);
    if (!count) {
      ++undecided;
      set_aside.AddAs(std::to_string(a->status) + " whose business id the probe did not count");
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
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string aside = SetAsideClause(set_aside);
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(marked);
  if (judged > 0)
    return Verdict::Valid(name, std::to_string(judged) + " replay-marked answer(s), each with a record behind it" + aside,
                          details)
        .Counted(judged);
  if (marked == 0) return Verdict::Unknown(name, "no replay-marked answer to check" + aside, details).Counted(0);
  if (unprobed == marked)
    return Verdict::NotApplicable(name, "target declares no records probe for the replayed actions", details);
  return Verdict::Unknown(name, "the records probe gave no count for the replayed business ids" + aside, details);
}

}  // namespace idemproof::oracles
