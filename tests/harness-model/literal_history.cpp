#include "literal_history.h"

#include <stdexcept>

namespace idemproof::testing {
namespace {
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
    request: {method: POST, path: /orders, json: {biz_no: "{{biz}}", qty: 1}}
    other_payload: {json: {biz_no: "{{biz}}", qty: 2}}
    records: {request: {path: "/orders?biz_no={{biz}}"}, count: "$.count"}
    capture: {order_id: "$.id"}
  cancel_order:
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
  HistoryEvent e;
  e.process = process;
  e.type = EventType::kInvoke;
  e.f = process.rfind("burst", 0) == 0 ? "burst" : "send";
  e.action = action;
  e.key = key;
  e.key_name = key.empty() ? "none" : key;
  e.biz = biz;
  e.biz_name = biz;
  e.payload = payload;
  e.time_ns = static_cast<std::int64_t>(t0) * 1'000'000;
  e.value = {{"request", {{"method", "POST"}, {"url", "http://127.0.0.1:1/orders"}, {"headers", nlohmann::json::object()}, {"body", "{}"}}}};
  return e;
}
}  // namespace

const TargetDescription& ShopTarget() {
  static const TargetDescription& t = Load(kShop);
  return t;
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
  HistoryEvent done = inv;
  done.type = EventType::kOk;
  done.time_ns = static_cast<std::int64_t>(t1) * 1'000'000;
  nlohmann::json headers = nlohmann::json::object();
  for (const auto& [k, v] : answer.headers) headers[k] = v;
  done.value = {{"response", {{"status", answer.status}, {"headers", headers}, {"body", answer.body}}},
                {"connection_reused", false}};
  h_.Append(inv);
  h_.Append(done);
  return *this;
}

LiteralHistory& LiteralHistory::Lost(const std::string& process, const std::string& action, const std::string& key,
                                     const std::string& biz, int t0, int t1) {
  HistoryEvent inv = Invoke(process, action, key, biz, t0, "default");
  HistoryEvent done = inv;
  done.type = EventType::kInfo;
  done.time_ns = static_cast<std::int64_t>(t1) * 1'000'000;
  done.value = {{"error", "timeout"}};
  h_.Append(inv);
  h_.Append(done);
  return *this;
}

LiteralHistory& LiteralHistory::Open(const std::string& process, const std::string& action, const std::string& key,
                                     const std::string& biz, int t0) {
  h_.Append(Invoke(process, action, key, biz, t0, "default"));
  return *this;
}

LiteralHistory& LiteralHistory::Records(const std::string& action, const std::string& biz, int count, int t) {
  HistoryEvent e;
  e.process = "probe";
  e.type = EventType::kOk;
  e.f = "probe";
  e.action = action;
  e.biz = biz;
  e.time_ns = static_cast<std::int64_t>(t) * 1'000'000;
  e.value = {{"probe", "records"}, {"label", "records"}, {"value", {{"count", count}}}, {"count", count}};
  h_.Append(e);
  return *this;
}

LiteralHistory& LiteralHistory::Probe(const std::string& probe, const std::string& label, const nlohmann::json& value,
                                      int t) {
  HistoryEvent e;
  e.process = "probe";
  e.type = EventType::kOk;
  e.f = "probe";
  e.time_ns = static_cast<std::int64_t>(t) * 1'000'000;
  e.value = {{"probe", probe}, {"label", label}, {"value", value}};
  h_.Append(e);
  return *this;
}

LiteralHistory& LiteralHistory::Fault(const std::string& name, const std::string& phase, int t) {
  HistoryEvent e;
  e.process = "nemesis";
  e.type = EventType::kInfo;
  e.f = "fault";
  e.time_ns = static_cast<std::int64_t>(t) * 1'000'000;
  e.value = {{"fault", name}, {"phase", phase}};
  h_.Append(e);
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

}  // namespace idemproof::testing
