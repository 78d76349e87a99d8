// in_progress: a duplicate that arrives while another request with the same
// key is running gets the declared in-progress status or an answer identical
// to the first; never a second execution, never an "empty success" (a 2xx
// whose body differs from the first). A key none of whose requests executed
// (NothingExecuted) is not judged. Past the declared window the key may
// execute once more per window (WindowSegments): each window is judged alone.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

Verdict InProgress(const OracleInput& in) {
  const std::string name = "in_progress";
  const auto& contract = in.target.idempotency;
  Violations violations;
  int overlaps = 0, undecided = 0, in_progress_answers = 0;
  AnswerTally answered;  // the judged duplicates' answers, for the evidence
  std::string nothing_executed;
  for (const auto& g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    if (g.payload != "default" || g.ops.size() < 2) continue;
    // Duplicates of a key that never executed show nothing about in-progress handling.
    if (auto why = NothingExecuted(g.ops, contract, false); !why.empty()) {
      if (nothing_executed.empty()) nothing_executed = "key " + g.key + " (" + g.action + "): " + why;
      ++undecided;
      continue;
    }
    // Past the declared window a key may rightly execute again: once per
    // window (WindowSegments; a burst after the window is one window).
    const auto segments = WindowSegments(g.ops, contract);
    const std::string in_window = segments.size() > 1 ? " inside one retry window" : "";
    // Never a second execution.
    if (contract.replay) {
      for (const auto& seg : segments) {
        Finding v = MakeFinding("", {{"key", g.key}});
        for (const auto& op : seg)
          if (Classify(op, contract) == AnswerClass::kSuccess && !IsReplayMarked(*op.answer(), contract))
            v.With(FindingRole::kExecutions, OpJson(op));
        const std::size_t executed = v.ops.size();
        if (executed > 1) {
          v.problem = "key " + g.key + " (" + g.action + ") executed " + std::to_string(executed) + " times" +
                      in_window + ": " + std::to_string(executed) + " 2xx answers without the replay marker";
          violations.Add(v);
        }
      }
    }
    if (const auto* a = in.target.FindAction(g.action); a != nullptr && a->records) {
      auto count = RecordCount(in.history, g.action, g.biz);
      // Records count by biz: another payload's execution after the window counts too.
      const auto allowed = static_cast<std::int64_t>(
          std::max<int>(static_cast<int>(segments.size()), BizWindowExecutions(in.history, g.action, g.biz, contract)));
      if (count && *count > allowed)
      {
        Finding v = MakeFinding("key " + g.key + " (" + g.action + "): " + std::to_string(*count) +
                                    " records for biz " + g.biz + " after duplicates" +
                                    (allowed > 1 ? " (at most " + std::to_string(allowed) + ": one per retry window)"
                                                 : std::string()),
                                {{"key", g.key}});
        v.records = *count;
        violations.Add(v);
      }
    }
    // Each duplicate that overlapped another request of the key, against
    // the first answer of its window (or, past the first window, the
    // previous window's: a record may live longer than promised).
    auto vol = in.target.VolatilePathsFor(g.action);
    std::optional<HttpAnswer> previous;  // the previous window's first answer
    for (const auto& seg : segments) {
      const RequestGroup window_group{g.action, g.key, g.payload, g.biz, seg, g.caller};
      const Operation* first = FirstTerminal(window_group, contract);
      for (const auto& d : seg) {
        bool overlapped = false;
        for (const auto& o : g.ops) {
          if (o.invoke == d.invoke) continue;
          bool o_running =
              o.invoke_ns() <= d.invoke_ns() && (o.completion == nullptr || o.complete_ns() > d.invoke_ns());
          if (o_running && o.invoke->index < d.invoke->index) overlapped = true;
        }
        if (!overlapped) continue;
        AnswerClass c = Classify(d, contract);
        if (c == AnswerClass::kNoAnswer || c == AnswerClass::kRetryable) {
          ++undecided;
          continue;
        }
        ++overlaps;
        answered.Add(d);
        if (c == AnswerClass::kInProgress) {
          ++in_progress_answers;
          continue;
        }
        if (first != nullptr && d.invoke == first->invoke) continue;  // the one that ran
        HttpAnswer a = *d.answer();
        std::vector<std::string> diffs;
        if (first != nullptr) diffs = AnswerDifferences(*first->answer(), a, vol, {});
        if (first != nullptr && diffs.empty()) continue;  // waited and got the same answer
        if (previous && AnswerDifferences(*previous, a, vol, {}).empty()) continue;
        std::string what = (c == AnswerClass::kSuccess) ? "an empty success " : "";
        // A 4xx refusal other than the declared in-progress status: no second
        // execution, only the status code is wrong.
        const bool refused = a.status >= 400 && a.status < 500 && !(contract.replay && IsReplayMarked(a, contract));
        Finding v = MakeFinding("key " + g.key + " (" + g.action + "): duplicate " + OpName(d) + " got " + what +
                                    AnswerSummary(a) + " while another request was running (expected " +
                                    contract.InProgressText() + " or the first answer" +
                                    (first ? " " + AnswerSummary(*first->answer()) : std::string()) + ")",
                                {{"key", g.key}})
                        .With(FindingRole::kDuplicate, OpJson(d));
        v.rule = refused ? "status" : "effect";
        if (first != nullptr) {
          v.With(FindingRole::kFirst, OpJson(*first));
        } else {
          v.subject["first"] = nullptr;  // no answer to hold it to
        }
        violations.Add(v);
      }
      if (first != nullptr) previous = *first->answer();
    }
  }
  nlohmann::json details = {{"violations", violations.json()},
                            {"overlapping_duplicates", overlaps},
                            {"in_progress_answers", in_progress_answers},
                            {"answered", answered.json()},
                            {"undecided", undecided}};
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(overlaps);
  if (overlaps == 0)
    return Verdict::Unknown(name,
                            nothing_executed.empty() ? "no duplicate overlapped a running request with the same key"
                                                     : nothing_executed,
                            details)
        .Counted(0);
  return Verdict::Valid(name, std::to_string(overlaps) + " overlapping duplicate(s), answered " + answered.Text() +
                                  ": " + contract.InProgressText() + " or the first answer (in-progress path hit " +
                                  std::to_string(in_progress_answers) + "x); one execution",
                        details)
      .Counted(overlaps);
}

}  // namespace idemproof::oracles
