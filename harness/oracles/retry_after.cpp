// retry_after: every in-progress answer carries a usable Retry-After (RFC 9110
// 10.2.3: delay-seconds or an HTTP-date), as the target's
// idempotency.retry_after declares: `required` = a MUST (a violation),
// `recommended` = a SHOULD (a deviation), `none` = not judged.
// It must tell the truth: a delay-seconds under idempotency.retry_after.min
// (1s by default) tells a client to retry at once, for as long as the work
// runs ("0" forever); and a client that waits as told (`send` with `every:
// retry_after`, its requests marked honours_retry_after) makes progress: its
// last request is no longer answered in progress. An HTTP-date is taken as
// a delay the client can honour (its distance from the answer's Date is not
// judged).
#include <cctype>
#include <map>

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

// The delay-seconds of a usable value; nullopt for an HTTP-date.
std::optional<long long> DelaySeconds(const std::string& raw) {
  std::string v = raw;
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(v.begin());
  if (v.empty() || v.size() > 12) return std::nullopt;
  for (char c : v)
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  return std::stoll(v);
}

// What is wrong with an in-progress answer's Retry-After (`value` absent:
// none was given); "" when it is usable and not under the minimum.
std::string RetryAfterProblem(const std::optional<std::string>& value, Duration min) {
  if (!value) return "without Retry-After";
  if (!UsableRetryAfter(*value)) return "with an unusable Retry-After '" + *value + "'";
  const auto delay = DelaySeconds(*value);
  if (delay && std::chrono::seconds(*delay) < min)
    return "with 'Retry-After: " + *value + "', a delay under the minimum of " + FormatDuration(min) +
           " (idempotency.retry_after.min): it tells the client to retry at once, for as long as the work runs";
  return "";
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
    const std::string wrong = RetryAfterProblem(value, contract.retry_after_min);
    if (wrong.empty()) continue;
    const std::string problem = OpName(op) + " (" + e.action + ") was answered " + std::to_string(answer->status) +
                                " in progress " + wrong + " (" + (required ? "required" : "recommended") +
                                " by the target's idempotency.retry_after)";
    violations.Add(MakeFinding(problem).With(FindingRole::kRequest, OpJson(op)));
  }
  // The in-progress answers a proxy took (a hedge's losing copy) were given too.
  for (const auto& sw : SwallowedAnswers(in.history, contract)) {
    if (!filter.empty() && std::find(filter.begin(), filter.end(), sw.action) == filter.end()) continue;
    if (!contract.IsInProgress(sw.answer.status)) continue;
    ++judged;
    const auto value = sw.answer.Header("Retry-After");
    const std::string wrong = RetryAfterProblem(value, contract.retry_after_min);
    if (wrong.empty()) continue;
    violations.Add(MakeFinding("the in-progress answer " + std::to_string(sw.answer.status) + " swallowed by " +
                                   sw.fault + " (proxy event #" + std::to_string(sw.event_index) + ") came " + wrong,
                               {{"swallowed", SwallowedJson(sw)}}));
  }
  // A client that waits as told makes progress: of each such client's
  // requests (one process, one key), the last is not answered in progress.
  std::map<std::pair<std::string, std::string>, std::vector<Operation>> honouring;
  for (const auto& op : RequestOperations(in.history)) {
    const auto& v = op.invoke->value;
    if (!v.is_object() || !v.value("honours_retry_after", false)) continue;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), op.invoke->action) == filter.end()) continue;
    honouring[{op.invoke->process, op.invoke->key}].push_back(op);
  }
  int clients = 0;
  for (const auto& [who, ops] : honouring) {
    const Operation& last = ops.back();
    if (Classify(last, contract) == AnswerClass::kNoAnswer) continue;
    ++clients;
    if (Classify(last, contract) != AnswerClass::kInProgress) continue;
    std::string told;
    for (const auto& op : ops) {
      if (auto a = op.answer()) told += (told.empty() ? "" : ", ") + a->Header("Retry-After").value_or("none");
    }
    Finding f = MakeFinding("a client that waited as each answer's Retry-After told it made no progress: its " +
                            std::to_string(ops.size()) + " request(s) of key " + who.second + " (" +
                            last.invoke->action + ") were all answered in progress up to " + OpName(last) +
                            ", told Retry-After " + told + ", when its retries within the recovery bound (" +
                            FormatDuration(contract.RecoveryBound()) + ") ran out");
    for (const auto& op : ops) f.With(FindingRole::kOps, OpJson(op));
    violations.Add(f);
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.in_progress_answers = judged;
  details.texts.retry_after = required ? "required" : "recommended";
  details.texts.min = FormatDuration(contract.retry_after_min);
  details.counts.honouring_clients = clients;
  if (!violations.empty()) {
    return (required ? Verdict::Invalid(name, violations.first(), details)
                     : Verdict::Deviation(name, violations.first(), details))
        .Counted(judged);
  }
  // A target that waits for the running request never answers in-progress:
  // nothing to judge, which is no pass.
  if (judged == 0)
    return Verdict::NotApplicable(name, "no in-progress answer was seen: nothing to judge", details).Counted(0);
  return Verdict::Valid(name, std::to_string(judged) + " in-progress answer(s) carry Retry-After of at least " +
                                  FormatDuration(contract.retry_after_min) +
                                  (clients > 0 ? "; " + std::to_string(clients) +
                                                     " client(s) that waited as told made progress"
                                               : std::string()),
                        details)
      .Counted(judged);
}

}  // namespace idemproof::oracles
