// one_record: each business id sent for an action has exactly `count`
// records when some request for it succeeded, none when every request was
// rejected, and never more than `count`. Requests sent after the declared
// retry window passed may execute again: up to `count` per window.
// Zero records after refusals the scenario did not ask for (every request
// 401, 302, 404) are `unknown: nothing executed`, never valid.
#include <map>
#include <set>

#include "oracles/oracle_support.h"
#include "oracles/swallowed_answers.h"

namespace idemproof::oracles {

Verdict OneRecord(const OracleInput& in) {
  const std::string name = "one_record";
  auto filter = ActionsParam(in.params);
  std::int64_t expected_ok = in.params.value("count", std::int64_t{1});
  const auto& contract = in.target.idempotency;

  const auto swallowed = SwallowedAnswers(in.history, contract);
  std::map<std::pair<std::string, std::string>, std::vector<Operation>> by_biz;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    by_biz[{e.action, e.biz}].push_back(op);
  }
  if (by_biz.empty()) return Verdict::Unknown(name, "the scenario sent no request to count records for").Counted(0);

  Violations violations;
  nlohmann::json judged = nlohmann::json::array();
  std::vector<std::string> unprobed, undecided, unreached;
  // The premise: deliveries of a business id after its first, and requests
  // without a key (nothing dedups them: their record count is the point).
  std::int64_t repeats = 0;
  for (const auto& [id, ops] : by_biz) {
    const auto& [action, biz] = id;
    std::int64_t keyless = 0, sent = 0;
    for (const auto& op : ops) {
      if (op.never_sent()) continue;
      keyless += op.invoke->key.empty() ? 1 : 0;
      ++sent;
    }
    const std::int64_t biz_repeats = std::max<std::int64_t>(keyless, sent - 1);
    repeats += biz_repeats;
    const ActionDescription* a = in.target.FindAction(action);
    if (a == nullptr || !a->records) {
      unprobed.push_back(action);
      continue;
    }
    auto count = RecordCount(in.history, action, biz);
    if (!count) {
      undecided.push_back(action + "/" + biz + ": records probe gave no count");
      continue;
    }
    bool any_success = false, all_rejected = true, any_in_progress = false;
    for (const auto& op : ops) {
      AnswerClass c = Classify(op, contract);
      if (c == AnswerClass::kSuccess) any_success = true;
      if (c == AnswerClass::kInProgress) any_in_progress = true;
      if (c != AnswerClass::kMismatch && c != AnswerClass::kMissingKey && c != AnswerClass::kOtherFinal)
        all_rejected = false;
    }
    // An answer a proxy fault swallowed still says what the target did.
    int swallowed_2xx = 0;
    for (const auto& s : swallowed) {
      if (s.action != action || s.biz != biz) continue;
      ++repeats;  // the proxy delivered it once more than the client sent
      if (s.answer.is_2xx()) {
        any_success = true;
        ++swallowed_2xx;
      }
      if (!contract.IsMismatch(s.answer.status) && s.answer.status != contract.missing_key && !s.answer.is_2xx() &&
          (contract.IsInProgress(s.answer.status) || contract.IsRetryable(s.answer.status)))
        all_rejected = false;
    }
    nlohmann::json row = {{"action", action}, {"biz", biz}, {"records", *count}, {"requests", ops.size()}};
    if (swallowed_2xx > 0) row["swallowed_2xx"] = swallowed_2xx;
    std::string problem;
    // Requests after the declared window may rightly execute again, and so
    // may each other key sent for the business id (the same body under a new
    // key is a new request: new_key_executes judges whether it ran).
    const int windows = WindowExecutions(ops, contract);
    std::set<std::string> keys;
    for (const auto& op : ops)
      if (!op.never_sent() && !op.invoke->key.empty()) keys.insert(op.invoke->key);
    const std::int64_t key_count = std::max<std::size_t>(keys.size(), 1);
    const std::int64_t allowed = expected_ok * windows * key_count;
    if (windows > 1) row["window_executions"] = windows;
    if (key_count > 1) row["keys"] = key_count;
    if (any_success && allowed > expected_ok) {
      row["expected"] = std::to_string(expected_ok) + ".." + std::to_string(allowed);
      if (*count < expected_ok || *count > allowed)
        problem = std::to_string(*count) + " records for " + action + " biz " + biz + " (expected " +
                  std::to_string(expected_ok) + " to " + std::to_string(allowed) + ": " +
                  (key_count > 1 ? std::to_string(key_count) + " keys, " : "") + std::to_string(windows) +
                  " retry windows, " + std::to_string(ops.size()) + " requests)";
    } else if (any_success) {
      row["expected"] = expected_ok;
      if (*count != expected_ok)
        problem = std::to_string(*count) + " records for " + action + " biz " + biz + " (expected " +
                  std::to_string(expected_ok) + " after a 2xx answer, " + std::to_string(ops.size()) + " requests)";
    } else if (all_rejected) {
      row["expected"] = 0;
      if (*count != 0) {
        problem = std::to_string(*count) + " records for " + action + " biz " + biz +
                  " though every request was rejected";
      } else if (auto why = NothingExecuted(ops, contract, false); !why.empty()) {
        undecided.push_back(action + "/" + biz + ": " + why);  // 0 records prove nothing then
        continue;
      }
    } else {
      row["expected"] = "<= " + std::to_string(allowed);
      if (*count > allowed) {
        problem = std::to_string(*count) + " records for " + action + " biz " + biz + " (at most " +
                  std::to_string(allowed) + " allowed)";
      } else if (!any_in_progress) {
        // Every request made to fail by the scenario: no real attempt, so
        // no repeat either.
        if (std::all_of(ops.begin(), ops.end(), [&](const Operation& op) {
              return op.never_sent() || FailedOnPurpose(op, contract);
            })) {
          unreached.push_back(action + "/" + biz + ": every request was made to fail by the scenario");
          repeats -= biz_repeats;
          continue;
        }
        // Lost and retryable answers alone: maybe no repeat reached the
        // target's logic. An in-progress answer did: it was refused as a
        // duplicate, and the count shows whether one executed anyway.
        undecided.push_back(action + "/" + biz + ": no request got a decisive answer");
        continue;
      }
    }
    if (!problem.empty()) {
      Finding v = MakeFinding(problem, row);
      v.records = *count;
      v.expected = row.value("expected", nlohmann::json());
      v.subject.erase("records");
      v.subject.erase("expected");
      for (const auto& op : ops) v.With(FindingRole::kOps, OpJson(op));
      violations.Add(v);
    } else {
      judged.push_back(row);
    }
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.records.judged_rows = judged;
  details.lists.undecided_lines = undecided;
  details.counts.repeated_deliveries = repeats;
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(repeats);
  if (!judged.empty())
    return Verdict::Valid(name, std::to_string(judged.size()) + " business id(s) with the expected record count",
                          details)
        .Counted(repeats);
  if (undecided.empty() && !unprobed.empty())
    return Verdict::NotApplicable(name, "target declares no records probe for action '" + unprobed.front() + "'",
                                  details);
  if (undecided.empty() && !unreached.empty())
    return Verdict::Unknown(name, unreached.front(), details).Counted(0);  // the registry says "premise not reached"
  return Verdict::Unknown(name, undecided.empty() ? "nothing to judge" : undecided.front(), details).Counted(repeats);
}

}  // namespace idemproof::oracles
