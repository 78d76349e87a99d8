#include <exception>

#include "model/capabilities.h"
#include "model/profile.h"
#include "oracles/oracle.h"
#include "oracles/oracle_support.h"

namespace idemproof {

Status OracleRegistry::Register(OracleSignature signature, OracleFn fn) {
  if (signature.name.empty()) return Status::InvalidArgument("oracle name is empty");
  if (entries_.count(signature.name)) return Status::InvalidArgument("oracle '" + signature.name + "' registered twice");
  std::string name = signature.name;
  entries_.emplace(name, Entry{std::move(signature), std::move(fn)});
  return Status::Ok();
}

std::vector<OracleSignature> OracleRegistry::Signatures() const {
  std::vector<OracleSignature> out;
  for (const auto& [name, e] : entries_) out.push_back(e.signature);
  return out;
}

ScenarioVocabulary OracleRegistry::Vocabulary() const {
  ScenarioVocabulary v;
  v.oracles = Signatures();
  return v;
}

namespace {
// The rule the target's semantics profile applies to `v`, and its level: a
// finding against a SHOULD is a deviation. Findings that are all about the
// status code alone (violations tagged "rule": "status") apply the
// oracle's status rule. An oracle's own deviation is never made a violation.
Verdict WithRule(Verdict v, const TargetDescription& target) {
  const SemanticsProfile* profile = FindProfile(target.idempotency.profile);
  if (profile == nullptr) return v;
  bool status_only = false;
  if (v.status == VerdictStatus::kInvalid && v.details.is_object() && v.details.contains("violations") &&
      v.details["violations"].is_array() && !v.details["violations"].empty()) {
    status_only = true;
    for (const auto& x : v.details["violations"])
      if (!x.is_object() || x.value("rule", std::string()) != "status") status_only = false;
  }
  const ProfileRule* rule = profile->RuleFor(v.oracle, status_only);
  if (rule == nullptr) return v;
  v.rule = {rule->id, rule->text, RuleLevelName(rule->level)};
  if (v.status == VerdictStatus::kInvalid && rule->level == RuleLevel::kShould) v.severity = Severity::kDeviation;
  return v;
}
}  // namespace

Verdict OracleRegistry::Check(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                              const History& history) const {
  return WithRule(CheckUnder(spec, scenario, target, history), target);
}

Verdict OracleRegistry::CheckUnder(const OracleSpec& spec, const Scenario& scenario, const TargetDescription& target,
                                   const History& history) const {
  auto it = entries_.find(spec.name);
  if (it == entries_.end()) return Verdict::Unknown(spec.name, "no oracle named '" + spec.name + "'");
  // A crashing oracle proves nothing: unknown, never valid.
  try {
    OracleInput in{scenario, target, history, spec.params};
    Verdict v = it->second.fn(in);
    v.oracle = spec.name;
    const OracleSignature& sig = it->second.signature;
    v.premise.what = sig.premise;
    if (v.status == VerdictStatus::kValid) {
      if (auto why = oracles::PremiseBroken(sig, history)) {
        Verdict u = Verdict::Unknown(spec.name, *why, v.details);
        u.premise = v.premise;
        return u;
      }
      // A property whose premise never occurred was never exercised.
      if (!sig.premise.empty() && v.premise.count.value_or(0) <= 0) {
        Verdict u = Verdict::Unknown(spec.name, std::string(kPremiseNotReached) + "no " + sig.premise + " in this run",
                                     v.details);
        u.premise = {sig.premise, 0};
        return u;
      }
    }
    if (v.PremiseNotReached()) v.evidence = kPremiseNotReached + v.evidence;
    return v;
  } catch (const std::exception& e) {
    return Verdict::Unknown(spec.name, std::string("oracle crashed: ") + e.what());
  } catch (...) {
    return Verdict::Unknown(spec.name, "oracle crashed with a non-standard exception");
  }
}

std::vector<Verdict> OracleRegistry::CheckAll(const Scenario& scenario, const TargetDescription& target,
                                              const History& history) const {
  std::vector<Verdict> out;
  for (const auto& spec : scenario.expect) out.push_back(Check(spec, scenario, target, history));
  return out;
}

namespace oracles {

std::vector<std::vector<Operation>> WindowSegments(const std::vector<Operation>& ops,
                                                   const IdempotencyContract& contract) {
  std::vector<Operation> sorted = ops;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Operation& a, const Operation& b) { return a.invoke_ns() < b.invoke_ns(); });
  std::vector<std::vector<Operation>> segments(1);
  if (!contract.window) {
    segments.front() = std::move(sorted);
    return segments;
  }
  const std::int64_t window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(*contract.window).count();
  bool open = false;
  std::int64_t opened_ns = 0;  // when the current window opened (once open)
  for (const Operation& op : sorted) {
    if (open && op.invoke_ns() - opened_ns > window_ns) {
      segments.emplace_back();
      open = false;
    }
    segments.back().push_back(op);
    if (!open && IsTerminal(Classify(op, contract))) {
      open = true;
      opened_ns = op.complete_ns();
    }
  }
  return segments;
}

int WindowExecutions(const std::vector<Operation>& ops, const IdempotencyContract& contract) {
  return static_cast<int>(WindowSegments(ops, contract).size());
}

int BizWindowExecutions(const History& history, const std::string& action, const std::string& biz,
                        const IdempotencyContract& contract) {
  std::vector<Operation> ops;
  for (const auto& op : RequestOperations(history))
    if (op.invoke->action == action && op.invoke->biz == biz) ops.push_back(op);
  return WindowExecutions(ops, contract);
}

Verdict Conclude(const std::string& name, const Violations& violations, const nlohmann::json& details, int judged,
                 int undecided, const std::string& valid_text, const std::string& undecided_text,
                 const std::string& unreached_text) {
  const int occurred = judged + undecided;
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(occurred);
  if (judged > 0) return Verdict::Valid(name, valid_text, details).Counted(occurred);
  if (undecided > 0) return Verdict::Unknown(name, undecided_text, details).Counted(occurred);
  return Verdict::Unknown(name, unreached_text, details).Counted(0);
}

void Violations::Add(nlohmann::json violation) {
  if (first_.empty()) first_ = violation.at("problem").get<std::string>();
  list_.push_back(std::move(violation));
}

std::vector<std::string> ActionsParam(const nlohmann::json& params) {
  if (params.is_object() && params.contains("actions")) return params["actions"].get<std::vector<std::string>>();
  return {};
}

nlohmann::json OpJson(const Operation& op) {
  const HistoryEvent& e = *op.invoke;
  nlohmann::json j = {{"index", e.index}, {"process", e.process}, {"action", e.action},
                      {"key", e.key},     {"biz", e.biz},         {"payload", e.payload}};
  if (e.value.is_object() && e.value.contains("rewrites")) j["rewrites"] = e.value["rewrites"];
  if (op.completion == nullptr) {
    j["outcome"] = "open";
  } else {
    j["outcome"] = EventTypeName(op.completion->type);
    j["completion_index"] = op.completion->index;
    if (auto a = op.answer()) j["answer"] = AnswerEvidenceJson(*a);
    if (op.completion->value.is_object() && op.completion->value.contains("error"))
      j["error"] = op.completion->value["error"];
  }
  return j;
}

bool FailedOnPurpose(const Operation& op, const IdempotencyContract& contract) {
  const nlohmann::json& value = op.invoke->value;
  if (!value.is_object() || !value.contains("variant") || !value["variant"].is_string()) return false;
  const CapabilityInfo* failure = FindCapability("retryable_failure");
  return failure != nullptr && value["variant"].get<std::string>() == failure->variant &&
         Classify(op, contract) == AnswerClass::kRetryable;
}

std::string ChangeSummary(const Operation& op) {
  const HistoryEvent& e = *op.invoke;
  std::string out = e.payload.empty() ? "default" : e.payload;
  if (e.value.is_object() && e.value.contains("rewrites") && e.value["rewrites"].is_array()) {
    std::string list;
    for (const auto& r : e.value["rewrites"])
      if (r.is_string()) list += (list.empty() ? "" : ", ") + r.get<std::string>();
    if (!list.empty()) out += ": " + list;
  }
  return out;
}

std::string OpName(const Operation& op) {
  const std::string& payload = op.invoke->payload;
  const std::string form = payload.empty() || payload == "default" ? "" : ", payload " + ChangeSummary(op);
  // Which instance the harness's balancer sent it to, when the run had several.
  const nlohmann::json& value = op.invoke->value;
  const std::string instance = value.is_object() && value.contains("instance") && value["instance"].is_string()
                                   ? ", " + value["instance"].get<std::string>()
                                   : "";
  return "request #" + std::to_string(op.invoke->index) + " (" + op.invoke->process + instance + form + ")";
}

}  // namespace oracles
}  // namespace idemproof
