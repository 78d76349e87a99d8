// The cluster layer end to end (real processes): scenarios/cluster against
// the reference on three instances (scenarios/targets/reference-cluster.yaml,
// one SQLite file shared by three processes, the harness their balancer):
// the correct service passes and every request names its instance; the
// flaw instance-local-claims is caught; on the one-instance reference.yaml
// the layer is not applicable, with the reason. And the whole suite on three
// instances over one PostgreSQL store.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.h"

using namespace idemproof::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string TargetFile(const std::string& name) { return SourceDir() + "/scenarios/targets/" + name; }
std::string ClusterLayer() { return SourceDir() + "/scenarios/cluster"; }

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

// scenario folder -> the instances its send/burst invokes went to ("" = a
// request without value.instance).
std::map<std::string, std::multiset<std::string>> InstancesByScenario(const fs::path& run) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const auto& entry : fs::recursive_directory_iterator(run)) {
    if (entry.path().filename() != "history.jsonl") continue;
    std::istringstream lines(ReadFile(entry.path().string()));
    std::string line;
    while (std::getline(lines, line)) {
      const json e = json::parse(line);
      if (e.value("type", "") != "invoke") continue;
      const std::string f = e.value("f", "");
      if (f != "send" && f != "burst") continue;
      const json& v = e["value"];
      out[entry.path().parent_path().filename().string()].insert(
          v.contains("instance") && v["instance"].is_string() ? v["instance"].get<std::string>() : "");
    }
  }
  return out;
}

std::set<std::string> InvalidOracles(const json& results, const std::string& scenario) {
  std::set<std::string> out;
  for (const auto& s : results.at("scenarios")) {
    if (s.value("scenario", s.value("name", "")) != scenario) continue;
    for (const auto& v : s.at("verdicts"))
      if (v.at("status") == "invalid") out.insert(v.at("oracle").get<std::string>());
  }
  return out;
}

// `idemproof run PATH --target TARGET` into dir, which must hold: exit 0
// and no verdict but valid and not_applicable.
VerdictTally RunHolding(const std::string& dir, const std::string& path, const std::string& target) {
  CliResult r = RunIdemproof(
      {"run", path, "--target", TargetFile(target), "--out", dir + "/runs", "--json", dir + "/results.json"}, dir);
  INFO(Diagnose(r));
  REQUIRE(r.exit_code == 0);
  const VerdictTally tally = TallyVerdicts(ReadFile(dir + "/results.json"));
  INFO(tally.ProblemText());
  CHECK(tally.problems.empty());
  return tally;
}

}  // namespace

TEST_CASE("the cluster layer passes the correct reference on three instances, every request naming its instance",
          "[cli][cluster][slow]") {
  const std::string dir = ScratchDir("cluster-correct");
  const VerdictTally tally = RunHolding(dir, ClusterLayer(), "reference-cluster.yaml");
  CHECK(tally.not_applicable == 0);  // every cluster scenario ran: three instances are enough
  CHECK(tally.valid >= 10);

  const auto instances = InstancesByScenario(fs::canonical(dir + "/runs/latest"));
  REQUIRE(instances.size() >= 3);
  const std::set<std::string> known = {"main", "instance-2", "instance-3"};
  for (const auto& [scenario, names] : instances) {
    INFO(scenario);
    for (const auto& name : names) CHECK(known.count(name) == 1);  // never a request without its instance
  }
  // The burst of 6 went 2 to each of the three; the retry went to another instance than the first.
  const auto& burst = instances.at("burst-across-instances.create_order");
  CHECK(burst.count("main") >= 2);
  CHECK(burst.count("instance-2") >= 2);
  CHECK(burst.count("instance-3") >= 2);
  const auto& lost = instances.at("lost-answer-other-instance.create_order");
  CHECK(lost.count("main") >= 1);
  CHECK(lost.size() > lost.count("main"));
}

TEST_CASE("the whole suite passes the reference on PostgreSQL with three instances", "[cli][cluster][postgres][slow]") {
  // reference-postgres-cluster.yaml: three processes on one PostgreSQL store
  // the run starts itself (scripts/postgres-service.sh), the harness their balancer.
  const std::string dir = ScratchDir("cluster-postgres-suite");
  const VerdictTally tally = RunHolding(dir, SourceDir() + "/scenarios", "reference-postgres-cluster.yaml");
  CHECK(tally.valid >= 60);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  for (const auto& s : results.at("scenarios")) {
    if (s.value("scenario", s.value("name", "")) != "stream-kill-before-ack") continue;
    // Its premise needs one consumer: said, not judged.
    CHECK(s.at("verdicts").at(0).at("status") == "not_applicable");
    CHECK(s.at("verdicts").at(0).at("evidence").get<std::string>().find("at most 1 instance") != std::string::npos);
  }
  // Single-instance scenarios too went through the balancer to every instance.
  std::multiset<std::string> all;
  for (const auto& [scenario, names] : InstancesByScenario(fs::canonical(dir + "/runs/latest"))) all.insert(names.begin(), names.end());
  CHECK(all.count("instance-2") > 0);
  CHECK(all.count("instance-3") > 0);
}

TEST_CASE("the flaw instance-local-claims is caught by the cluster layer", "[cli][cluster][flaws][slow]") {
  const std::string dir = ScratchDir("cluster-flaw");
  CliResult r = RunIdemproof({"run", ClusterLayer(), "--target", TargetFile("reference-cluster.yaml"), "--flaw",
                              "instance-local-claims", "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  CHECK(InvalidOracles(results, "burst-across-instances").count("one_record") == 1);
  CHECK(InvalidOracles(results, "lost-answer-other-instance").count("one_record") == 1);
  CHECK(InvalidOracles(results, "kill-instance-takeover").count("lease_recovery") == 1);
  // The evidence names the instance of each request.
  CHECK(ReadFile(dir + "/runs/latest/report.md").find(", instance-") != std::string::npos);
}

TEST_CASE("on a one-instance target the cluster layer is not applicable, saying it needs two instances",
          "[cli][cluster][slow]") {
  const std::string dir = ScratchDir("cluster-one");
  CliResult r = RunIdemproof({"run", ClusterLayer(), "--target", TargetFile("reference.yaml"), "--out",
                              dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  // Every row not applicable: nothing was tested, exit 3 (never a green run).
  CHECK(r.exit_code == 3);
  CHECK(r.out.find("4 of 4 row(s) not applicable: 4 needs a target with at least 2 instances") != std::string::npos);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  int rows = 0;
  for (const auto& s : results.at("scenarios")) {
    ++rows;
    for (const auto& v : s.at("verdicts")) {
      CHECK(v.at("status") == "not_applicable");
      CHECK(v.dump().find("needs a target with at least 2 instances") != std::string::npos);
    }
  }
  CHECK(rows == 4);
}

TEST_CASE("instance-local-claims passes every single-instance scenario, only scenarios with two processes catch it",
          "[cli][cluster][flaws][slow]") {
  // The whole suite on the one-instance reference.yaml: the cluster layer
  // is not applicable there, and of the rest only paused-owner-takeover —
  // which spawns a second instance on the same store — sees the flaw.
  const std::string dir = ScratchDir("cluster-flaw-single");
  CliResult r = RunIdemproof({"run", SourceDir() + "/scenarios", "--target", TargetFile("reference.yaml"), "--flaw",
                              "instance-local-claims", "--out", dir + "/runs", "--json", dir + "/results.json"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 1);
  const json results = json::parse(ReadFile(dir + "/results.json"));
  std::set<std::string> catching;
  for (const auto& s : results.at("scenarios")) {
    for (const auto& v : s.at("verdicts")) {
      CHECK(v.at("status") != "unknown");
      if (v.at("status") == "invalid") catching.insert(s.value("scenario", s.value("name", "")));
    }
  }
  CHECK(catching == std::set<std::string>{"paused-owner-takeover"});
}
