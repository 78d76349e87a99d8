// key_released: once no request of a key is running, the key is not in
// progress any more. A request of a key sent after every earlier request of
// it has been answered (its owner finished, in a live process) must get the
// stored answer or execute, never the in-progress status: a key still
// "in progress" with nobody working on it is blocked (an owner whose work
// outlived its lease and never completed, a completion stored late or
// lost). Requests after a kill, stop, restart, pause or target exit are not
// judged: a dead owner's claim is lease_recovery's to judge.
#include "model/event_names.h"
#include "model/request_groups.h"
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict KeyReleased(const OracleInput& in) {
  const std::string name = "key_released";
  const auto& contract = in.target.idempotency;
  // When an owner may first have died or stopped (ns); requests after it are not judged.
  std::optional<std::int64_t> nemesis;
  for (const auto& e : in.history.events()) {
    const bool ends = e.f == event_f::kKill || e.f == event_f::kStop || e.f == event_f::kRestart ||
                      e.f == event_f::kPause || e.f == event_f::kTargetExited;
    if (ends && (!nemesis || e.time_ns < *nemesis)) nemesis = e.time_ns;
  }
  Violations violations;
  int judged = 0;
  for (const auto& group : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    for (std::size_t i = 1; i < group.ops.size(); ++i) {
      const Operation& op = group.ops[i];
      if (nemesis && op.invoke_ns() >= *nemesis) break;
      const auto answer = op.answer();
      if (!answer) continue;
      // Every earlier request of the key answered before this one went.
      bool all_done = true;
      const Operation* last = nullptr;
      for (std::size_t j = 0; j < i && all_done; ++j) {
        const Operation& before = group.ops[j];
        all_done = before.answer().has_value() && before.complete_ns() < op.invoke_ns();
        if (all_done && (last == nullptr || before.complete_ns() > last->complete_ns())) last = &before;
      }
      if (!all_done) continue;
      ++judged;
      if (Classify(op, contract) != AnswerClass::kInProgress) continue;
      Finding f = MakeFinding(OpName(op) + " (" + group.action + ") was answered " + std::to_string(answer->status) +
                                  " in progress though no request of its key was running (" + OpName(*last) +
                                  ", the last, had been answered " + std::to_string(last->answer()->status) +
                                  "): the key stays blocked after its owner finished",
                              {{"key", group.key}, {"action", group.action}});
      f.With(FindingRole::kFirst, OpJson(group.ops.front()));
      f.With(FindingRole::kRetry, OpJson(op));
      violations.Add(f);
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = judged;
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(judged);
  if (judged == 0)
    return Verdict::Unknown(name, "no request of a key was sent after every earlier one had been answered", details)
        .Counted(0);
  return Verdict::Valid(name,
                        std::to_string(judged) + " request(s) sent after their key's earlier ones were answered, "
                                                 "none answered in progress",
                        details)
      .Counted(judged);
}

}  // namespace idemproof::oracles
