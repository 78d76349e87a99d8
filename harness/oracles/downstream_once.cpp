// downstream_once: after the target was killed right after one of its
// downstreams answered (a kill-after-answer on an egress, `fault:`), restarted
// and retried, that downstream took the effect once per business action.
// The effect is the call the kill struck: its method and path (query left
// out) on that egress; every entry of the egress proxy's own record
// (process egress, f egress) with the same method and path that the
// downstream answered 2xx is one effect. More than the declared window allows
// (WindowExecutions) is a second execution: the retry called again instead of
// reconciling with what the dead owner had done. Needs no ledger probe: the
// proxy's record is the downstream's side of the story (calls that reached
// it), so a reconciling read (another method or path) is no effect.
// Effects, not calls: where a ledger probe on that egress names the effect
// in a call's record entry (its `value`, e.g. $.answer.transaction_id), 2xx
// calls naming the same effect are one effect: a call re-sent under the same
// downstream key and answered with the first effect is reconciliation. Where
// no answer names one, the downstream idempotency key the call went under
// (the entry's "key", the egress's key_header) does: 2xx calls under one
// key are one effect (DistinctEffects).
//   unknown  the fault never struck (or struck nothing: no answer, no kill),
//            or the struck call was not answered 2xx (no effect to count).
#include <optional>

#include "model/event_names.h"
#include "oracles/oracle_support.h"
#include "oracles/side_effect_oracles.h"

namespace idemproof::oracles {

namespace {

std::string PathOf(const std::string& target) { return target.substr(0, target.find('?')); }

// The effect a call's record entry names, by the first ledger probe on
// `egress` with a value path that finds it; nullopt when none does.
std::optional<std::string> EffectIdOf(const nlohmann::json& entry, const std::string& egress,
                                      const TargetDescription& target) {
  for (const auto& [name, probe] : target.probes) {
    if (probe.egress != egress || !probe.value || probe.role != "ledger") continue;
    if (auto id = probe.value->FindText(entry); id && *id != "null") return id;
  }
  return std::nullopt;
}

bool Is2xx(const nlohmann::json& status) {
  return status.is_number_integer() && status.get<int>() >= 200 && status.get<int>() < 300;
}

}  // namespace

Verdict DownstreamOnce(const OracleInput& in) {
  const std::string name = "downstream_once";
  const std::string fault = in.params.value("fault", std::string());
  const auto filter = ActionsParam(in.params);

  // The struck call: the fault's first injected event that killed.
  const HistoryEvent* struck = nullptr;
  std::string missed;
  for (const auto& e : in.history.events()) {
    if (e.process != event_process::kProxy || e.f != event_f::kFault || !e.value.is_object()) continue;
    if (e.value.value("name", std::string()) != fault || e.value.value("phase", std::string()) != "injected")
      continue;
    if (!e.value.value("missed", std::string()).empty()) {
      missed = e.value.value("missed", std::string());
      continue;
    }
    struck = &e;
    break;
  }
  if (struck == nullptr)
    return Verdict::Unknown(name, "fault " + fault + " never struck a downstream call" +
                                      (missed.empty() ? "" : " (" + missed + ")") + ": no effect to count");
  const std::string on = struck->value.value("on", std::string());
  const nlohmann::json& request = struck->value.contains("request") ? struck->value["request"] : nlohmann::json();
  const std::string egress = EgressOfHop(on);
  if (egress.empty() || !request.is_object())
    return Verdict::Unknown(name, "fault " + fault + " struck no egress call (on: '" + on + "')");
  const std::string method = request.value("method", std::string());
  const std::string path = PathOf(request.value("target", std::string()));
  const std::string call = method + " " + path + " at downstream " + egress;

  std::vector<Operation> sent;
  nlohmann::json ops = nlohmann::json::array();
  int unsent = 0;
  for (const auto& op : RequestOperations(in.history)) {
    if (!filter.empty() && std::find(filter.begin(), filter.end(), op.invoke->action) == filter.end()) continue;
    sent.push_back(op);
    if (op.never_sent()) ++unsent;
    ops.push_back(OpJson(op));
  }
  if (sent.empty()) return Verdict::Unknown(name, "the scenario sent no request of the business action").Counted(0);
  const std::int64_t repeats = std::max<std::int64_t>(0, static_cast<std::int64_t>(sent.size()) - unsent - 1);

  // The calls of the effect that reached the downstream, as its proxy recorded them.
  nlohmann::json calls = nlohmann::json::array();
  DistinctEffects effects;  // of the 2xx calls

  for (const auto& e : in.history.events()) {
    if (e.process != event_process::kEgress || e.f != event_f::kEgress || !e.value.is_object()) continue;
    if (e.value.value("egress", std::string()) != egress || e.value.value("method", std::string()) != method ||
        e.value.value("path", std::string()) != path)
      continue;
    const nlohmann::json status = e.value.contains("status") ? e.value["status"] : nlohmann::json();
    nlohmann::json call_json = {{"event", e.index},
                                {"target", e.value.value("target", std::string())},
                                {"status", status},
                                {"answer", e.value.contains("answer") ? e.value["answer"] : nlohmann::json()}};
    if (Is2xx(status)) {
      const auto id = EffectIdOf(e.value, egress, in.target);
      const auto key = DownstreamKeyOf(e.value);
      if (id) call_json["effect"] = *id;
      if (key) call_json["downstream_key"] = *key;
      // A call answered with an effect already counted is that effect again.
      effects.Add(id, key);
    }
    calls.push_back(std::move(call_json));
  }
  VerdictDetails details;
  details.texts.downstream = egress;
  details.texts.method = method;
  details.texts.path = path;
  details.counts.effects = effects.count();
  details.records.calls = calls;
  details.records.requests = ops;
  details.counts.struck_event = struck->index;
  if (!effects.ids().empty()) details.lists.effect_ids = effects.ids();
  if (!effects.keys().empty()) details.lists.downstream_keys = effects.keys();
  const std::string ids = effects.Names();  // " (tx_1, downstream key k-2)" when the calls named their effects
  // "; 2 calls answered 2xx naming that effect: reconciled" when calls outnumber effects.
  const std::string reconciled =
      effects.added() > effects.count()
          ? "; " + std::to_string(effects.added()) + " calls answered 2xx naming " +
                (effects.count() == 1 ? "that effect" : "those effects") + ": reconciled, not repeated"
          : "";
  const int windows = WindowExecutions(sent, in.target.idempotency);
  if (windows > 1) details.counts.window_executions = windows;
  if (effects.count() > windows) {
    // Without effect ids or keys (no ledger probe, no key sent) each 2xx call is an effect.
    const std::string counted = ids.empty() ? std::to_string(effects.count()) + " calls"
                                            : std::to_string(effects.count()) + " distinct effects" + ids;
    const std::string problem = counted + " of " + call +
                                " answered 2xx for one business action (" + std::to_string(sent.size()) +
                                " requests): after the kill right after its answer, a retry called it again "
                                "instead of reconciling";
    Finding f = MakeFinding(problem);
    for (const Operation& op : sent) f.With(FindingRole::kOps, OpJson(op));
    f.records = effects.count();
    f.expected = windows;
    Violations violations;
    violations.Add(f);
    details.violations = violations.findings();
    return Verdict::Invalid(name, problem, details).Counted(repeats);
  }
  if (effects.count() == 0)
    return Verdict::Unknown(name, "the struck call " + call + " was not answered 2xx: no effect to count", details)
        .Counted(repeats);
  return Verdict::Valid(name, "one " + call + " effect" + ids + " (" + std::to_string(calls.size()) +
                                  " call(s) of it, " + std::to_string(sent.size()) + " requests" + reconciled + ")",
                        details)
      .Counted(repeats);
}

}  // namespace idemproof::oracles
