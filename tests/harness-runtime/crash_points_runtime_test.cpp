// Issue 33, classes 1 and 2, in the interpreter against a loopback server:
// {{slow_ms}} is the declared lease x 1.5 when a request goes, and a
// deliver's and a batch run's `variant:` change the request sent (recorded as
// "variant" on its events).
#include <catch2/catch.hpp>

#include "local_http_server.h"
#include "model/history_events.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"
#include "test_support.h"

using namespace idemproof;
using idemproof::testing::LocalHttpServer;

namespace {

std::string TargetText(int port, const std::string& lease) {
  return R"(name: shop
base_url: "http://127.0.0.1:)" +
         std::to_string(port) + R"("
idempotency: {lease: )" + lease + R"(}
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, json: {biz: "{{biz}}"}}
    variants:
      slow_past_lease: {query: {slow_ms: "{{slow_ms}}"}}
messages:
  credit:
    push: {method: POST, path: /inbox, json: {id: "{{key}}"}}
    variants:
      slow: {query: {slow_ms: "1500"}}
batch:
  run: {method: POST, path: "/jobs/{{job}}/run", body: '{"from": {{from}}, "to": {{to}}}'}
  result: {request: {path: "/jobs/{{job}}/result"}, rows: "$.rows", row_id: "$.id"}
  variants:
    slow: {query: {slow_ms: "150"}}
)";
}

// The POST request lines the server received, e.g. "POST /orders?slow_ms=3000 HTTP/1.1".
std::vector<std::string> RequestLines(const LocalHttpServer& server) {
  std::vector<std::string> out;
  for (const auto& raw : server.received())
    if (raw.rfind("POST ", 0) == 0) out.push_back(raw.substr(0, raw.find("\r\n")));
  return out;
}

runtime::ScenarioRun Run(const TargetDescription& target, const std::string& steps, const std::string& name) {
  auto scenario = ParseScenario("layer: side-effect\nhunts: x\nsteps:\n" + steps + "expect: [one_record]\n", "s.yaml",
                                BuiltinOracles().Vocabulary());
  REQUIRE(scenario.ok());
  runtime::InterpreterOptions options;
  options.run_namespace = name;
  runtime::Interpreter interpreter(target, options);
  return interpreter.Run(*scenario, idemproof::testing::ScratchDir(name), 0);
}

}  // namespace

TEST_CASE("{{slow_ms}} is the declared lease x 1.5 when the request goes", "[interpreter][variants]") {
  for (const auto& [lease, expected] : {std::pair<std::string, std::string>{"2s", "3000"}, {"800ms", "1200"}}) {
    LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
    auto target = ParseTarget(TargetText(server.port(), lease), "t.yaml");
    REQUIRE(target.ok());
    runtime::ScenarioRun run = Run(*target,
                                   "  - cause: slow_past_lease\n  - send: create_order\n"
                                   "  - send: create_order\n    key: k2\n",
                                   "slow-ms-" + lease);
    INFO(run.error.ToString() << "\n" << run.history.ToJsonl());
    REQUIRE(run.error.ok());
    const auto lines = RequestLines(server);
    REQUIRE(lines.size() >= 2);
    CHECK(lines[0] == "POST /orders?slow_ms=" + expected + " HTTP/1.1");
    CHECK(lines[1] == "POST /orders HTTP/1.1");  // another key: no variant
  }
}

TEST_CASE("a deliver's and a batch run's variant change the request sent, recorded as variant",
          "[interpreter][variants]") {
  LocalHttpServer server(LocalHttpServer::Behaviour::kAnswer);
  auto target = ParseTarget(TargetText(server.port(), "2s"), "t.yaml");
  REQUIRE(target.ok());
  runtime::ScenarioRun run = Run(*target,
                                 "  - deliver: credit\n    variant: slow\n    background: true\n  - join\n"
                                 "  - deliver: credit\n"
                                 "  - run_batch: j1\n    from: 0\n    to: 10\n    variant: slow\n",
                                 "deliver-batch-variants");
  INFO(run.error.ToString() << "\n" << run.history.ToJsonl());
  REQUIRE(run.error.ok());
  const auto lines = RequestLines(server);
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0] == "POST /inbox?slow_ms=1500 HTTP/1.1");
  CHECK(lines[1] == "POST /inbox HTTP/1.1");
  CHECK(lines[2].rfind("POST /jobs/", 0) == 0);
  CHECK(lines[2].find("/run?slow_ms=150 HTTP/1.1") != std::string::npos);
  int variants = 0;
  for (const auto& e : run.history.events())
    if ((e.f == event_f::kDeliver || e.f == event_f::kBatch) && e.type == EventType::kInvoke)
      variants += e.value.value("variant", "") == "slow";
  CHECK(variants == 2);
}
