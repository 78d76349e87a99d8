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
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "model/history_events.h"
#include "runtime/fault_evidence.h"
#include "test_support.h"

using namespace idemproof;
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

// Runs kill-after-charge against `target` (extra: more run options) into
// dir; the one row of its results.json (null when there is none).
struct KillAfterChargeRun {
  CliResult cli;
  json row;
};
KillAfterChargeRun RunKillAfterCharge(const std::string& dir, const std::string& target,
                                      const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"run", SourceDir() + "/scenarios/side-effect/kill-after-charge.yaml", "--target",
                                   target, "--out", dir + "/runs", "--json", dir + "/r.json"};
  args.insert(args.end(), extra.begin(), extra.end());
  KillAfterChargeRun out{RunIdemproof(args, dir), json()};
  const json results = json::parse(ReadFile(dir + "/r.json"));
  if (results.at("scenarios").size() == 1) out.row = results.at("scenarios")[0];
  return out;
}

// reference-egress.yaml with its stub's upstream replaced by `url`.
std::string EgressTargetWithUpstream(const std::string& url) {
  std::string target = ReadFile(SourceDir() + kEgressTarget);
  const std::string upstream = "upstream: \"{{services.stub.url}}\"";
  const auto at = target.find(upstream);
  REQUIRE(at != std::string::npos);
  return target.replace(at, upstream.size(), "upstream: \"" + url + "\"");
}

}  // namespace

TEST_CASE("kill-after-charge through the egress proxy: the correct reference passes with exactly one charge", "[cli][egress][slow]") {
  const std::string dir = ScratchDir("egress-correct");
  const KillAfterChargeRun run = RunKillAfterCharge(dir, SourceDir() + kEgressTarget);
  INFO(Diagnose(run.cli));
  CHECK(run.cli.exit_code == 0);
  REQUIRE(run.row.is_object());
  const json& s = run.row;
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
  // The record keeps the downstream key the reference sent the stub (the
  // egress's key_header, Idempotency-Key by default): effects, not calls.
  for (const auto& e : events)
    if (e.at("process") == "egress" && e.at("value").at("path") == "/charge")
      CHECK(e.at("value").value("key", json()).is_string());
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
  const KillAfterChargeRun run = RunKillAfterCharge(dir, SourceDir() + kEgressTarget, {"--flaw", "no-intent"});
  INFO(Diagnose(run.cli));
  CHECK(run.cli.exit_code == 1);
  REQUIRE(run.row.is_object());
  const json& s = run.row;
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

namespace {

// The history of a `cause: kill_after_charge` through the egress proxy: the
// fault armed, its injector's own event (`injector_event`, absent = none),
// healed with the injector's count of picks.
History CausedKill(const std::optional<json>& injector_event, std::int64_t picked) {
  History h;
  HistoryEvent start = FaultInvoke("kill_after_charge", true, 0);
  start.value["cause"] = "kill_after_charge";
  h.Append(start);
  HistoryEvent started = CompletionOf(start, EventType::kOk);
  started.value["injector"] = {{"injector", "kill-after-answer"}, {"name", "kill_after_charge"}, {"on", "egress.stub"}};
  h.Append(started);
  if (injector_event) h.Append(InjectorEvent(*injector_event));
  HistoryEvent heal = FaultInvoke("kill_after_charge", false, -1);
  heal.value["cause"] = "kill_after_charge";
  h.Append(heal);
  HistoryEvent healed = CompletionOf(heal, EventType::kOk);
  healed.value["injected"] = picked;
  h.Append(healed);
  return h;
}

json KillEvent(const std::string& detail) {
  return {{"fault", "kill-after-answer"}, {"name", "kill_after_charge"}, {"phase", "injected"},
          {"detail", detail},             {"on", "egress.stub"},         {"upstream", json::array()}};
}

}  // namespace

TEST_CASE("faults_fired reads the injector's own record: a kill whose downstream never answered did not fire", "[egress]") {
  Scenario s;
  s.name = "kill-after-charge";
  json refused = KillEvent("connection refused; the downstream did not answer: nothing killed");
  refused["missed"] = "the downstream did not answer (connection refused): nothing killed";
  std::optional<Verdict> v = runtime::FaultsFired(s, CausedKill(refused, 1));
  REQUIRE(v);
  INFO(v->evidence);
  CHECK(v->status == VerdictStatus::kUnknown);
  CHECK(v->evidence.find("nothing killed") != std::string::npos);
  REQUIRE(v->details.tallies.injected.has_value());
  REQUIRE(v->details.tallies.picked.has_value());
  CHECK(v->details.tallies.injected->at("kill_after_charge") == 0);
  CHECK(v->details.tallies.picked->at("kill_after_charge") == 1);
  // Picked, yet no record of the injector at all: nothing shows it acted.
  v = runtime::FaultsFired(s, CausedKill(std::nullopt, 1));
  REQUIRE(v);
  CHECK(v->status == VerdictStatus::kUnknown);
  // The kill that happened is valid, counted from the injector's events.
  v = runtime::FaultsFired(s, CausedKill(KillEvent("SIGKILLed process group 42 after the downstream answered 201"), 1));
  REQUIRE(v);
  CHECK(v->status == VerdictStatus::kValid);
  CHECK(v->evidence == "kill_after_charge fired 1\u00d7");
}

// A sweep of store-error positions: a create on a Redis store makes two
// writes, so the third position does not exist. A fault declared
// `required: false` that found nothing to act on is said as not reached;
// one that must fire, or none firing at all, stays undecided.
TEST_CASE("faults_fired: a required: false fault that found nothing to act on is not reached, not undecided",
          "[egress]") {
  Scenario s;
  s.name = "store-error-on-completion";
  FaultDeclaration first, third;
  first.name = "kill_after_charge";  // the one CausedKill arms and heals
  first.kind = "kill-after-answer";
  third.name = "error_on_write_3";
  third.kind = "store-error";
  third.required = false;
  s.faults[first.name] = first;
  s.faults[third.name] = third;
  auto with_third = [](History h) {
    HistoryEvent start = FaultInvoke("error_on_write_3", true, 0);
    h.Append(start);
    h.Append(CompletionOf(start, EventType::kOk));
    HistoryEvent heal = FaultInvoke("error_on_write_3", false, -1);
    h.Append(heal);
    HistoryEvent healed = CompletionOf(heal, EventType::kOk);
    healed.value["injected"] = 0;
    h.Append(healed);
    return h;
  };
  std::optional<Verdict> v =
      runtime::FaultsFired(s, with_third(CausedKill(KillEvent("SIGKILLed process group 42 after the answer"), 1)));
  REQUIRE(v);
  INFO(v->evidence);
  CHECK(v->status == VerdictStatus::kValid);
  CHECK(v->evidence == "kill_after_charge fired 1\u00d7; not reached (required: false, nothing to act on): "
                       "error_on_write_3");
  // Required, the same miss proves nothing.
  s.faults[third.name].required = true;
  v = runtime::FaultsFired(s, with_third(CausedKill(KillEvent("SIGKILLed process group 42 after the answer"), 1)));
  REQUIRE(v);
  CHECK(v->status == VerdictStatus::kUnknown);
  CHECK(v->evidence.find("error_on_write_3 (store-error) never fired") != std::string::npos);
  // Nothing fired at all: undecided, whatever is optional.
  s.faults.erase(first.name);
  s.faults[third.name].required = false;
  History none;
  v = runtime::FaultsFired(s, with_third(none));
  REQUIRE(v);
  CHECK(v->status == VerdictStatus::kUnknown);
  CHECK(v->evidence.find("no fault fired") != std::string::npos);
}

TEST_CASE("kill-after-charge with an egress upstream that refuses connections: faults_fired is not valid", "[cli][egress][slow]") {
  const std::string dir = ScratchDir("egress-refused");
  // A port bound but never listening: every connection to it is refused, and
  // no other process can take it while the test holds it.
  const int held = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(held >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(held, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(held, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  const std::string dead = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  WriteFile(dir + "/target.yaml", EgressTargetWithUpstream(dead));
  const KillAfterChargeRun run = RunKillAfterCharge(dir, dir + "/target.yaml");
  ::close(held);
  INFO(Diagnose(run.cli));
  CHECK(run.cli.exit_code != 0);
  REQUIRE(run.row.is_object());
  const json& s = run.row;
  INFO(s.dump(1));
  CHECK(VerdictOf(s, "faults_fired") == "unknown");
  bool refused = false;  // the proxy's own event says so
  for (const auto& e : HistoryEvents(dir + "/runs")) {
    const json& v = e.at("value");
    if (e.at("process") == "proxy" && v.value("fault", "") == "kill-after-answer" && v.value("phase", "") == "injected")
      refused = refused || v.at("detail").get<std::string>().find("nothing killed") != std::string::npos;
  }
  CHECK(refused);
}

TEST_CASE("a downstream the target file does not start (no services:): the egress proxy still stands in front of it",
          "[cli][egress][slow]") {
  const std::string dir = ScratchDir("egress-external-downstream");
  // The payment stub runs beside the harness, as a provider's sandbox would:
  // started here, not under the target's services:.
  auto stub = runtime::ChildProcess::Spawn({{BuildDir() + "/payment-stub/idemproof-stub", "--port", "0"},
                                            {}, dir, dir + "/stub.stdout", dir + "/stub.stderr"});
  REQUIRE(stub.ok());
  std::string port;
  for (int i = 0; i < 200 && port.empty(); ++i) {  // at most 10 s
    const std::string out = std::filesystem::exists(dir + "/stub.stdout") ? ReadFile(dir + "/stub.stdout") : "";
    const std::string mark = "listening on 127.0.0.1:";
    if (const auto at = out.find(mark); at != std::string::npos && out.find('\n', at) != std::string::npos)
      port = out.substr(at + mark.size(), out.find('\n', at) - at - mark.size());
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(!port.empty());
  std::string target = EgressTargetWithUpstream("http://127.0.0.1:" + port);
  const auto services = target.find("\nservices:\n");
  const auto egress = target.find("\negress:\n");
  REQUIRE(services != std::string::npos);
  REQUIRE(egress > services);
  target.erase(services, egress - services);
  WriteFile(dir + "/target.yaml", target);
  const KillAfterChargeRun run = RunKillAfterCharge(dir, dir + "/target.yaml");
  INFO(Diagnose(run.cli));
  CHECK(run.cli.exit_code == 0);
  REQUIRE(run.row.is_object());
  const json& s = run.row;
  INFO(s.dump(1));
  CHECK(VerdictOf(s, "intent_reconciled") == "valid");
  CHECK(VerdictOf(s, "faults_fired") == "valid");  // killed through the proxy, after the stub answered
  const std::vector<json> events = HistoryEvents(dir + "/runs");
  CHECK(ChargesReachingTheStub(events) == 1);
  stub->Terminate(std::chrono::seconds(2));
}

// kill-after-downstream (issue 33, class 1): a kill right after each http
// downstream an action calls answered, judged from the egress proxy's own
// record (downstream_once). On reference-egress.yaml, and on the same target
// with no ledger probe at all, the pay action saying `calls: [stub]`: the
// correct reference is clean, no-intent (charges again after the restart) is
// caught by downstream_once either way.
TEST_CASE("kill-after-downstream: one charge per business action, counted from the egress record, with or without "
          "a ledger probe", "[cli][egress][flaws][slow]") {
  const bool ledger = GENERATE(true, false);
  const std::string flaw = GENERATE(as<std::string>{}, "none", "no-intent");
  const std::string dir = ScratchDir("egress-downstream");
  std::string target = SourceDir() + kEgressTarget;
  if (!ledger) {
    std::string text = ReadFile(target);
    const std::string records = "count: \"$.count\"}\n";
    text.insert(text.find(records) + records.size(), "    calls: [stub]\n");
    text.erase(text.find("\nprobes:"));
    target = dir + "/no-ledger.yaml";
    WriteFile(target, text + "\n");
  }
  std::vector<std::string> args = {"run", SourceDir() + "/scenarios/side-effect/kill-after-downstream.yaml",
                                   "--target", target, "--out", dir + "/runs", "--json", dir + "/r.json"};
  if (flaw != "none") args.insert(args.end(), {"--flaw", flaw});
  CliResult r = RunIdemproof(args, dir);
  INFO((ledger ? "with" : "without") << " a ledger, --flaw " << flaw << "\n" << Diagnose(r));
  CHECK(r.exit_code == (flaw == "none" ? 0 : 1));
  const json results = json::parse(ReadFile(dir + "/r.json"));
  REQUIRE(results.at("scenarios").size() == 1);
  const json& s = results.at("scenarios")[0];
  INFO(s.dump(1));
  CHECK(s.at("name") == "kill-after-downstream[pay]");
  CHECK(VerdictOf(s, "downstream_once") == (flaw == "none" ? "valid" : "invalid"));
  CHECK(VerdictOf(s, "faults_fired") == "valid");  // the kill really happened
  CHECK(ChargesReachingTheStub(HistoryEvents(dir + "/runs")) == (flaw == "none" ? 1 : 2));
}
