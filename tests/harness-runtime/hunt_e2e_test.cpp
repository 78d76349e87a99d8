// The hunt phase of `idemproof run` (harness/hunt/hunt.h, issue 46 item 1):
// its generated explore file, its budget, and end to end against the
// reference service: clean on the correct one over several seeds, reference
// flaws caught by the hunt alone (the suite given is one send that catches
// neither), the repro replayed, `--hunt 0` as before, the same seed drawing
// the same workloads.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "explore/explore_spec.h"
#include "hunt/hunt.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/injector_faults.h"
#include "test_support.h"

namespace fs = std::filesystem;
using namespace idemproof;
using namespace idemproof::testing;

namespace {

std::string ReferenceTarget() { return SourceDir() + "/scenarios/targets/reference.yaml"; }

// A suite of one plain send: it judges one_record, which no flaw the hunt
// tests here breaks with a single request, so what is caught is the hunt's.
std::string OneSendSuite(const std::string& dir) {
  const std::string path = dir + "/one-send.yaml";
  WriteFile(path,
            "name: one-send\n"
            "layer: gateway\n"
            "hunts: a single send, which breaks no oracle alone\n"
            "for_each:\n"
            "  create: {role: create}\n"
            "steps:\n"
            "  - send: $create\n"
            "    key: k1\n"
            "    biz: b1\n"
            "expect: [one_record]\n");
  return path;
}

nlohmann::json Results(const std::string& runs) {
  return nlohmann::json::parse(ReadFile(runs + "/latest/results.json"));
}

// `idemproof run ONE-SEND --target reference.yaml --seed S [extra...]`.
CliResult RunWithHunt(const std::string& dir, int seed, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run", OneSendSuite(dir), "--target", ReferenceTarget(), "--out", dir + "/runs",
                                   "--seed", std::to_string(seed)};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunIdemproof(args, dir, std::chrono::seconds(240));
}

// The trial plans of a hunt, in order (explore's plans.jsonl).
std::vector<std::string> TrialPlans(const std::string& hunt_run_dir) {
  std::vector<std::string> plans;
  std::ifstream in(hunt_run_dir + "/plans.jsonl");
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["phase"] == "trials") plans.push_back(j["plan"].get<std::string>());
  }
  return plans;
}

// Five seeds of the default hunt against `flaw`; the seeds whose hunt
// section says violation. The suite (one send) must not catch it itself.
std::vector<int> SeedsCaught(const std::string& flaw, std::string* a_repro_command, std::string* its_oracle) {
  std::vector<int> caught;
  for (int seed = 1; seed <= 5; ++seed) {
    const std::string dir = ScratchDir("hunt-" + flaw);
    CliResult r = RunWithHunt(dir, seed, {"--flaw", flaw, "--hunt", hunt::kDefaultBudget});
    INFO(flaw << " seed " << seed << "\n" << r.out << r.err);
    nlohmann::json results = Results(dir + "/runs");
    for (const auto& s : results["scenarios"])
      for (const auto& v : s["verdicts"]) CHECK(v["status"] != "invalid");  // the suite alone misses it
    const nlohmann::json& h = results["hunt"];
    REQUIRE(h.is_object());
    CHECK(h["budget"] == "1m");
    CHECK(h["workloads"].get<int>() > 0);
    CHECK(h["operations"].get<int>() >= h["workloads"].get<int>());
    if (h["outcome"] == "violation") {
      CHECK(r.exit_code == 1);
      CHECK(r.out.find("hunt (1m budget)") != std::string::npos);
      CHECK(fs::exists(h["failure"]["repro_file"].get<std::string>()));
      CHECK(h["failure"]["minimal_ops"].get<int>() <= h["failure"]["first_failure_ops"].get<int>());
      caught.push_back(seed);
      // The last console lines and both reports name the hunt's violation and its replay.
      const std::string replay = h["failure"]["repro_command"].get<std::string>();
      CHECK(r.out.find("\nsuite: exit 3; hunt (1m): VIOLATION") != std::string::npos);
      CHECK(r.out.find("\nrun: exit 1\n") != std::string::npos);
      CHECK(ReadFile(dir + "/runs/latest/report.md").find(replay) != std::string::npos);
      CHECK(ReadFile(dir + "/runs/latest/report.html").find("<section id=\"hunt\">") != std::string::npos);
      CHECK(Results(dir + "/runs")["exit_code"] == 1);
      // `check` on the run directory takes the hunt's verdict as recorded:
      // a run that failed only in its hunt never checks clean.
      CliResult checked = RunIdemproof({"check", dir + "/runs/latest"}, dir);
      INFO(checked.out << checked.err);
      CHECK(checked.exit_code == 1);
      CHECK(checked.out.find("hunt: violation as recorded") != std::string::npos);
      if (a_repro_command->empty()) {
        *a_repro_command = h["failure"]["repro_command"].get<std::string>();
        *its_oracle = h["failure"]["invalid"][0]["oracle"].get<std::string>();
      }
    }
  }
  return caught;
}

// Runs a repro command the hunt printed ("idemproof run REPRO --target T
// --flaw F --hunt 0"): exit 1 with `oracle` invalid in its results.
void ReplayReproduces(const std::string& command, const std::string& oracle) {
  std::istringstream words(command);
  std::vector<std::string> args;
  for (std::string w; words >> w;) args.push_back(w);
  REQUIRE(args.size() > 2);
  REQUIRE(args[0] == "idemproof");
  REQUIRE(args.back() == "0");  // the replay hunts nothing of its own
  args.erase(args.begin());
  const std::string dir = ScratchDir("hunt-replay");
  args.insert(args.end(), {"--out", dir + "/runs"});
  CliResult r = RunIdemproof(args, dir);
  INFO(command << "\n" << r.out << r.err);
  CHECK(r.exit_code == 1);
  nlohmann::json results = Results(dir + "/runs");
  CHECK_FALSE(results.contains("hunt"));
  bool invalid = false;
  for (const auto& s : results["scenarios"])
    for (const auto& v : s["verdicts"]) invalid = invalid || (v["oracle"] == oracle && v["status"] == "invalid");
  CHECK(invalid);
}

}  // namespace

TEST_CASE("the hunt budget reads durations and 0 as no hunt", "[hunt]") {
  CHECK_FALSE(*hunt::ParseHuntBudget("0"));
  CHECK(**hunt::ParseHuntBudget("30s") == std::chrono::seconds(30));
  CHECK(**hunt::ParseHuntBudget("10m") == std::chrono::minutes(10));
  CHECK(**hunt::ParseHuntBudget(hunt::kDefaultBudget) == std::chrono::seconds(60));
  for (const char* bad : {"", "ten", "10", "-5s", "1.5m"}) {
    auto parsed = hunt::ParseHuntBudget(bad);
    INFO(bad);
    CHECK_FALSE(parsed.ok());
  }
}

TEST_CASE("the hunt's exit code: a violation over undecided over the suite's", "[hunt]") {
  CHECK(CombineExitCodes(0, 0) == 0);
  CHECK(CombineExitCodes(0, 1) == 1);
  CHECK(CombineExitCodes(3, 1) == 1);
  CHECK(CombineExitCodes(0, 3) == 3);
  CHECK(CombineExitCodes(1, 3) == 1);
  CHECK(CombineExitCodes(2, 0) == 2);
  hunt::HuntReport not_run;
  not_run.not_run = "the target offers nothing to generate";
  CHECK(not_run.ExitCode() == 3);
  CHECK(not_run.ToJson()["outcome"] == "not_run");
  CHECK(hunt::HuntReport{}.ExitCode() == 3);  // nothing ran: no pass
}

TEST_CASE("the hunt's generated file covers the whole target and loads as an explore file", "[hunt]") {
  auto target = LoadTargetFile(ReferenceTarget(), "");
  REQUIRE(target.ok());
  hunt::HuntSpecText text = hunt::HuntSpecYaml(*target);
  INFO(text.yaml);
  // Every oracle without a required parameter judges every workload.
  for (const char* o : {"one_record", "identical_replay", "in_progress", "mismatch_rejected", "no_false_dedup",
                        "new_key_executes", "retryable_released", "key_released", "window"})
    CHECK(std::find(text.oracles.begin(), text.oracles.end(), o) != text.oracles.end());
  for (const char* o : {"probe_equal", "applied_once"})
    CHECK(std::find(text.oracles.begin(), text.oracles.end(), o) == text.oracles.end());
  ScenarioVocabulary vocabulary = BuiltinOracles().Vocabulary();
  vocabulary.fault_kinds = runtime::InjectorFaults().Kinds();
  auto spec = explore::ParseExploreSpec(text.yaml, "hunt.yaml", vocabulary);
  REQUIRE(spec.ok());
  CHECK(spec->explore.actions == std::vector<std::string>{"cancel_order", "create_order", "pay", "payment_paid",
                                                          "payment_refunded", "set_address"});
  CHECK(spec->explore.keys.size() == 4);
  CHECK(spec->explore.messages == std::vector<std::string>{"credit"});
  CHECK(spec->explore.jobs == std::vector<std::string>{"j1"});
  CHECK(spec->explore.faults == std::vector<std::string>{"lost-answer"});
  CHECK(spec->explore.weights.at("send_background") > 0);
  CHECK(spec->explore.weights.at("kill_mid_work") > 0);
  // A changed payload again (its false alarm fixed in model/payload.cpp) and
  // a client that gives up, drawn where the target allows; no second caller
  // (the other sends go as none: a false premise for caller_scope).
  CHECK(spec->explore.weights.at("send_changed") > 0);
  CHECK(spec->explore.weights.at("send_abort") > 0);
  CHECK(spec->explore.weights.at("send_caller") == 0);
  // The key-level oracles judge the actions a key deduplicates (create,
  // pay), not a put or delete that may be idempotent by nature (a correct
  // Ruby service's second cancel: 200 unmarked, a false alarm), nor the
  // provider's callbacks; all of them are sent.
  for (const auto& e : spec->scenario.expect) {
    if (!e.params.contains("actions")) continue;
    INFO(e.name);
    CHECK(e.params["actions"] == nlohmann::json::array({"create_order", "pay"}));
  }
  // A store behind a tcp egress gets a reset fault of its own.
  auto pg = LoadTargetFile(SourceDir() + "/scenarios/targets/reference-postgres-store-faults.yaml", "");
  REQUIRE(pg.ok());
  hunt::HuntSpecText pg_text = hunt::HuntSpecYaml(*pg);
  auto pg_spec = explore::ParseExploreSpec(pg_text.yaml, "hunt.yaml", vocabulary);
  REQUIRE(pg_spec.ok());
  CHECK(pg_spec->explore.faults == std::vector<std::string>{"lost-answer", "store-reset"});
}

TEST_CASE("the default hunt finds nothing on the correct reference over five seeds", "[hunt][e2e][slow]") {
  for (int seed = 1; seed <= 5; ++seed) {
    const std::string dir = ScratchDir("hunt-clean");
    CliResult r = RunWithHunt(dir, seed, {"--hunt", hunt::kDefaultBudget});
    INFO("seed " << seed << "\n" << r.out << r.err);
    const nlohmann::json h = Results(dir + "/runs")["hunt"];
    REQUIRE(h.is_object());
    CHECK(h["outcome"] == "clean");
    CHECK(h["exit_code"] == 0);
    CHECK(h["time_budget_hit"] == true);  // it hunted the whole minute
    CHECK(h["passed"].get<int>() > 0);
    CHECK(h["faults_fired"].get<int>() > 0);
    CHECK(h["errors"] == 0);
    CHECK_FALSE(h.contains("failure"));
    // The suite's one send decides nothing alone (exit 3); the hunt adds no violation.
    CHECK(r.exit_code == 3);
    CHECK(r.out.find("no violation (") != std::string::npos);
  }
}

TEST_CASE("the hunt alone catches check-then-insert in at least 4 of 5 seeds", "[hunt][e2e][slow]") {
  std::string repro, oracle;
  std::vector<int> caught = SeedsCaught("check-then-insert", &repro, &oracle);
  INFO("caught in " << caught.size() << " of 5 seeds");
  CHECK(caught.size() >= 4);
}

TEST_CASE("the hunt alone catches memory-store in at least 4 of 5 seeds and its repro replays it",
          "[hunt][e2e][slow]") {
  std::string repro, oracle;
  std::vector<int> caught = SeedsCaught("memory-store", &repro, &oracle);
  INFO("caught in " << caught.size() << " of 5 seeds");
  CHECK(caught.size() >= 4);
  REQUIRE_FALSE(repro.empty());
  ReplayReproduces(repro, oracle);
}

// Measured 2026-12-07 (docs/explore.md): caught in 4 of 5 seeds (seeds 2-5;
// shrunk to a send, a restart and a retry of one key where time allowed).
TEST_CASE("the hunt alone catches whole-store-rewrite in at least 4 of 5 seeds", "[hunt][e2e][slow]") {
  std::string repro, oracle;
  std::vector<int> caught = SeedsCaught("whole-store-rewrite", &repro, &oracle);
  INFO("caught in " << caught.size() << " of 5 seeds");
  CHECK(caught.size() >= 4);
}

TEST_CASE("a run with hunt 0 runs the suite alone as before the hunt", "[hunt][e2e][slow]") {
  const std::string dir = ScratchDir("hunt-off");
  CliResult r = RunWithHunt(dir, 7, {"--hunt", "0"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);  // one send judges nothing: the suite's own exit code
  CHECK(r.out.find("\nhunt") == std::string::npos);  // no hunt line (paths may hold the word)
  CHECK_FALSE(Results(dir + "/runs").contains("hunt"));
  CHECK_FALSE(fs::exists(dir + "/runs/latest/hunt"));
  // A budget that is no duration is bad usage: nothing runs.
  CliResult bad = RunWithHunt(dir, 7, {"--hunt", "soon"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--hunt") != std::string::npos);
  // --dry-run says the hunt would follow.
  CliResult dry = RunWithHunt(dir, 7, {"--hunt", "10m", "--dry-run"});
  CHECK(dry.exit_code == 0);
  CHECK(dry.out.find("then a hunt of 10m") != std::string::npos);
}

TEST_CASE("the same seed and namespace draw the same hunt workloads", "[hunt][e2e][slow]") {
  std::vector<std::vector<std::string>> plans;
  for (int i = 0; i < 2; ++i) {
    const std::string dir = ScratchDir("hunt-seed");
    CliResult r = RunWithHunt(dir, 11, {"--hunt", "8s", "--namespace", "huntseed"});
    INFO(r.out << r.err);
    const nlohmann::json h = Results(dir + "/runs")["hunt"];
    REQUIRE(h.is_object());
    CHECK(h["seed"] == 11);
    plans.push_back(TrialPlans(h["run_dir"].get<std::string>()));
  }
  // The budget cuts each run where it ends: the workloads both ran are the same.
  const std::size_t both = std::min(plans[0].size(), plans[1].size());
  REQUIRE(both >= 3);
  for (std::size_t i = 0; i < both; ++i) CHECK(plans[0][i] == plans[1][i]);
}

TEST_CASE("a hunt that cannot reach its target is undecided and never a pass", "[hunt][e2e][slow]") {
  const std::string dir = ScratchDir("hunt-unreachable");
  // A target already "running" at a port nothing listens on.
  WriteFile(dir + "/target.yaml",
            "name: nowhere\n"
            "base_url: \"http://127.0.0.1:9\"\n"
            "actions:\n"
            "  create_order:\n"
            "    role: create\n"
            "    request: {method: POST, path: /orders, json: {biz_no: \"{{biz}}\"}}\n");
  auto target = LoadTargetFile(dir + "/target.yaml", "");
  REQUIRE(target.ok());
  hunt::HuntOptions options;
  options.budget = std::chrono::seconds(5);
  options.seed = 3;
  options.run_namespace = "huntnowhere";
  options.run_dir = dir;
  options.target_file = dir + "/target.yaml";
  hunt::HuntReport report = hunt::RunHunt(*target, options);
  const nlohmann::json j = report.ToJson();
  INFO(j.dump(2));
  CHECK(report.ExitCode() == 3);
  CHECK(j["outcome"] == "undecided");
  CHECK(j["passed"] == 0);
  CHECK_FALSE(j.contains("failure"));
  std::ostringstream printed;
  report.Print(printed);
  CHECK(printed.str().find("UNDECIDED") != std::string::npos);
}
