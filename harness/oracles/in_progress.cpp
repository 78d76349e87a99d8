// in_progress: a duplicate that arrives while another request with the same
// key is running gets the declared in-progress status or an answer identical
// to the first; never a second execution, never a success other than the
// first (an empty or different 2xx). A 5xx is an answer too: unless the
// target declares it as its in-progress status, a duplicate answered 5xx
// while its key ran was told "failed", not "in progress" — a violation. Set
// aside, and said so: no answer, a declared non-5xx retryable status, a
// failure the scenario caused on purpose, a failure while the target's store
// was down, and a 5xx the running request got as well (the duplicate waited
// and shared its outcome: only a request that was itself no duplicate, a
// leader, counts so). A duplicate that overlapped a running request
// reached the premise whatever it was answered. A key none of whose requests
// executed (NothingExecuted) is not judged. Past the declared window the key
// may execute once more per window (WindowSegments): each window is judged
// alone.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

namespace {

// The requests of `ops` running when `d` was invoked (invoked before it, not
// answered by then).
std::vector<const Operation*> RunningAt(const Operation& d, const std::vector<Operation>& ops) {
  std::vector<const Operation*> running;
  for (const auto& o : ops) {
    if (o.invoke == d.invoke) continue;
    const bool o_running =
        o.invoke_ns() <= d.invoke_ns() && (o.completion == nullptr || o.complete_ns() > d.invoke_ns());
    if (o_running && o.invoke->index < d.invoke->index) running.push_back(&o);
  }
  return running;
}

// Why the answer of `d`, a duplicate that overlapped the requests `running`
// of its key (`ops`), says nothing about in-progress handling; "" when it
// does (a decisive answer, a 5xx included).
std::string SetAsideWhy(const Operation& d, const std::vector<const Operation*>& running,
                        const std::vector<Operation>& ops, const IdempotencyContract& contract,
                        const std::vector<std::pair<std::int64_t, std::int64_t>>& outages) {
  if (std::string why = HeldKeySetAsideWhy(d, contract, outages); !why.empty()) return why;
  if (Classify(d, contract) != AnswerClass::kRetryable) return "";
  const int status = d.answer()->status;
  const std::string code = std::to_string(status);
  // Shared with a leader (a request that overlapped none): the duplicate
  // waited for it. Other duplicates failing alike share nothing.
  for (const Operation* o : running)
    if (o->answer() && o->answer()->status == status && RunningAt(*o, ops).empty())
      return code + " as the running request";
  return "";
}

}  // namespace

Verdict InProgress(const OracleInput& in) {
  const std::string name = "in_progress";
  const auto& contract = in.target.idempotency;
  Violations violations;
  int overlaps = 0, undecided = 0, in_progress_answers = 0;
  AnswerTally answered;  // the judged duplicates' answers, for the evidence
  AnswerTally set_aside;  // overlapping duplicates' answers not judged, by why
  const auto outages = StoreOutages(in);
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
        const std::vector<const Operation*> running = RunningAt(d, g.ops);  // the key's requests running when d came
        if (running.empty()) continue;
        AnswerClass c = Classify(d, contract);
        if (const std::string why = SetAsideWhy(d, running, g.ops, contract, outages); !why.empty()) {
          set_aside.AddAs(why);
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
        // A 2xx other than the first: empty only when its body is.
        std::string what = c != AnswerClass::kSuccess ? "" : a.body.empty() ? "an empty success " : "another success ";
        // A 4xx refusal other than the declared in-progress status: no second
        // execution, only the status code is wrong. A 5xx says the request
        // failed, not that it runs: a client cannot tell it from a failure.
        const bool refused = a.status >= 400 && a.status < 500 && !(contract.replay && IsReplayMarked(a, contract));
        if (a.status >= 500) what = "a failure ";
        Finding v = MakeFinding("key " + g.key + " (" + g.action + "): duplicate " + OpName(d) + " got " + what +
                                    AnswerSummary(a) + " while another request was running (expected " +
                                    contract.InProgressText() + " or the first answer" +
                                    (first ? " " + AnswerSummary(*first->answer()) : std::string()) + ")" +
                                    (a.status >= 500 ? ": a 5xx tells the client the request failed, not that it "
                                                       "runs (idempotency.in_progress declares no 5xx)"
                                                     : ""),
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
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.overlapping_duplicates = overlaps;
  details.counts.in_progress_answers = in_progress_answers;
  details.tallies.answered = answered.Counts();
  details.counts.undecided = undecided;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  // Every duplicate that overlapped a running request reached the premise,
  // judged or set aside.
  const int reached = overlaps + set_aside.total();
  const std::string aside = SetAsideClause(set_aside);
  if (!violations.empty()) return Verdict::Invalid(name, violations.first() + aside, details).Counted(reached);
  if (reached == 0)
    return Verdict::Unknown(name,
                            nothing_executed.empty() ? "no duplicate overlapped a running request with the same key"
                                                     : nothing_executed,
                            details)
        .Counted(0);
  if (overlaps == 0)
    return Verdict::Unknown(name,
                            std::to_string(reached) +
                                " duplicate(s) overlapped a running request, none with an answer that decides" + aside,
                            details)
        .Counted(reached);
  return Verdict::Valid(name, std::to_string(overlaps) + " overlapping duplicate(s), answered " + answered.Text() +
                                  ": " + contract.InProgressText() + " or the first answer (in-progress path hit " +
                                  std::to_string(in_progress_answers) + "x); one execution" + aside,
                        details)
      .Counted(reached);
}

}  // namespace idemproof::oracles
