// The helpers oracle_support.h declares: parameters and event references in
// details, retry windows, findings (Violations, Conclude), the premise checks
// of the counting oracles (NothingExecuted, AnswerTally, AuthRefused) and
// PremiseBroken.
#include "oracles/oracle_support.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "base/duration.h"
#include "model/event_names.h"

#include "model/capabilities.h"
#include "model/history_events.h"

namespace idemproof::oracles {

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

Verdict Conclude(const std::string& name, const Violations& violations, const VerdictDetails& details, int judged,
                 int undecided, const std::string& valid_text, const std::string& undecided_text,
                 const std::string& unreached_text) {
  const int occurred = judged + undecided;
  if (!violations.empty()) return Verdict::Invalid(name, violations.first(), details).Counted(occurred);
  if (judged > 0) return Verdict::Valid(name, valid_text, details).Counted(occurred);
  if (undecided > 0) return Verdict::Unknown(name, undecided_text, details).Counted(occurred);
  return Verdict::Unknown(name, unreached_text, details).Counted(0);
}

void Violations::Add(const Finding& finding) {
  if (first_.empty()) first_ = finding.problem;
  list_.push_back(InRoleOrder(finding));
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

std::string NothingExecuted(const std::vector<Operation>& ops, const IdempotencyContract& contract,
                            bool swallowed_2xx) {
  if (swallowed_2xx) return "";
  bool all_asked_refusals = !ops.empty();
  AnswerTally answers;
  for (const auto& op : ops) {
    AnswerClass c = Classify(op, contract);
    if (c == AnswerClass::kSuccess) return "";
    // A malformed key (key_form) refused with the declared invalid_key status is asked for too.
    const bool malformed_refused = op.invoke->value.is_object() && op.invoke->value.contains("key_form") &&
                                   op.answer() && op.answer()->status == contract.invalid_key;
    if (c != AnswerClass::kMismatch && c != AnswerClass::kMissingKey && !malformed_refused) all_asked_refusals = false;
    answers.Add(op);
  }
  if (all_asked_refusals) return "";
  return "nothing executed: " + std::to_string(ops.size()) + " request(s), none answered 2xx (" +
         (answers.total() == 0 ? "none sent" : answers.Text()) + ")";
}

void AnswerTally::Add(const Operation& op) {
  auto a = op.answer();
  ++counts_[a ? std::to_string(a->status) : "no answer"];
  ++total_;
}

void AnswerTally::AddAs(const std::string& what) {
  ++counts_[what];
  ++total_;
}

std::string SetAsideClause(const AnswerTally& set_aside) {
  if (set_aside.total() == 0) return "";
  return "; " + std::to_string(set_aside.total()) + " answer(s) set aside: " + set_aside.Text();
}

std::vector<std::pair<std::int64_t, std::int64_t>> StoreOutages(const OracleInput& in) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::map<std::string, std::size_t> open;
  for (const auto& e : in.history.events()) {
    if (e.process != event_process::kNemesis || e.f != event_f::kFault || e.type != EventType::kInvoke) continue;
    const std::string fault = e.value.value("fault", "");
    const auto decl = in.scenario.faults.find(fault);
    if (decl == in.scenario.faults.end()) continue;
    const std::string& on = decl->second.on;
    const auto egress = in.target.egress.find(EgressOfHop(on));
    if (on != kStoreHop && (egress == in.target.egress.end() || !egress->second.tcp)) continue;
    if (e.value.value("phase", "") == "start") {
      std::int64_t end = std::numeric_limits<std::int64_t>::max();
      const nlohmann::json& params = decl->second.params;
      if (params.is_object() && params.contains("window") && params["window"].is_string()) {
        if (auto window = ParseDuration(params["window"].get<std::string>()); window.ok())
          end = e.time_ns + window->count();
      }
      spans.push_back({e.time_ns, end});
      open[fault] = spans.size() - 1;
    } else if (const auto o = open.find(fault); o != open.end()) {
      spans[o->second].second = std::min(spans[o->second].second, e.time_ns);
      open.erase(o);
    }
  }
  return spans;
}

bool FailedInStoreOutage(const Operation& op, const IdempotencyContract& contract,
                         const std::vector<std::pair<std::int64_t, std::int64_t>>& outages) {
  if (!op.answer() || !contract.IsRetryable(op.answer()->status)) return false;
  return std::any_of(outages.begin(), outages.end(), [&](const auto& span) {
    return op.invoke_ns() < span.second && op.complete_ns() >= span.first;
  });
}

std::string HeldKeySetAsideWhy(const Operation& op, const IdempotencyContract& contract,
                               const std::vector<std::pair<std::int64_t, std::int64_t>>& outages) {
  const AnswerClass c = Classify(op, contract);
  if (c == AnswerClass::kNoAnswer) return "no answer";
  if (c != AnswerClass::kRetryable) return "";
  const int status = op.answer()->status;
  const std::string code = std::to_string(status);
  if (status < 500) return code + " declared retryable";
  if (FailedOnPurpose(op, contract)) return code + " failed on purpose";
  if (FailedInStoreOutage(op, contract, outages)) return code + " while the store was down";
  return "";
}

bool DistinctEffects::Add(const std::optional<std::string>& id, const std::optional<std::string>& key) {
  ++added_;
  std::vector<std::string>& named = id ? ids_ : keys_;
  const std::optional<std::string>& name = id ? id : key;
  if (name && std::find(named.begin(), named.end(), *name) != named.end()) return false;
  if (name) named.push_back(*name);
  ++count_;
  return true;
}

std::string DistinctEffects::Names() const {
  std::string out;
  for (const auto& id : ids_) out += (out.empty() ? " (" : ", ") + id;
  for (const auto& key : keys_) out += (out.empty() ? " (" : ", ") + std::string("downstream key ") + key;
  return out.empty() ? out : out + ")";
}

std::optional<std::string> DownstreamKeyOf(const nlohmann::json& entry) {
  if (!entry.is_object() || !entry.contains("key") || !entry["key"].is_string()) return std::nullopt;
  return entry["key"].get<std::string>();
}

std::string AnswerTally::Text() const {
  std::string out;
  for (const auto& [what, n] : counts_) out += (out.empty() ? "" : ", ") + what + " x" + std::to_string(n);
  return out;
}

std::map<std::string, std::int64_t> AnswerTally::Counts() const {
  return {counts_.begin(), counts_.end()};
}

bool AuthRefused(const Operation& op, const IdempotencyContract& contract) {
  auto a = op.answer();
  if (!a || (a->status != 401 && a->status != 403 && a->status != 407)) return false;
  // A status the contract declares (mismatch: 403, say) is the target's answer about the key.
  return Classify(op, contract) == AnswerClass::kOtherFinal;
}

std::optional<std::string> PremiseBroken(const OracleSignature& signature, const History& history) {
  for (const auto& e : history.events()) {
    if (e.f != event_f::kTargetExited) continue;
    const std::string why = e.value.is_object() ? e.value.value("why", std::string("ended")) : "ended";
    const std::string instance = e.value.is_object() ? e.value.value("instance", std::string()) : "";
    return "the target process" + (instance.empty() ? "" : " (" + instance + ")") + " " + why +
           " during the scenario, not by a step (history event #" + std::to_string(e.index) +
           "): what it answered after proves nothing";
  }
  if (!signature.compares_bodies) return std::nullopt;
  for (const auto& op : RequestOperations(history)) {
    auto a = op.answer();
    if (a && a->truncated)
      return "the answer body of " + OpName(op) + " was truncated at " + a->CutBy() + " (" + a->TruncationNote() +
             "): bodies cannot be compared";
  }
  return std::nullopt;
}

}  // namespace idemproof::oracles
