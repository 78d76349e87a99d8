// The injectors wired into the runtime, against the real reference service:
// the FaultRunner adapter (a fault routes the client through the chaos proxy,
// its events land in the history, the proxy is healed at the end of the
// scenario even when a step fails), the last-byte BurstSender (spreads
// recorded), a fault that never fires (the scenario is not a pass), and the
// CLI's reports (`run` writes report.html/report.md; `idemproof report` in
// every format).
#include <catch2/catch.hpp>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "clients/http_client.h"
#include "model/history_events.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/injector_faults.h"
#include "runtime/interpreter.h"
#include "runtime/last_byte_burst.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The reference service alone (no helper services), one process per run.
TargetDescription MinimalReference() {
  const std::string yaml = R"(
name: reference-minimal
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: [")" + ReferenceExe() + R"(", "--port", "0", "--db", "{{run_dir}}/ref.db", "--report-arrival"]
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
  flaw_args: ["--flaw", "{{flaw}}"]
idempotency: {key_header: Idempotency-Key, replay: {header: Idempotent-Replayed, value: "true"}}
arrival_header: X-Arrival-Ns
actions:
  create_order:
    role: create
    request: {method: POST, path: /orders, headers: {X-Request-Id: "{{uuid}}"},
              json: {biz_no: "{{biz}}", sku: "sku-{{run}}", qty: 1, amount: 100}}
    records: {request: {method: GET, path: "/orders?biz_no={{biz}}"}, count: "$.count"}
)";
  auto t = ParseTarget(yaml, "minimal.yaml");
  REQUIRE(t.ok());
  return *t;
}

Scenario ScenarioOf(const std::string& yaml) {
  auto s = ParseScenario(yaml, "scenario.yaml", BuiltinOracles().Vocabulary());
  INFO((s.ok() ? std::string() : s.status().ToString()));
  REQUIRE(s.ok());
  return *s;
}

std::vector<const HistoryEvent*> Events(const History& h, const std::string& process, const std::string& f) {
  std::vector<const HistoryEvent*> out;
  for (const auto& e : h.events()) {
    if (e.process == process && e.f == f) out.push_back(&e);
  }
  return out;
}

// True when something accepts TCP connections at host:port.
bool Listening(const std::string& endpoint) {
  runtime::HttpClient client;
  runtime::OutgoingRequest r;
  r.set_url("http://" + endpoint + "/healthz");
  r.timeout = std::chrono::milliseconds(2000);
  return client.send(r).outcome != runtime::HttpOutcome::kNotSent;
}

std::string ProxyOf(const History& h) {
  for (const auto* e : Events(h, event_process::kNemesis, event_f::kFault)) {
    if (e->type == EventType::kOk && e->value.contains("injector")) return e->value["injector"].value("proxy", "");
  }
  return "";
}

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

std::string TargetFile(const std::string& name) { return SourceDir() + "/scenarios/targets/" + name; }

}  // namespace

TEST_CASE("a fault routes the client through the chaos proxy and its events land in the history", "[injectors-e2e][slow]") {
  const TargetDescription target = MinimalReference();
  runtime::InjectorFaults faults;
  runtime::InterpreterOptions options;
  options.faults = &faults;
  runtime::Interpreter interpreter(target, options);
  const Scenario scenario = ScenarioOf(R"(
layer: gateway
hunts: a lost answer
faults:
  lost: {kind: drop-response, first: 1}
steps:
  - fault: lost
  - send: create_order
  - send: create_order
  - heal: lost
  - send: create_order
expect: [one_record]
)");
  REQUIRE(interpreter.NeedsOf(scenario).empty());
  const std::string dir = ScratchDir("fault-route");
  runtime::ScenarioRun run = interpreter.Run(scenario, dir, 0);
  REQUIRE(run.error.ok());
  CHECK(run.fault_counts.at("lost") == 1);

  // The first two sends went to the proxy, the third to the target itself.
  const std::string proxy = ProxyOf(run.history);
  REQUIRE_FALSE(proxy.empty());
  std::vector<std::string> urls;
  std::vector<EventType> completions;
  for (const auto& e : run.history.events()) {
    if (e.f != event_f::kSend) continue;
    if (e.type == EventType::kInvoke) urls.push_back(e.value["request"].value("url", ""));
    else completions.push_back(e.type);
  }
  REQUIRE(urls.size() == 3);
  CHECK(urls[0].find(proxy) != std::string::npos);
  CHECK(urls[1].find(proxy) != std::string::npos);
  CHECK(urls[2].find(proxy) == std::string::npos);
  REQUIRE(completions.size() == 3);
  CHECK(completions[0] == EventType::kInfo);  // the dropped answer: outcome unknown
  CHECK(completions[1] == EventType::kOk);

  // The firing, with the answer the client never saw.
  bool swallowed = false;
  for (const auto* e : Events(run.history, event_process::kProxy, event_f::kFault)) {
    if (e->value.value("phase", "") != "injected") continue;
    REQUIRE(e->value["upstream"].size() == 1);
    CHECK(e->value["upstream"][0]["status"] == 201);
    CHECK(e->value["upstream"][0].contains("at_ns"));
    CHECK(e->value.value("name", "") == "lost");
    swallowed = true;
  }
  CHECK(swallowed);
  // Healed: nothing listens on the proxy's port any more.
  CHECK_FALSE(Listening(proxy));
  CHECK_FALSE(faults.ClientBaseUrl().has_value());

  // The oracles judge the retry against the swallowed answer.
  const auto verdicts = BuiltinOracles().CheckAll(ScenarioOf(R"(
layer: gateway
hunts: a lost answer
steps: [{send: create_order}]
expect: [one_record, identical_replay]
)"), target, run.history);
  for (const auto& v : verdicts) {
    INFO(v.oracle << ": " << v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
  }
}

TEST_CASE("the proxy is healed at the end of the scenario even when a step fails", "[injectors-e2e][slow]") {
  const TargetDescription target = MinimalReference();
  runtime::InjectorFaults faults;
  runtime::InterpreterOptions options;
  options.faults = &faults;
  runtime::Interpreter interpreter(target, options);
  // `probe: nope`: the target declares no such probe, so the step fails (the
  // session would have refused it; the interpreter alone runs it).
  const Scenario scenario = ScenarioOf(R"(
layer: gateway
hunts: nothing
faults:
  slow: {kind: delay, duration: 10ms}
steps:
  - fault: slow
  - send: create_order
  - probe: nope
  - send: create_order
expect: [one_record]
)");
  runtime::ScenarioRun run = interpreter.Run(scenario, ScratchDir("fault-heal-on-error"), 0);
  REQUIRE_FALSE(run.error.ok());
  CHECK(run.error.message().find("nope") != std::string::npos);
  const std::string proxy = ProxyOf(run.history);
  REQUIRE_FALSE(proxy.empty());
  CHECK_FALSE(Listening(proxy));
  CHECK_FALSE(faults.ClientBaseUrl().has_value());
  // The heal is in the history, with the count, after the failed step.
  bool healed = false;
  for (const auto* e : Events(run.history, event_process::kNemesis, event_f::kFault)) {
    if (e->type == EventType::kOk && e->value.value("phase", "") == "heal") {
      healed = true;
      CHECK(e->value.value("injected", -1) == 1);
    }
  }
  CHECK(healed);
  CHECK(run.fault_counts.at("slow") == 1);

  // The same runner serves the next scenario run with a fresh proxy.
  runtime::ScenarioRun again = interpreter.Run(ScenarioOf(R"(
layer: gateway
hunts: nothing
faults:
  slow: {kind: delay, duration: 1ms}
steps: [{fault: slow}, {send: create_order}]
expect: [one_record]
)"), ScratchDir("fault-heal-again"), 1);
  CHECK(again.error.ok());
  CHECK(again.fault_counts.at("slow") == 1);
  CHECK_FALSE(Listening(ProxyOf(again.history)));
}

TEST_CASE("a bad fault option is an error of the step, the fault never armed", "[injectors-e2e]") {
  const TargetDescription target = MinimalReference();
  runtime::InjectorFaults faults;
  FaultDeclaration bad{"slow", "delay", "", json{{"durration", "1s"}}, {}};
  Status st = faults.Validate(bad);
  CHECK(st.code() == StatusCode::kInvalidConfig);
  CHECK(st.message().find("duration") != std::string::npos);
  FaultDeclaration good{"slow", "delay", "", json{{"duration", "1s"}}, {}};
  CHECK(faults.Validate(good).ok());
  CHECK(faults.Supports("hedge"));
  CHECK_FALSE(faults.Supports("sigkill"));
}

TEST_CASE("a last-byte burst sends every request and records its spread on both sides", "[injectors-e2e][slow]") {
  const TargetDescription target = MinimalReference();
  runtime::LastByteBurst burst;
  runtime::InterpreterOptions options;
  options.last_byte_burst = &burst;
  runtime::Interpreter interpreter(target, options);
  const Scenario scenario = ScenarioOf(R"(
layer: concurrency
hunts: a race
steps:
  - burst: create_order
    n: 8
    mode: last_byte
expect: [one_record, in_progress]
)");
  REQUIRE(interpreter.NeedsOf(scenario).empty());
  runtime::ScenarioRun run = interpreter.Run(scenario, ScratchDir("last-byte"), 0);
  REQUIRE(run.error.ok());
  int answered = 0;
  for (const auto& e : run.history.events()) {
    if (e.f == event_f::kBurst && e.type == EventType::kOk) ++answered;
  }
  CHECK(answered == 8);
  const auto notes = Events(run.history, event_process::kHarness, event_f::kNote);
  const HistoryEvent* note = nullptr;
  for (const auto* e : notes) {
    if (e->value.contains("burst")) note = e;
  }
  REQUIRE(note != nullptr);
  const json& b = note->value["burst"];
  CHECK(b["n"] == 8);
  CHECK(b["mode"] == "last_byte");
  CHECK(b["arrivals_reported"] == 8);
  CHECK(b["harness_spread_us"].is_number());
  CHECK(b["target_spread_us"].is_number());
  for (const auto& v : BuiltinOracles().CheckAll(scenario, target, run.history)) {
    INFO(v.oracle << ": " << v.evidence);
    CHECK(v.status == VerdictStatus::kValid);
  }
}

TEST_CASE("a declared fault that never fired makes the scenario undecided, not a pass", "[injectors-e2e][cli][slow]") {
  const std::string dir = ScratchDir("never-fired");
  fs::create_directories(dir + "/suite");
  WriteFile(dir + "/suite/idle-fault.yaml", R"(# the fault matches no request the scenario sends
layer: gateway
hunts: nothing, on purpose
faults:
  idle: {kind: drop-response, match: {path: /never}}
steps:
  - fault: idle
  - send: create_order
  - send: create_order
  - heal: idle
expect: [one_record, identical_replay]
)");
  CliResult r = RunIdemproof({"run", dir + "/suite", "--target", TargetFile("reference.yaml"), "--out",
                              dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 3);
  json results = json::parse(ReadFile(dir + "/results.json"));
  const json& s = results.at("scenarios").at(0);
  CHECK(s.at("fault_counts").at("idle") == 0);
  REQUIRE(s.at("warnings").size() == 1);
  bool unknown = false;
  for (const auto& v : s.at("verdicts")) {
    if (v.at("oracle") == "faults_fired") {
      unknown = v.at("status") == "unknown";
      CHECK(v.at("evidence").get<std::string>().find("idle") != std::string::npos);
      CHECK(v.at("evidence").get<std::string>().find("never fired") != std::string::npos);
    } else {
      CHECK(v.at("status") == "valid");  // the oracles held; the scenario still proves nothing
    }
  }
  CHECK(unknown);
  CHECK(r.out.find("never fired") != std::string::npos);
  // `check` recomputes it offline.
  CliResult c = RunIdemproof({"check", dir + "/runs/latest"}, dir);
  CHECK(c.exit_code == 3);
  CHECK(c.out.find("faults_fired") != std::string::npos);
}

TEST_CASE("run writes report.html and report.md, report renders every format", "[injectors-e2e][cli][slow]") {
  const std::string dir = ScratchDir("reports");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", TargetFile("reference.yaml"),
                              "--filter", "double-submit", "--flaw", "request-id-key", "--out", dir + "/runs"},
                             dir);
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 1);
  const fs::path run = fs::canonical(dir + "/runs/latest");
  CHECK(fs::exists(run / "report.html"));
  CHECK(fs::exists(run / "report.md"));
  CHECK(r.out.find((run / "report.html").string()) != std::string::npos);
  CHECK(r.out.find((run / "report.md").string()) != std::string::npos);
  CHECK(ReadFile((run / "report.html").string()).find("double-submit") != std::string::npos);

  SECTION("html and md to stdout") {
    CliResult html = RunIdemproof({"report", run.string(), "--format", "html"}, dir);
    CHECK(html.exit_code == 0);
    CHECK(html.out.find("<html") != std::string::npos);
    CHECK(html.out.find("one_record") != std::string::npos);
    CliResult md = RunIdemproof({"report", run.string(), "--format", "md"}, dir);
    CHECK(md.exit_code == 0);
    CHECK(md.out.find("### double-submit") != std::string::npos);
    CHECK(md.out.find("report-timelines/") != std::string::npos);
  }
  SECTION("junit and json to files") {
    CliResult junit = RunIdemproof({"report", run.string(), "--format", "junit", "--out", dir + "/j.xml"}, dir);
    CHECK(junit.exit_code == 0);
    boost::property_tree::ptree tree;
    REQUIRE_NOTHROW(boost::property_tree::read_xml(dir + "/j.xml", tree));
    CHECK(ReadFile(dir + "/j.xml").find("<failure") != std::string::npos);
    CliResult js = RunIdemproof({"report", run.string(), "--format", "json", "--out", dir + "/r.json"}, dir);
    CHECK(js.exit_code == 0);
    json doc = json::parse(ReadFile(dir + "/r.json"));
    CHECK(doc.at("exit_code") == 1);
    CliResult md = RunIdemproof({"report", run.string(), "--format", "md", "--out", dir + "/review.md"}, dir);
    CHECK(md.exit_code == 0);
    CHECK(fs::exists(dir + "/review.md"));
    CHECK(fs::is_directory(dir + "/review-timelines"));
  }
  SECTION("bad usage is exit 2") {
    CliResult bad = RunIdemproof({"report", run.string(), "--format", "pdf"}, dir);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("pdf") != std::string::npos);
    CliResult missing = RunIdemproof({"report", dir + "/no-such-run"}, dir);
    CHECK(missing.exit_code == 2);
  }
}

TEST_CASE("a fault block with a bad option stops lint and run with exit 2 and file:line:column",
          "[injectors-e2e][cli]") {
  const std::string dir = ScratchDir("bad-fault");
  fs::create_directories(dir + "/suite");
  WriteFile(dir + "/suite/bad.yaml", R"(layer: gateway
hunts: a typo in a fault's options
faults:
  slow: {kind: delay, durration: 1s}
steps: [{fault: slow}, {send: create_order}]
expect: [one_record]
)");
  CliResult lint = RunIdemproof({"lint", dir + "/suite"}, dir);
  INFO(Diagnose(lint));
  CHECK(lint.exit_code == 2);
  CHECK(lint.err.find("bad.yaml:4:3: fault slow: delay: 'duration' is required") != std::string::npos);
  CliResult run = RunIdemproof({"run", dir + "/suite", "--target", TargetFile("reference.yaml"), "--out", dir + "/runs"},
                               dir);
  CHECK(run.exit_code == 2);
  CHECK_FALSE(fs::exists(dir + "/runs"));
}
