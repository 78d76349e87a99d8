// RenderRequest over request variants (one case per kind of change), the
// declared Content-Type of a raw body, and the console table's evidence
// column (harness/cli/summary_table.h), which shortens bodies, not reasons.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli/summary_table.h"
#include "model/history_events.h"
#include "model/request_variant.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"
#include "local_http_server.h"
#include "runtime/request_render.h"
#include "test_support.h"

using namespace idemproof;
using idemproof::HttpRequest;
using idemproof::runtime::OutgoingRequest;
using idemproof::runtime::RenderRequest;

namespace {

const char* kTarget = R"(name: shop
base_url: "http://127.0.0.1:1"
actions:
  create_order:
    role: create
    request: {method: POST, path: "/orders?src=web&slow_ms=1", headers: {X-Mode: plain},
              json: {biz: "{{biz}}", item: {sku: a, qty: 1}}}
    variants:
      slow: {query: {slow_ms: "1500", "tag x": "a&b=c {{biz}}"}}
      fails_retryably: {patch: {"$.item.sku": flaky, "$.item.note": "for {{biz}}"}}
      loud: {headers: {x-mode: loud, X-Extra: "{{biz}}"}}
      whole: {json: {biz: "{{biz}}", other: true}}
      raw: {body: "biz={{biz}}", content_type: application/x-www-form-urlencoded}
  create_note:
    role: create
    request: {method: POST, path: /notes, body: "n={{biz}}"}
  create_typed_note:
    role: create
    request: {method: POST, path: /notes, body: "n={{biz}}", content_type: text/plain}
)";

const TargetDescription& Target() {
  static const TargetDescription t = [] {
    auto r = ParseTarget(kTarget, "t.yaml");
    REQUIRE(r.ok());
    return *r;
  }();
  return t;
}

// The action's request as sent, with variant `variant` ("" = none).
OutgoingRequest Render(const std::string& action, const std::string& variant) {
  const ActionDescription& a = *Target().FindAction(action);
  RequestTemplate t = variant.empty() ? a.request : *ApplyVariant(a.request, a.variants.at(variant));
  auto r = RenderRequest(t, "http://127.0.0.1:9", {{"biz", "b-1"}}, {}, {{"Idempotency-Key", "k"}},
                         std::chrono::seconds(1));
  REQUIRE(r.ok());
  return *r;
}

std::optional<std::string> Header(const HttpRequest& r, const std::string& name) {
  std::optional<std::string> out;
  for (const auto& [n, v] : r.headers)
    if (n == name) out = v;
  return out;
}

int Count(const HttpRequest& r, const std::string& lower_name) {
  int n = 0;
  for (const auto& [name, v] : r.headers) {
    std::string l = name;
    for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    n += l == lower_name;
  }
  return n;
}

}  // namespace

TEST_CASE("without a variant the request renders as declared") {
  const OutgoingRequest r = Render("create_order", "");
  CHECK(r.url() == "http://127.0.0.1:9/orders?src=web&slow_ms=1");
  CHECK(nlohmann::json::parse(r.message.body) == nlohmann::json{{"biz", "b-1"}, {"item", {{"sku", "a"}, {"qty", 1}}}});
  CHECK(Header(r.message, "Content-Type") == "application/json");
}

TEST_CASE("a query variant replaces or adds parameters, percent-encoded") {
  const OutgoingRequest r = Render("create_order", "slow");
  CHECK(r.url() == "http://127.0.0.1:9/orders?src=web&slow_ms=1500&tag%20x=a%26b%3Dc%20b-1");
}

TEST_CASE("a patch variant sets JSON paths of the json body") {
  const OutgoingRequest r = Render("create_order", "fails_retryably");
  CHECK(nlohmann::json::parse(r.message.body) ==
        nlohmann::json{{"biz", "b-1"}, {"item", {{"sku", "flaky"}, {"qty", 1}, {"note", "for b-1"}}}});
  CHECK(r.url() == "http://127.0.0.1:9/orders?src=web&slow_ms=1");
}

TEST_CASE("a headers variant replaces same-named headers case-insensitively") {
  const OutgoingRequest r = Render("create_order", "loud");
  CHECK(Count(r.message, "x-mode") == 1);
  CHECK(Header(r.message, "x-mode") == "loud");
  CHECK(Header(r.message, "X-Extra") == "b-1");
  CHECK(Header(r.message, "Idempotency-Key") == "k");
}

TEST_CASE("a json variant replaces the whole body") {
  const OutgoingRequest r = Render("create_order", "whole");
  CHECK(nlohmann::json::parse(r.message.body) == nlohmann::json{{"biz", "b-1"}, {"other", true}});
  CHECK(Header(r.message, "Content-Type") == "application/json");
}

TEST_CASE("a raw body variant goes with its declared content type") {
  const OutgoingRequest r = Render("create_order", "raw");
  CHECK(r.message.body == "biz=b-1");
  CHECK(Count(r.message, "content-type") == 1);
  CHECK(Header(r.message, "Content-Type") == "application/x-www-form-urlencoded");
}

TEST_CASE("a raw body is sent with no Content-Type unless one is declared") {
  const OutgoingRequest plain = Render("create_note", "");
  CHECK(plain.message.body == "n=b-1");
  CHECK(Count(plain.message, "content-type") == 0);
  const OutgoingRequest typed = Render("create_typed_note", "");
  CHECK(Header(typed.message, "Content-Type") == "text/plain");
}

TEST_CASE("the console's evidence column shortens quoted bodies and keeps the reason") {
  const std::string body = R"({"id": 8, "ref": "biz-a43219d4-6d2d-4f1e-9a77-1c2d3e4f5a6b", "amount": 100, "status": "created", "note": "a long note"})";
  RunResults results;
  ScenarioResult s;
  s.name = "replay-identity";
  s.layer = "client";
  s.verdicts.push_back(Verdict::Invalid(
      "identical_replay", "key k1 (create_order): request #2 (client-0) was 201 " + body +
                              " but the first answer (request #0 (client-0)) was 201 " + body +
                              " [replay marker Idempotent-Replayed: true missing]"));
  results.scenarios.push_back(s);
  std::ostringstream out;
  idemproof::cli::PrintSummaryTable(results, out);
  const std::string table = out.str();
  INFO(table);
  CHECK(table.find("[replay marker Idempotent-Replayed: true missing]") != std::string::npos);
  CHECK(table.find("key k1 (create_order): request #2 (client-0) was 201 {\"id\": 8") != std::string::npos);
  CHECK(table.find("a long note") == std::string::npos);  // the body is what got shorter
}

// Issue 46 item 4: how many answers a verdict set aside, and why, is part of
// what it says: the console shortens the text before it, never the clause.
TEST_CASE("the console's evidence column keeps the set-aside clause") {
  RunResults results;
  ScenarioResult s;
  s.name = "synchronized-burst";
  s.layer = "concurrency";
  std::string words;
  for (int i = 0; i < 30; ++i) words += " duplicate" + std::to_string(i);
  s.verdicts.push_back(Verdict::Valid("in_progress", "32 duplicate(s) overlapped a running request:" + words +
                                                         "; 3 answer(s) set aside: no answer x2, 503 failed on "
                                                         "purpose x1"));
  results.scenarios.push_back(s);
  std::ostringstream out;
  idemproof::cli::PrintSummaryTable(results, out);
  const std::string table = out.str();
  INFO(table);
  CHECK(table.find("...; 3 answer(s) set aside: no answer x2, 503 failed on purpose x1\n") != std::string::npos);
  CHECK(table.find("duplicate29") == std::string::npos);  // the words before it got shorter
}

// Issue 31: a patch that cannot apply (here a path through a scalar, in a
// target built past the loader's check) aborted the whole run with an
// uncaught nlohmann::json::out_of_range. The step now stops its scenario
// with the reason (the run exits 3), and the run goes on.
TEST_CASE("a variant patch that cannot apply stops its scenario with the reason, never aborts the run",
          "[interpreter][variants]") {
  const std::string dir = idemproof::testing::ScratchDir("variant-cannot-apply");
  idemproof::testing::LocalHttpServer server(idemproof::testing::LocalHttpServer::Behaviour::kAnswer);
  TargetDescription target = Target();
  target.base_url = "http://127.0.0.1:" + std::to_string(server.port());
  RequestVariant& v = target.actions.at("create_order").variants.at("fails_retryably");
  v.patch = {{*JsonPath::Parse("$.item.qty.deeper"), 5}};  // $.item.qty is the number 1
  auto scenario = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - cause: retryable_failure\n"
                                "  - send: create_order\nexpect: [one_record]\n",
                                "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(scenario.ok());
  runtime::InterpreterOptions options;
  options.run_namespace = "variant";
  runtime::Interpreter interpreter(target, options);
  runtime::ScenarioRun run = interpreter.Run(*scenario, dir, 0);
  INFO(run.error.ToString() << "\n" << run.history.ToJsonl());
  REQUIRE_FALSE(run.error.ok());
  CHECK(run.error.message().find("variant 'fails_retryably'") != std::string::npos);
  CHECK(run.error.message().find("$.item.qty is a number, not an object") != std::string::npos);
  for (const auto& e : run.history.events())  // the step stopped before sending
    CHECK_FALSE((e.f == event_f::kSend && e.type == EventType::kInvoke));
}

// Issue 31: no exception from a step ends the run. A body that cannot be
// written as JSON (a string that is not UTF-8, which the loader's YAML never
// gives but a target built in code can) throws from nlohmann's dump: the
// step boundary turns it into the scenario's error with the message.
TEST_CASE("an exception thrown inside a step stops its scenario with the message, never aborts the run",
          "[interpreter][variants]") {
  const std::string dir = idemproof::testing::ScratchDir("step-throws");
  idemproof::testing::LocalHttpServer server(idemproof::testing::LocalHttpServer::Behaviour::kAnswer);
  TargetDescription target = Target();
  target.base_url = "http://127.0.0.1:" + std::to_string(server.port());
  RequestVariant& v = target.actions.at("create_order").variants.at("fails_retryably");
  v.patch = {{*JsonPath::Parse("$.note"), std::string("caf\xff")}};
  auto scenario = ParseScenario("layer: gateway\nhunts: x\nsteps:\n  - cause: retryable_failure\n"
                                "  - send: create_order\nexpect: [one_record]\n",
                                "s.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(scenario.ok());
  runtime::InterpreterOptions options;
  options.run_namespace = "throws";
  runtime::Interpreter interpreter(target, options);
  runtime::ScenarioRun run = interpreter.Run(*scenario, dir, 0);
  INFO(run.error.ToString() << "\n" << run.history.ToJsonl());
  REQUIRE_FALSE(run.error.ok());
  CHECK(run.error.message().find("step threw") != std::string::npos);
  CHECK(run.error.message().find("UTF-8") != std::string::npos);
}
