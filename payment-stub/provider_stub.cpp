#include "provider_stub.h"

#include <thread>

#include "base/problem.h"
#include "base/query_string.h"

namespace idemproof::stub {
namespace {

using nlohmann::json;

HttpResponse json_response(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.set_header("Content-Type", "application/json");
  r.body = body.dump();
  return r;
}

StubReply answer(HttpResponse r) { return StubReply{std::move(r), Disposition::answer, 0, {}}; }

StubReply not_found(const std::string& path) {
  return answer(problem_response(404, "not-found", "Not found", path + " does not exist"));
}

StubReply method_not_allowed(const std::string& allow) {
  auto r = problem_response(405, "method-not-allowed", "Method not allowed",
                                 "allowed: " + allow);
  r.set_header("Allow", allow);
  return answer(std::move(r));
}

json effects_json(const std::vector<Effect>& effects) {
  json items = json::array();
  for (const auto& e : effects) items.push_back(effect_to_json(e));
  return {{"count", effects.size()}, {"items", std::move(items)}};
}

}  // namespace

StubReply ProviderStub::handle(const HttpRequest& request) {
  const auto [path, query] = split_target(request.target);
  const std::string& m = request.method;
  if (path == "/healthz") return answer(json_response(200, {{"status", "ok"}}));
  if (path == "/charge") {
    if (m != "POST") return method_not_allowed("POST");
    return charge(request);
  }
  if (path == "/charges") {
    if (m != "GET") return method_not_allowed("GET");
    return answer(json_response(200, effects_json(ledger_.effects(
                                         query_parameter(query, "idempotency_key"),
                                         query_parameter(query, "reference")))));
  }
  if (path == "/ledger") {
    if (m == "DELETE") {
      ledger_.clear();
      return answer(json_response(200, {{"count", 0}}));
    }
    if (m != "GET") return method_not_allowed("GET, DELETE");
    const auto reference = query_parameter(query, "reference");
    json effects = json::array(), attempts = json::array();
    const auto es = ledger_.effects(std::nullopt, reference);
    for (const auto& e : es) effects.push_back(effect_to_json(e));
    for (const auto& a : ledger_.attempts(reference)) attempts.push_back(attempt_to_json(a));
    return answer(json_response(200, {{"count", es.size()},
                                      {"effects", std::move(effects)},
                                      {"attempts", std::move(attempts)},
                                      {"faults_injected", faults_.injected()}}));
  }
  if (path == "/_faults") {
    if (m == "DELETE") {
      faults_.clear();
    } else if (m == "POST") {
      json spec = json::parse(request.body, nullptr, false);
      if (spec.is_discarded()) {
        return answer(problem_response(400, "malformed-json", "Malformed JSON",
                                            "the body is not JSON"));
      }
      if (auto error = faults_.arm(spec)) {
        return answer(problem_response(400, "invalid-fault", "Invalid fault", *error));
      }
    } else if (m != "GET") {
      return method_not_allowed("GET, POST, DELETE");
    }
    json body = faults_.armed().to_json();
    body["injected"] = faults_.injected();
    return answer(json_response(200, body));
  }
  return not_found(path);
}

StubReply ProviderStub::charge(const HttpRequest& request) {
  json body = json::parse(request.body, nullptr, false);
  ChargeRequest c;
  c.idempotency_key = request.header(key_header_).value_or("");
  const bool valid = body.is_object() && body.contains("reference") &&
                     body["reference"].is_string() && body.contains("amount") &&
                     body["amount"].is_number_integer() && body["amount"].get<std::int64_t>() > 0;
  if (!valid) {
    return answer(problem_response(400, "invalid-charge", "Invalid charge",
                                        "expected {\"reference\": string, \"amount\": integer > 0}"));
  }
  c.reference = body["reference"].get<std::string>();
  c.amount = body["amount"].get<std::int64_t>();

  const ChargeFault fault = faults_.take();
  const std::string fault_name = fault.mode == FaultMode::none ? "" : fault_mode_name(fault.mode);
  if (fault.mode == FaultMode::fail) {
    ledger_.fail(c, fault_name);
    auto r = problem_response(fault.status, "provider-unavailable", "Provider failure",
                                   "the provider failed this charge; nothing was charged");
    if (fault.status >= 500) r.set_header("Retry-After", "1");
    return answer(std::move(r));
  }
  if (fault.mode == FaultMode::delay && fault.delay_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(fault.delay_ms));
  }
  const Attempt a = ledger_.charge(c, fault_name);
  const bool replayed = a.outcome == "replayed";
  StubReply reply = answer(json_response(
      replayed ? 200 : 201, {{"transaction_id", a.transaction_id},
                             {"idempotency_key", c.idempotency_key},
                             {"reference", c.reference},
                             {"amount", c.amount},
                             {"replayed", replayed}}));
  switch (fault.mode) {
    case FaultMode::timeout:
      reply.disposition = Disposition::hold;
      reply.hold_for = std::chrono::milliseconds(fault.delay_ms);
      break;
    case FaultMode::kill_after_commit:
      reply.disposition = Disposition::kill_then_close;
      reply.pid = static_cast<long>(fault.pid);
      break;
    case FaultMode::kill_after_answer:
      reply.disposition = Disposition::stop_answer_kill;
      reply.pid = static_cast<long>(fault.pid);
      break;
    default:
      break;
  }
  return reply;
}

}  // namespace idemproof::stub
