// The egress proxy end to end: `idemproof run` against the reference with its
// payment stub behind the harness's proxy (scenarios/targets/reference-egress.yaml,
// no kill_after_charge hook): kill-after-charge kills the reference through
// the proxy right after the stub answered, catches the no-intent flaw and
// passes the correct service; the egress record probe counts the charges; a
// fault on the egress hop (the provider answers 503) reaches the target.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"

using namespace idemproof::testing;
using nlohmann::json;

namespace {

const std::string kEgressTarget = "/scenarios/targets/reference-egress.yaml";

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

std::string VerdictOf(const json& scenario, const std::string& oracle) {
  for (const auto& v : scenario.at("verdicts"))
    if (v.at("oracle") == oracle) return v.at("status");
  return "(absent)";
}

// Every event of the one history under `runs`.
std::vector<json> HistoryEvents(const std::string& runs) {
  std::vector<json> out;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(runs)) {
    if (entry.path().filename() != "history.jsonl") continue;
    std::istringstream lines(ReadFile(entry.path().string()));
    for (std::string line; std::getline(lines, line);) out.push_back(json::parse(line));
  }
  return out;
}

// The value of the last ok probe event with `label`.
json ProbeValueIn(const std::vector<json>& events, const std::string& label) {
  json v;
  for (const auto& e : events)
    if (e.at("f") == "probe" && e.at("type") == "ok" && e.at("value").value("label", "") == label)
      v = e.at("value").at("value");
  return v;
}

int ChargesReachingTheStub(const std::vector<json>& events) {
  int n = 0;
  for (const auto& e : events)
    n += e.at("process") == "egress" && e.at("value").at("method") == "POST" && e.at("value").at("path") == "/charge";
  return n;
}

}  // namespace

TEST_CASE("kill-after-charge through the egress proxy: the correct reference passes with exactly one charge", "[cli][egress][slow]") {
  const std::string dir = ScratchDir("egress-correct");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/side-effect/kill-after-charge.yaml", "--target",
                              SourceDir() + kEgressTarget, "--out", dir + "/runs", "--json", dir + "/r.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  const json results = json::parse(ReadFile(dir + "/r.json"));
  REQUIRE(results.at("scenarios").size() == 1);
  const json& s = results.at("scenarios")[0];
  INFO(s.dump(1));
  CHECK(VerdictOf(s, "intent_reconciled") == "valid");
  CHECK(VerdictOf(s, "one_record") == "valid");
  CHECK(VerdictOf(s, "faults_fired") == "valid");  // the kill really happened
  const std::vector<json> events = HistoryEvents(dir + "/runs");
  const json charges = ProbeValueIn(events, "charges");
  REQUIRE(charges.is_array());
  CHECK(charges.size() == 1);  // the egress record probe: exactly one charge
  CHECK(charges[0].is_string());  // narrowed to the transaction id by value:
  CHECK(ChargesReachingTheStub(events) == 1);
  bool killed = false;
  for (const auto& e : events) {
    const json& v = e.at("value");
    if (e.at("process") == "proxy" && v.value("fault", "") == "kill-after-answer" && v.value("phase", "") == "injected") {
      killed = true;
      CHECK(v.at("on") == "egress.stub");
      CHECK(v.at("detail").get<std::string>().find("SIGKILLed process group") != std::string::npos);
      REQUIRE(v.at("upstream").size() == 1);
      CHECK(v.at("upstream")[0].at("status") == 201);  // the stub charged and answered
    }
  }
  CHECK(killed);
}

TEST_CASE("kill-after-charge through the egress proxy catches the reference's no-intent flaw", "[cli][egress][flaws][slow]") {
  const std::string dir = ScratchDir("egress-no-intent");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios/side-effect/kill-after-charge.yaml", "--target",
                              SourceDir() + kEgressTarget, "--flaw", "no-intent", "--out", dir + "/runs", "--json",
                              dir + "/r.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 1);
  const json results = json::parse(ReadFile(dir + "/r.json"));
  REQUIRE(results.at("scenarios").size() == 1);
  const json& s = results.at("scenarios")[0];
  INFO(s.dump(1));
  CHECK(VerdictOf(s, "intent_reconciled") == "invalid");
  const std::vector<json> events = HistoryEvents(dir + "/runs");
  CHECK(ProbeValueIn(events, "charges").size() == 2);  // charged again after the restart
  CHECK(ChargesReachingTheStub(events) == 2);
}

TEST_CASE("a fault on the egress hop: the provider's 503 reaches the target, the retry charges once", "[cli][egress][slow]") {
  const std::string dir = ScratchDir("egress-fail");
  WriteFile(dir + "/provider-down.yaml",
            "# hunts: a provider failure stored as the payment's answer\n"
            "layer: side-effect\n"
            "hunts: the provider answers 503 once; the retry must charge\n"
            "faults:\n"
            "  down: {kind: fail, on: egress.stub, status: 503, first: 1, match: {method: POST, path: /charge}}\n"
            "steps:\n"
            "  - fault: down\n"
            "  - send: pay\n"
            "  - send: pay\n"
            "  - probe: charges\n"
            "expect:\n"
            "  - retryable_released\n"
            "  - one_record: {actions: [pay]}\n");
  CliResult r = RunIdemproof({"run", dir + "/provider-down.yaml", "--target", SourceDir() + kEgressTarget, "--out",
                              dir + "/runs", "--json", dir + "/r.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 0);
  const json s = json::parse(ReadFile(dir + "/r.json")).at("scenarios")[0];
  INFO(s.dump(1));
  CHECK(VerdictOf(s, "faults_fired") == "valid");
  CHECK(VerdictOf(s, "retryable_released") == "valid");
  const std::vector<json> events = HistoryEvents(dir + "/runs");
  std::vector<int> statuses;
  for (const auto& e : events)
    if (e.at("f") == "send" && e.at("type") == "ok") statuses.push_back(e.at("value").at("response").at("status"));
  CHECK(statuses == std::vector<int>{503, 201});
  CHECK(ChargesReachingTheStub(events) == 1);  // the failed one never reached the stub
  CHECK(ProbeValueIn(events, "charges").size() == 1);
}
