#include "sim/sim_history.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "model/history_events.h"
#include "model/operation.h"
#include "oracles/oracle.h"

namespace idemproof::sim {

namespace {

// The pool's actions as the target file names them.
const char* ActionName(const SimAction& a) { return a.kind == SimAction::Kind::payment ? "pay" : "create_order"; }

// "30000ms": the loader's duration syntax.
std::string Millis(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + "ms";
}

// What reference.yaml declares of the reference, minus what the simulation
// does not run (start command, helpers, callbacks, batch, queue): the
// requests are never sent over HTTP, so only the actions' names, roles and
// payloads, the probes' names and the contract matter to the oracles.
std::string TargetYaml(std::chrono::nanoseconds lease, std::chrono::nanoseconds window) {
  return R"(name: simulation
base_url: "http://simulation.invalid"
idempotency:
  key_header: Idempotency-Key
  replay: {header: Idempotent-Replayed, value: "true"}
  in_progress: 409
  mismatch: 422
  missing_key: 400
  window: )" + Millis(window) + R"(
  lease: )" + Millis(lease) + R"(
compare_headers: [Content-Type, Location]
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", sku: s1, qty: 1, amount: 100}}
    other_payload: {json: {biz_no: "{{biz}}", sku: s1, qty: 2, amount: 100}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
  pay:
    role: pay
    request: {method: POST, path: /payments, json: {biz_no: "{{biz}}", amount: 100}}
probes:
  ledger:
    role: ledger
    of: pay
    request: {method: GET, path: "/ledger?reference={{biz}}"}
    value: "$.effects[*].transaction_id"
)";
}

OracleSpec Expect(std::string name, nlohmann::json params = nlohmann::json::object()) {
  OracleSpec spec;
  spec.name = std::move(name);
  spec.params = std::move(params);
  return spec;
}

// The 5xx answers: nothing in the simulation fails, so each is a store
// error (the core's or the wiring's). "r3 got 500 {...}".
void NoInternalError(const History& history, std::vector<Violation>& out) {
  for (const Operation& op : RequestOperations(history)) {
    const auto answer = op.answer();
    if (!answer || answer->status < 500) continue;
    const std::string& process = op.invoke->process;
    out.push_back({"no_internal_error", "r" + process.substr(process.find('-') + 1) + " got " +
                                            std::to_string(answer->status) + " " + answer->body});
  }
}

}  // namespace

const TargetDescription& SimTarget(std::chrono::nanoseconds lease, std::chrono::nanoseconds window) {
  static std::mutex mu;
  static std::map<std::pair<std::int64_t, std::int64_t>, TargetDescription> targets;
  std::lock_guard lock(mu);
  auto [it, inserted] = targets.try_emplace({lease.count(), window.count()});
  if (inserted) {
    auto parsed = ParseTarget(TargetYaml(lease, window), "<simulation>");
    if (!parsed.ok()) {
      targets.erase(it);
      throw std::logic_error("the simulation's target does not load: " + parsed.status().ToString());
    }
    it->second = std::move(*parsed);
  }
  return it->second;  // std::map: the reference stays valid as entries are added
}

const Scenario& SimScenario() {
  static const Scenario scenario = [] {
    Scenario s;
    s.name = "simulation";
    s.hunts = "interleavings of the reference core's store and provider steps, crashes and lease expiry";
    s.expect = {
        Expect("one_record", {{"actions", {"create_order"}}}),
        // The pool has one payment business id: one ledger, one business action.
        Expect("intent_reconciled", {{"actions", {"pay"}}, {"ledger", "ledger"}}),
        Expect("lease_recovery"),
        Expect("identical_replay"),
    };
    return s;
  }();
  return scenario;
}

std::int64_t SimRecorder::Time(std::int64_t now_ns) {
  last_ns_ = std::max(now_ns, last_ns_ + 1);
  return last_ns_;
}

void SimRecorder::AppendWithCompletion(HistoryEvent invoke, nlohmann::json value, std::int64_t now_ns) {
  invoke.time_ns = Time(now_ns);
  HistoryEvent done = CompletionOf(invoke, EventType::kOk);
  for (auto& [k, v] : value.items()) done.value[k] = std::move(v);
  done.time_ns = Time(now_ns);
  history_.Append(std::move(invoke));
  history_.Append(std::move(done));
}

void SimRecorder::Sent(int id, int action, int step, std::int64_t now_ns) {
  const SimAction& a = ActionPool().at(static_cast<std::size_t>(action));
  RecordedRequest request{a.method,
                          "http://simulation.invalid" + a.target,
                          {{"Idempotency-Key", a.key}, {"Content-Type", "application/json"}},
                          a.body};
  HistoryEvent e = RequestInvoke(event_process::Client(id), event_f::kSend,
                                 {ActionName(a), a.key, a.key, a.biz_no, a.biz_no, a.payload}, request, step);
  e.time_ns = Time(now_ns);
  if (invokes_.size() < static_cast<std::size_t>(id)) invokes_.resize(static_cast<std::size_t>(id), -1);
  invokes_[static_cast<std::size_t>(id - 1)] = history_.Append(std::move(e));
}

void SimRecorder::Answered(int id, const HttpResponse& answer, std::int64_t now_ns) {
  RecordedExchange x;
  x.type = EventType::kOk;
  x.status = answer.status;
  x.headers = answer.headers;
  x.body = answer.body;
  HistoryEvent done = RequestCompletion(history_.events().at(static_cast<std::size_t>(invokes_.at(id - 1))), x);
  done.time_ns = Time(now_ns);
  history_.Append(std::move(done));
}

void SimRecorder::Crashed(const std::vector<int>& abandoned, int step, std::int64_t now_ns) {
  AppendWithCompletion(ProcessInvoke(event_f::kKill, step, {{"instance", "main"}}), nlohmann::json::object(), now_ns);
  // The clients see their connections reset after the kill.
  for (int id : abandoned) {
    RecordedExchange lost;
    lost.type = EventType::kInfo;
    lost.error = "lost in a crash";
    HistoryEvent done = RequestCompletion(history_.events().at(static_cast<std::size_t>(invokes_.at(id - 1))), lost);
    done.time_ns = Time(now_ns);
    history_.Append(std::move(done));
  }
  AppendWithCompletion(ProcessInvoke(event_f::kStart, step, {{"instance", "main"}}), nlohmann::json::object(), now_ns);
}

void SimRecorder::Waited(std::int64_t seconds, int step, std::int64_t now_ns) {
  HistoryEvent e = WaitEvent(step, std::to_string(seconds) + "s");
  e.time_ns = Time(now_ns);
  history_.Append(std::move(e));
}

void SimRecorder::Records(const std::string& biz, std::int64_t count, std::int64_t now_ns) {
  AppendWithCompletion(RecordsProbeInvoke("create_order", biz, biz), {{"value", {{"count", count}}}, {"count", count}},
                       now_ns);
}

void SimRecorder::Ledger(const std::string& biz, const std::vector<std::string>& transactions, std::int64_t now_ns) {
  HistoryEvent probe = ProbeInvoke("ledger", "ledger", -1);
  probe.biz = probe.biz_name = biz;
  AppendWithCompletion(std::move(probe), {{"value", transactions}}, now_ns);
}

Judgement JudgeSimulation(const History& history, const TargetDescription& target) {
  Judgement out;
  const Scenario& scenario = SimScenario();
  for (const OracleSpec& spec : scenario.expect) {
    const Verdict v = BuiltinOracles().Check(spec, scenario, target, history);
    if (v.status == VerdictStatus::kInvalid) out.violations.push_back({v.oracle, v.evidence});
    // The registry's words for an oracle that threw or is not there: the
    // simulation cannot call that a pass.
    if (v.status == VerdictStatus::kUnknown &&
        (v.evidence.starts_with("oracle crashed") || v.evidence.starts_with("no oracle named")) && out.error.empty()) {
      out.error = spec.name + ": " + v.evidence;
    }
  }
  NoInternalError(history, out.violations);
  return out;
}

}  // namespace idemproof::sim
