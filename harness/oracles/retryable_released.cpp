// retryable_released: after a retryable answer (5xx or a declared retryable
// status) the next retry with the same key really executes: it is not a
// replay, not blocked as in progress, and the records count reaches one.
// A client's retry repeats the failed request byte for byte. A retry that
// differed from it (the failure declared only as a request patch the retry
// goes without, `variant: first_only`) and was refused — mismatch, missing
// key, in progress — was refused as another request: set aside, never
// reported as the key kept after the failure. Every answer set aside is
// counted in the evidence.
#include "oracles/oracle_support.h"

namespace idemproof::oracles {

namespace {

// True when an operation other than `retry` got an unmarked 2xx: the key
// was executed, so a replay-marked 2xx is that execution, not a stored failure.
bool ExecutedByAnother(const std::vector<Operation>& ops, const Operation& retry, const IdempotencyContract& contract) {
  for (const auto& o : ops) {
    if (o.invoke == retry.invoke || Classify(o, contract) != AnswerClass::kSuccess) continue;
    auto a = o.answer();
    if (a && !IsReplayMarked(*a, contract)) return true;
  }
  return false;
}

// How `retry` differs from the `failure` it retried, as the target saw them
// (model/request_groups.h, RequestDifferences); "" when it is the same request.
std::string RetryDifference(const RequestGroup& g, const Operation& failure, const Operation& retry,
                            const TargetDescription& target) {
  RequestGroup pair = g;
  pair.ops = {failure, retry};
  std::string text;
  for (const auto& line : RequestDifferences(pair, target)) text += (text.empty() ? "" : "; ") + line;
  return text;
}

}  // namespace

Verdict RetryableReleased(const OracleInput& in) {
  const std::string name = "retryable_released";
  const auto& contract = in.target.idempotency;
  if (contract.stores_5xx && contract.retryable.empty())
    return Verdict::NotApplicable(name, "profile " + contract.profile +
                                            " stores and replays 5xx answers: no failure is released (identical_replay "
                                            "judges the replay)");
  Violations violations;
  AnswerTally set_aside;   // retries whose answers decided nothing, by why
  std::string differed;    // the first refused retry that differed from its failure, said
  int retryable_seen = 0, retried = 0, executed = 0, undecided = 0;  // premise: retried
  for (const auto& g : GroupRequestsByKey(in.history, ActionsParam(in.params))) {
    if (g.payload != "default") continue;
    bool group_executed = false;
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
      const Operation& r = g.ops[i];
      if (Classify(r, contract) != AnswerClass::kRetryable) continue;
      ++retryable_seen;
      const Operation* t = nullptr;
      for (std::size_t j = i + 1; j < g.ops.size() && t == nullptr; ++j)
        if (g.ops[j].invoke_ns() >= r.complete_ns()) t = &g.ops[j];
      if (t == nullptr) continue;  // nobody retried this one
      // A retry the scenario made fail as well decides nothing; it is the
      // next failure, whose own retry is judged in its turn.
      if (FailedOnPurpose(*t, contract)) {
        set_aside.AddAs(std::to_string(t->answer()->status) + " failed on purpose");
        continue;
      }
      ++retried;
      AnswerClass c = Classify(*t, contract);
      auto a = t->answer();
      bool marked = a && IsReplayMarked(*a, contract);
      // A refusal of a retry that was another request says nothing of the key.
      if (c == AnswerClass::kMismatch || c == AnswerClass::kMissingKey || c == AnswerClass::kInProgress) {
        if (const std::string diff = RetryDifference(g, r, *t, in.target); !diff.empty()) {
          ++undecided;
          set_aside.AddAs(std::to_string(a->status) + " to a retry that differed from the failed request");
          if (differed.empty())
            differed = OpName(*t) + " got " + AnswerSummary(*a, 40) + " but differed from the failed request " +
                       OpName(r) + " (" + diff +
                       "): a byte-identical retry was not sent (the failure is declared only as a request patch; "
                       "a hook, an egress fault or a header variant triggers it out of band)";
          continue;
        }
      }
      std::string head = "key " + g.key + " (" + g.action + "): after " + AnswerSummary(*r.answer(), 40) + ", retry " +
                         OpName(*t) + " ";
      Finding base = MakeFinding("", {{"key", g.key}})
                         .With(FindingRole::kFailure, OpJson(r))
                         .With(FindingRole::kRetry, OpJson(*t));
      if (c == AnswerClass::kNoAnswer) {
        ++undecided;
        set_aside.AddAs("no answer");
      } else if (marked && c == AnswerClass::kSuccess && ExecutedByAnother(g.ops, *t, contract)) {
        // A concurrent duplicate ran once the failure released the key; this
        // retry rightly replays that execution (found by explore: a burst
        // member overtaking the 503).
        ++executed;
        group_executed = true;
      } else if (marked) {
        base.problem = head + "got a replay " + AnswerSummary(*a) + ": the retryable failure was stored";
        violations.Add(base);
      } else if (c == AnswerClass::kSuccess || c == AnswerClass::kOtherFinal) {
        ++executed;
        group_executed = group_executed || c == AnswerClass::kSuccess;
      } else if (c == AnswerClass::kInProgress) {
        bool other_running = false;
        for (const auto& o : g.ops)
          if (o.invoke != t->invoke && o.invoke_ns() < t->invoke_ns() &&
              (o.completion == nullptr || o.complete_ns() > t->invoke_ns()))
            other_running = true;
        if (other_running) {
          ++undecided;
          set_aside.AddAs(std::to_string(a->status) + " while another request of the key ran");
        } else {
          base.problem = head + "got " + AnswerSummary(*a) + ": the key stayed claimed after a retryable failure";
          violations.Add(base);
        }
      } else if (c == AnswerClass::kRetryable) {
        // Unmarked: the downstream may still be failing; the next retry decides.
        ++undecided;
        set_aside.AddAs(std::to_string(a->status) + " failed again");
      } else {
        base.problem = head + "got " + AnswerSummary(*a) + " instead of executing";
        violations.Add(base);
      }
    }
    if (group_executed) {
      const auto* action = in.target.FindAction(g.action);
      // No records probe: nothing to count (1 passes).
      auto count = (action && action->records) ? RecordCount(in.history, g.action, g.biz) : std::nullopt;
      // A key used again past the declared window rightly executes again.
      const int allowed = BizWindowExecutions(in.history, g.action, g.biz, contract);
      const std::string expected = allowed > 1 ? "1 to " + std::to_string(allowed) + ", one per retry window" : "1";
      const std::int64_t records = count.value_or(1);
      if (records < 1 || records > allowed)
      {
        Finding v = MakeFinding("key " + g.key + " (" + g.action + "): the retry succeeded but biz " + g.biz +
                                    " has " + std::to_string(records) + " records (expected " + expected + ")",
                                {{"key", g.key}});
        v.records = records;
        violations.Add(v);
      }
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.retryable_answers = retryable_seen;
  details.counts.executed_retries = executed;
  details.counts.undecided = undecided;
  if (set_aside.total() > 0) details.tallies.set_aside = set_aside.Counts();
  const std::string aside = SetAsideClause(set_aside);
  if (!violations.empty()) return Verdict::Invalid(name, violations.first() + aside, details).Counted(retried);
  if (retryable_seen == 0)
    return Verdict::Unknown(name, "no retryable answer happened (did the failure hook fire?)", details).Counted(0);
  if (retried == 0)
    return Verdict::Unknown(name, "no retryable answer was retried (a retry the scenario made fail too is none)" + aside,
                            details)
        .Counted(0);
  if (executed == 0) {
    // Without a marker a stored failure replayed looks exactly like the
    // downstream failing again: say so rather than guess either way.
    const std::string why = contract.replay ? ""
                                            : " (the target marks no replays: a stored failure cannot be told from a "
                                              "downstream still failing)";
    return Verdict::Unknown(name,
                            "no retry after a retryable answer reached a decision" + why +
                                (differed.empty() ? std::string() : ": " + differed) + aside,
                            details)
        .Counted(retried);
  }
  return Verdict::Valid(name, std::to_string(executed) + " retry(ies) after a retryable answer executed" + aside,
                        details)
      .Counted(retried);
}

}  // namespace idemproof::oracles
