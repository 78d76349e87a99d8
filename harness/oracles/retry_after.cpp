// retry_after: every in-progress answer carries a usable Retry-After (RFC 9110
// 10.2.3: delay-seconds or an HTTP-date), as the target's
// idempotency.retry_after declares: `required` = a MUST (a violation),
// `recommended` = a SHOULD (a deviation), `none` = not judged.
#include <cctype>

#include "oracles/oracle_support.h"
#include "oracles/swallowed_answers.h"

namespace idemproof::oracles {

namespace {

// delay-seconds (1*DIGIT) or an IMF-fixdate such as "Sun, 06 Nov 1994 08:49:37 GMT".
bool UsableRetryAfter(const std::string& raw) {
  std::string v = raw;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty()) return false;
  bool digits = true;
  for (char c : v) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits) return true;
  // An HTTP-date: 29 characters ending in " GMT" with a comma after the day name.
  return v.size() == 29 && v[3] == ',' && v.compare(v.size() - 4, 4, " GMT") == 0;
}

}  // namespace

Verdict RetryAfter(const OracleInput& in) {
  const std::string name = "retry_after";
  const auto& contract = in.target.idempotency;
  if (contract.retry_after == IdempotencyContract::RetryAfter::kNone)
    return Verdict::NotApplicable(name, "the target declares idempotency.retry_after: none (not judged)");
  const bool required = contract.retry_after == IdempotencyContract::RetryAfter::kRequired;
  const auto filter = ActionsParam(in.params);
  Violations violations;
  int judged = 0;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    if (Classify(op, contract) != AnswerClass::kInProgress) continue;
    ++judged;
    const auto answer = op.answer();
    const auto value = answer->Header("Retry-After");
    if (value && UsableRetryAfter(*value)) continue;
    const std::string problem =
        OpName(op) + " (" + e.action + ") was answered " + std::to_string(answer->status) + " in progress " +
        (value ? "with an unusable Retry-After '" + *value + "'" : std::string("without Retry-After")) + " (" +
        (required ? "required" : "recommended") + " by the target's idempotency.retry_after)";
    violations.Add(MakeFinding(problem).With(FindingRole::kRequest, OpJson(op)));
  }
  // The in-progress answers a proxy took (a hedge's losing copy) were given too.
  for (const auto& sw : SwallowedAnswers(in.history, contract)) {
    if (!filter.empty() && std::find(filter.begin(), filter.end(), sw.action) == filter.end()) continue;
    if (!contract.IsInProgress(sw.answer.status)) continue;
    ++judged;
    const auto value = sw.answer.Header("Retry-After");
    if (value && UsableRetryAfter(*value)) continue;
    violations.Add(MakeFinding("the in-progress answer " + std::to_string(sw.answer.status) + " swallowed by " +
                                   sw.fault + " (proxy event #" + std::to_string(sw.event_index) + ") has " +
                                   (value ? "an unusable Retry-After '" + *value + "'" : std::string("no Retry-After")),
                               {{"swallowed", SwallowedJson(sw)}}));
  }
  nlohmann::json details = {{"violations", violations.json()},
                            {"in_progress_answers", judged},
                            {"retry_after", required ? "required" : "recommended"}};
  if (!violations.empty()) {
    return (required ? Verdict::Invalid(name, violations.first(), details)
                     : Verdict::Deviation(name, violations.first(), details))
        .Counted(judged);
  }
  // A target that waits for the running request never answers in-progress:
  // nothing to judge, which is no pass.
  if (judged == 0)
    return Verdict::NotApplicable(name, "no in-progress answer was seen: nothing to judge", details).Counted(0);
  return Verdict::Valid(name, std::to_string(judged) + " in-progress answer(s) carry Retry-After", details)
      .Counted(judged);
}

}  // namespace idemproof::oracles
