// The key's own syntax and the error format (issue 48 item 4).
// empty_key_rejected, long_key_rejected, key_syntax_rejected: a request
// whose key header carried a malformed key (`key_form:` on its send,
// model/key_forms.h: empty; one character past the declared
// key_max_length; a comma, a quote or a non-ASCII character, none an RFC
// 8941 String) is refused with idempotency.invalid_key (default 400) and
// never executed. A 2xx is an execution (the effect rule); a 4xx other than
// the declared status is a finding about the status code alone. A request
// refused by authentication (401, 403, 407) never reached the key check.
// problem_details: with `errors: problem+json`, every 4xx answer of the
// scenario is an RFC 9457 problem details document: media type
// application/problem+json, a JSON object whose members, where present,
// have the types section 3.1 gives them ("type", "title", "detail",
// "instance" strings; "status" a number equal to the answer's status). RFC
// 9457 makes no member required: an absent "type" means "about:blank".
#include <algorithm>

#include "base/header_list.h"
#include "model/key_forms.h"
#include "oracles/refusals.h"

namespace idemproof::oracles {
namespace {

// The malformed form `op`'s request carried ("" for a well-formed key).
std::string KeyFormOf(const Operation& op) {
  const nlohmann::json& v = op.invoke->value;
  if (!v.is_object() || !v.contains("key_form") || !v["key_form"].is_string()) return "";
  return v["key_form"].get<std::string>();
}

// The header value the request sent for its key, for evidence ("" when the
// request record has no such header).
std::string SentKey(const Operation& op, const std::string& header) {
  const nlohmann::json& v = op.invoke->value;
  if (header.empty() || !v.is_object() || !v.contains("request")) return "";
  const nlohmann::json& headers = v["request"].value("headers", nlohmann::json::array());
  for (const auto& h : headers) {
    if (h.is_array() && h.size() == 2 && h[0].is_string() && h[1].is_string() &&
        equals_ignoring_case(h[0].get<std::string>(), header))
      return h[1].get<std::string>();
  }
  return "";
}

Verdict MalformedKeyRejected(const OracleInput& in, const std::string& name) {
  const auto& contract = in.target.idempotency;
  if (name == "long_key_rejected" && !contract.key_max_length_declared)
    return Verdict::NotApplicable(name, "the target declares no longest key (idempotency.key_max_length)");
  const auto filter = ActionsParam(in.params);
  Violations violations;
  RefusalTally t;
  for (const auto& op : RequestOperations(in.history)) {
    const std::string form = KeyFormOf(op);
    if (form.empty() || MalformedKeyOracle(form) != name) continue;
    const HistoryEvent& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    const auto a = JudgeRefusal(op, contract, contract.invalid_key, t);
    if (!a) continue;
    const std::string sent = SentKey(op, contract.key_header);
    const std::string what = MalformedKeyText(form, sent.size(), contract.key_max_length);
    const std::string ev = OpName(op) + " (" + e.action + ") with " + what + " " +
                           (a->is_2xx() ? "was executed: " : "answered ") + AnswerSummary(*a) + " instead of " +
                           std::to_string(contract.invalid_key) + " (idempotency.invalid_key)";
    Finding f = MakeFinding(ev, {{"key_form", form}, {"action", e.action}}).With(FindingRole::kRequest, OpJson(op));
    // Refused, with another code: only the status is wrong. A 5xx is no refusal.
    if (a->status >= 400 && a->status < 500) f.rule = "status";
    violations.Add(f);
  }
  const int judged = t.judged, undecided = t.undecided;
  const AnswerTally& answered = t.answered;
  const AnswerTally& auth_refused = t.auth_refused;
  const VerdictDetails details = RefusalDetails(violations, t);
  const std::string note = auth_refused.total() == 0
                               ? ""
                               : " (" + std::to_string(auth_refused.total()) + " answered " + auth_refused.Text() +
                                     ": refused by authentication before any key was looked up)";
  return Conclude(name, violations, details, judged, undecided,
                  std::to_string(judged) + " request(s) with a malformed key, answered " + answered.Text() +
                      " (declared: " + std::to_string(contract.invalid_key) + ")" + note +
                      SetAsideClause(t.set_aside),
                  "no request with a malformed key got an answer" + note,
                  auth_refused.total() == 0 ? "the scenario sent no request with such a key"
                                            : "no request with a malformed key reached the key check" + note);
}

// What is wrong with `a` as a problem details document; "" when nothing.
std::string ProblemDefect(const HttpAnswer& a) {
  const std::string type = a.Header("Content-Type").value_or("");
  std::string media = type.substr(0, type.find(';'));
  while (!media.empty() && media.back() == ' ') media.pop_back();
  if (!equals_ignoring_case(media, "application/problem+json"))
    return type.empty() ? "no Content-Type (not application/problem+json)"
                        : "Content-Type " + type + " (not application/problem+json)";
  if (a.truncated) return "";  // the head was kept, the body cannot be parsed: judged by its media type only
  auto body = a.JsonBody();
  if (!body || !body->is_object()) return "a body that is not a JSON object";
  for (const char* member : {"type", "title", "detail", "instance"}) {
    if (body->contains(member) && !(*body)[member].is_string())
      return std::string("member \"") + member + "\" is not a string";
  }
  if (body->contains("status")) {
    const auto& s = (*body)["status"];
    if (!s.is_number_integer()) return "member \"status\" is not a number";
    if (s.get<long long>() != a.status)
      return "member \"status\" is " + std::to_string(s.get<long long>()) + ", the answer's status " +
             std::to_string(a.status);
  }
  return "";
}

}  // namespace

Verdict EmptyKeyRejected(const OracleInput& in) { return MalformedKeyRejected(in, "empty_key_rejected"); }
Verdict LongKeyRejected(const OracleInput& in) { return MalformedKeyRejected(in, "long_key_rejected"); }
Verdict KeySyntaxRejected(const OracleInput& in) { return MalformedKeyRejected(in, "key_syntax_rejected"); }

Verdict ProblemDetails(const OracleInput& in) {
  const std::string name = "problem_details";
  if (!in.target.errors_problem_json)
    return Verdict::NotApplicable(name, "the target declares no error format (errors: problem+json)");
  const auto filter = ActionsParam(in.params);
  Violations violations;
  int judged = 0;
  AnswerTally answered;
  for (const auto& op : RequestOperations(in.history)) {
    const HistoryEvent& e = *op.invoke;
    if (!filter.empty() && std::find(filter.begin(), filter.end(), e.action) == filter.end()) continue;
    auto a = op.answer();
    if (!a || a->status < 400 || a->status >= 500) continue;
    ++judged;
    answered.Add(op);
    const std::string defect = ProblemDefect(*a);
    if (defect.empty()) continue;
    violations.Add(MakeFinding(OpName(op) + " (" + e.action + ") answered " + std::to_string(a->status) + " with " +
                                   defect + ": the target declares errors: problem+json (RFC 9457)",
                               {{"action", e.action}})
                       .With(FindingRole::kRequest, OpJson(op)));
  }
  VerdictDetails details;
  details.violations = violations.findings();
  details.counts.judged = judged;
  details.tallies.answered = answered.Counts();
  return Conclude(name, violations, details, judged, 0,
                  std::to_string(judged) + " 4xx answer(s) (" + answered.Text() +
                      "), each application/problem+json with RFC 9457 members",
                  "", "the target answered no 4xx in this scenario");
}

}  // namespace idemproof::oracles
