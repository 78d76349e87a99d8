#include "literal_history.h"

#include <stdexcept>

#include "model/history_events.h"

namespace idemproof::testing {
namespace {

std::int64_t Ms(int t) { return static_cast<std::int64_t>(t) * 1'000'000; }
constexpr const char* kShop = R"(
name: shop
base_url: "http://127.0.0.1:{{port}}"
idempotency:
  replay: {header: Idempotent-Replayed, value: "true"}
  window: 4s
compare_headers: [Location]
volatile: ["$.trace"]
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", qty: 1}}
    other_payload: {json: {biz_no: "{{biz}}", qty: 2}}
    records: {request: {path: "/orders?biz_no={{biz}}"}, count: "$.count"}
    capture: {order_id: "$.id"}
  cancel_order:
    role: delete
    request: {method: DELETE, path: "/orders/{{order_id}}"}
probes:
  stock: {request: {path: "/stock"}, value: "$.available"}
  order: {request: {path: "/orders/{{order_id}}"}, volatile: ["$.updated_at"]}
hooks:
  slow: {request: {method: POST, path: /_chaos, json: {delay_ms: 100}}}
)";

const TargetDescription& Load(const std::string& text) {
  auto* t = new TargetDescription();  // test-lifetime singletons
  auto r = ParseTarget(text, "shop.yaml");
  if (!r.ok()) throw std::runtime_error(r.status().ToString());
  *t = *r;
  return *t;
}

HistoryEvent Invoke(const std::string& process, const std::string& action, const std::string& key,
                    const std::string& biz, int t0, const std::string& payload) {
  const bool burst = process.rfind("burst", 0) == 0;
  HistoryEvent e = RequestInvoke(process, burst ? event_f::kBurst : event_f::kSend,
                                 {action, key, key.empty() ? kNoKey : key, biz, biz, payload},
                                 {"POST", "http://127.0.0.1:1/orders", {}, "{}"}, -1);
  e.time_ns = Ms(t0);
  return e;
}
}  // namespace

const TargetDescription& ShopTarget() {
  static const TargetDescription& t = Load(kShop);
  return t;
}

const TargetDescription& CallersTarget(bool marked) {
  static const auto load = [](bool with_marker) -> const TargetDescription& {
    std::string text = std::string(kShop) +
                       "callers:\n  alice: {headers: {Authorization: \"Bearer a\"}}\n"
                       "  bob: {headers: {Authorization: \"Bearer b\"}}\n";
    const std::string marker = "  replay: {header: Idempotent-Replayed, value: \"true\"}\n";
    if (!with_marker) text.erase(text.find(marker), marker.size());
    return Load(text);
  };
  static const TargetDescription& with = load(true);
  static const TargetDescription& without = load(false);
  return marked ? with : without;
}

TargetDescription ShopTargetUnder(const std::string& profile) {
  auto t = ParseTarget(kShop, "shop.yaml", profile);
  if (!t.ok()) throw std::runtime_error(t.status().ToString());
  return *t;
}

const TargetDescription& PlainTarget() {
  static const TargetDescription& t = []() -> const TargetDescription& {
    std::string text = kShop;
    const std::string block = "idempotency:\n  replay: {header: Idempotent-Replayed, value: \"true\"}\n  window: 4s\n";
    text.erase(text.find(block), block.size());
    return Load(text);
  }();
  return t;
}

const TargetDescription& BodyMarkedTarget() {
  static const TargetDescription& t = []() -> const TargetDescription& {
    std::string text = kShop;
    const std::string header = "replay: {header: Idempotent-Replayed, value: \"true\"}";
    text.replace(text.find(header), header.size(), "replay: {body: $.meta.replayed, value: \"true\"}");
    return Load(text);
  }();
  return t;
}

Answer Replay(int status, const std::string& body) { return Answer{status, body, {{"Idempotent-Replayed", "true"}}}; }

LiteralHistory& LiteralHistory::Send(const std::string& process, const std::string& action, const std::string& key,
                                     const std::string& biz, int t0, int t1, const Answer& answer,
                                     const std::string& payload) {
  HistoryEvent inv = Invoke(process, action, key, biz, t0, payload);
  if (!caller_.empty()) inv.value["caller"] = caller_;
  if (!variant_.empty()) inv.value["variant"] = variant_;
  if (!key_form_.empty()) inv.value["key_form"] = key_form_;
  if (request_) inv.value["request"] = RequestJson(*request_);
  RecordedExchange answered;
  answered.type = EventType::kOk;
  answered.status = answer.status;
  answered.headers = answer.headers;
  answered.body = answer.body;
  HistoryEvent done = RequestCompletion(inv, answered);
  done.time_ns = Ms(t1);
  h_.Append(inv);
  h_.Append(done);
  return *this;
}

namespace {
// An invoke and a completion without an answer, of type `type`.
void Unanswered(History& h, HistoryEvent inv, EventType type, const std::string& error, int t1) {
  RecordedExchange none;
  none.type = type;
  none.error = error;
  HistoryEvent done = RequestCompletion(inv, none);
  done.time_ns = Ms(t1);
  h.Append(inv);
  h.Append(done);
}
}  // namespace

LiteralHistory& LiteralHistory::Lost(const std::string& process, const std::string& action, const std::string& key,
                                     const std::string& biz, int t0, int t1) {
  HistoryEvent inv = Invoke(process, action, key, biz, t0, "default");
  if (request_) inv.value["request"] = RequestJson(*request_);  // as Carrying says
  Unanswered(h_, std::move(inv), EventType::kInfo, "timeout", t1);
  return *this;
}

LiteralHistory& LiteralHistory::NotSent(const std::string& process, const std::string& action, const std::string& key,
                                        const std::string& biz, int t0, int t1) {
  Unanswered(h_, Invoke(process, action, key, biz, t0, "default"), EventType::kFail, "Couldn't connect to server", t1);
  return *this;
}

LiteralHistory& LiteralHistory::Open(const std::string& process, const std::string& action, const std::string& key,
                                     const std::string& biz, int t0) {
  h_.Append(Invoke(process, action, key, biz, t0, "default"));
  return *this;
}

LiteralHistory& LiteralHistory::Records(const std::string& action, const std::string& biz, int count, int t) {
  HistoryEvent inv = RecordsProbeInvoke(action, biz, biz);
  inv.time_ns = Ms(t);
  HistoryEvent done = CompletionOf(inv, EventType::kOk);
  done.value["value"] = {{"count", count}};
  done.value["count"] = count;
  h_.Append(inv);
  h_.Append(done);
  return *this;
}

LiteralHistory& LiteralHistory::Probe(const std::string& probe, const std::string& label, const nlohmann::json& value,
                                      int t) {
  HistoryEvent inv = ProbeInvoke(probe, label, -1);
  inv.time_ns = Ms(t);
  HistoryEvent done = CompletionOf(inv, EventType::kOk);
  done.value["value"] = value;
  h_.Append(inv);
  h_.Append(done);
  return *this;
}

LiteralHistory& LiteralHistory::Fault(const std::string& name, const std::string& phase, int t) {
  HistoryEvent inv = FaultInvoke(name, phase == "start", -1);
  inv.time_ns = Ms(t);
  h_.Append(inv);
  h_.Append(CompletionOf(inv, EventType::kOk));
  return *this;
}

Verdict RunOracle(const std::string& name, const History& history, const TargetDescription& target,
                  nlohmann::json params) {
  Scenario s;
  s.name = "literal";
  s.hunts = "test";
  OracleSpec spec;
  spec.name = name;
  spec.params = std::move(params);
  s.expect.push_back(spec);
  return BuiltinOracles().Check(spec, s, target, history);
}

History WithControl(const History& base, const std::string& f, int t) {
  History h = base;
  HistoryEvent e = ProcessInvoke(f, -1, {{"pid", 42}});
  e.time_ns = std::int64_t{t} * 1000000;
  h.Append(e);
  h.Append(CompletionOf(e, EventType::kOk));
  return h;
}

}  // namespace idemproof::testing
