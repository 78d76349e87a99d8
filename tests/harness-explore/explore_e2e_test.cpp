// `explore` end to end against the reference service (real processes, real
// loopback HTTP): a few flaws found and shrunk to a short plan, the written
// repro replayed with `idemproof run` (exit 1, the same oracle invalid), and
// the same seed generating the same plans against the correct service,
// which shows no violation.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/explore_spec.h"
#include "explore/explorer.h"
#include "model/target.h"
#include "oracles/oracle.h"

namespace fs = std::filesystem;
using namespace idemproof;
using namespace idemproof::explore;

namespace {

const std::string kSource = IDEMPROOF_SOURCE_DIR;
const std::string kBuild = IDEMPROOF_BINARY_DIR;
const std::string kTargetFile = kSource + "/scenarios/targets/reference.yaml";
const std::string kClusterTargetFile = kSource + "/scenarios/targets/reference-cluster.yaml";

std::string Scratch(const std::string& name) {
  static int n = 0;
  const std::string dir = kBuild + "/test-harness-explore/" + name + "-" + std::to_string(::getpid()) + "-" + std::to_string(++n);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ExploreReport Explored(const std::string& spec_name, const std::string& flaw, std::uint64_t seed,
                       std::optional<int> trials = std::nullopt,
                       runtime::Isolation isolation = runtime::Isolation::kNamespace, int jobs = 1,
                       const std::string& target_file = kTargetFile) {
  auto target = LoadTargetFile(target_file);
  REQUIRE(target.ok());
  auto loaded = LoadExploreSpec(kSource + "/scenarios/explore/" + spec_name + ".yaml", BuiltinOracles().Vocabulary());
  REQUIRE(loaded.ok());
  std::vector<ExploreSpec> bound = BindExploreSpec(*loaded, *target);
  REQUIRE(bound.size() == 1);  // the reference has one action per role the spec asks for
  const ExploreSpec* spec = &bound.front();
  ExploreOptions o;
  o.seed = seed;
  o.trials = trials;
  if (!flaw.empty()) o.flaw = flaw;
  o.vars["build_dir"] = kBuild;
  o.vars["source_dir"] = kSource;
  o.out_root = Scratch(spec_name + "-" + (flaw.empty() ? "correct" : flaw));
  o.target_file = target_file;
  o.isolation = isolation;
  o.jobs = jobs;
  o.confirm = 3;
  o.reruns = 1;  // these flaws are deterministic: one try per shrink candidate keeps the test short
  auto report = Explore(*spec, *target, o);
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  INFO("stop reason: " << report->stop_reason);
  REQUIRE(report->stop_reason.empty());
  return std::move(report).value();
}

struct CliRun {
  int exit_code = -1;
  nlohmann::json results;
  std::string output;
};

// `idemproof run FILE --target reference --flaw F` as a child process.
CliRun RunRepro(const std::string& file, const std::string& flaw, const std::string& target_file = kTargetFile) {
  const std::string out = Scratch("repro-run");
  const std::string cmd = "timeout 120 " + kBuild + "/harness/cli/idemproof run '" + file + "' --target '" +
                          target_file + "' --flaw " + flaw + " --out '" + out + "' --json '" + out +
                          "/r.json' > '" + out + "/out.txt' 2>&1";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = ReadFile(out + "/out.txt");
  if (fs::exists(out + "/r.json")) r.results = nlohmann::json::parse(ReadFile(out + "/r.json"));
  return r;
}

std::set<std::string> InvalidOracles(const CliRun& run) {
  std::set<std::string> out;
  for (const auto& s : run.results.value("scenarios", nlohmann::json::array())) {
    for (const auto& v : s.value("verdicts", nlohmann::json::array())) {
      if (v.value("status", "") == "invalid") out.insert(v.value("oracle", ""));
    }
  }
  return out;
}

void FindsShrinksAndReproduces(const std::string& spec, const std::string& flaw, const std::string& oracle,
                               const std::string& target_file = kTargetFile) {
  const ExploreReport r = Explored(spec, flaw, 7, std::nullopt, runtime::Isolation::kNamespace, 1, target_file);
  INFO(flaw << ": first failure " << r.first_failure.ToString() << "; minimal " << r.minimal.ToString());
  REQUIRE(r.violation);
  CHECK(r.trials_run <= r.trials_budget);
  CHECK(r.minimal.ops.size() <= 4);
  CHECK(r.minimal.ops.size() <= r.first_failure.ops.size());
  std::set<std::string> invalid;
  for (const auto& v : r.invalid) invalid.insert(v.oracle);
  CHECK(invalid.count(oracle) == 1);
  CHECK(r.reproduced >= 1);
  REQUIRE(fs::exists(r.repro_file));
  CHECK(fs::exists(r.run_dir + "/repro-history.jsonl"));
  CHECK(fs::exists(r.run_dir + "/first-failure.yaml"));

  const CliRun rerun = RunRepro(r.repro_file, flaw, target_file);
  INFO(rerun.output);
  CHECK(rerun.exit_code == 1);
  CHECK(InvalidOracles(rerun).count(oracle) == 1);
}

}  // namespace

TEST_CASE("explore finds no-fingerprint, shrinks it, and the repro reproduces", "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("create-order", "no-fingerprint", "mismatch_rejected");
}

TEST_CASE("explore finds fingerprint-key-order (an equal rewrite gets 422), shrinks it, and the repro reproduces",
          "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("create-order", "fingerprint-key-order", "identical_replay");
}

TEST_CASE("explore finds memory-store (needs a restart), shrinks it, and the repro reproduces", "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("create-order", "memory-store", "one_record");
}

TEST_CASE("explore finds delete-releases-twice between fixed probes, and the repro reproduces", "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("cancel-order", "delete-releases-twice", "probe_equal");
}

TEST_CASE("the same seed explores the same plans, the correct service shows no violation", "[explore][e2e][slow]") {
  auto plans = [](const ExploreReport& r) {
    std::vector<std::string> out;
    std::istringstream lines(ReadFile(r.run_dir + "/plans.jsonl"));
    std::string line;
    while (std::getline(lines, line)) out.push_back(nlohmann::json::parse(line).at("plan").get<std::string>());
    return out;
  };
  const ExploreReport a = Explored("create-order", "", 99, 12);
  const ExploreReport b = Explored("create-order", "", 99, 12);
  const ExploreReport c = Explored("create-order", "", 100, 12);
  CHECK_FALSE(a.violation);
  CHECK_FALSE(b.violation);
  CHECK_FALSE(c.violation);
  CHECK(a.trials_run == 12);
  CHECK(a.undecided == 0);
  REQUIRE(plans(a).size() == 12);
  CHECK(plans(a) == plans(b));
  CHECK(plans(a) != plans(c));
}

TEST_CASE("namespace isolation reuses one target where a plan leaves it as found, and judges as process isolation does",
          "[explore][e2e][slow]") {
  auto lines = [](const ExploreReport& r) {
    std::vector<std::string> out;
    std::istringstream in(ReadFile(r.run_dir + "/plans.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      out.push_back(j.at("plan").get<std::string>() + " => " + j.at("outcome").get<std::string>());
    }
    return out;
  };
  const ExploreReport shared = Explored("create-order", "", 99, 12, runtime::Isolation::kNamespace);
  const ExploreReport own = Explored("create-order", "", 99, 12, runtime::Isolation::kProcess);
  CHECK(shared.isolation == "namespace");
  CHECK(own.isolation == "process");
  // The same plans, each judged the same, whether or not it had a target of its own.
  REQUIRE(lines(shared).size() == 12);
  CHECK(lines(shared) == lines(own));
  CHECK(shared.passed == own.passed);
  CHECK(shared.unexercised_trials == own.unexercised_trials);
  CHECK(own.target_starts == 12);
  CHECK(own.target_reuses == 0);
  // create-order's plans kill, restart and pause the target but fire no hook
  // and inject no fault: the services and the (restarted) target serve all 12.
  CHECK(shared.target_starts == 1);
  CHECK(shared.target_reuses == 11);
}

TEST_CASE("two trial workers (--jobs 2) run the plans of one worker and find the same first failing plan, shrunk the same",
          "[explore][e2e][jobs][slow]") {
  // Plans and outcomes by run number: workers finish in any order.
  auto trials = [](const ExploreReport& r) {
    std::map<int, std::string> out;
    std::istringstream in(ReadFile(r.run_dir + "/plans.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      const auto j = nlohmann::json::parse(line);
      if (j.at("phase") == "trials") out[j.at("run").get<int>()] = j.at("plan").get<std::string>() + " => " + j.at("outcome").get<std::string>();
    }
    return out;
  };
  const ExploreReport one = Explored("create-order", "", 99, 12, runtime::Isolation::kNamespace, 1);
  const ExploreReport two = Explored("create-order", "", 99, 12, runtime::Isolation::kNamespace, 2);
  CHECK(one.jobs == 1);
  CHECK(two.jobs == 2);
  CHECK_FALSE(two.violation);
  CHECK(two.trials_run == 12);
  CHECK(two.passed == one.passed);
  CHECK(two.unexercised_trials == one.unexercised_trials);
  CHECK(two.undecided_trials == 0);
  REQUIRE(trials(one).size() == 12);
  CHECK(trials(two) == trials(one));
  CHECK(two.target_starts >= 2);  // each worker its own target

  const ExploreReport found_one = Explored("create-order", "fingerprint-key-order", 7, std::nullopt,
                                           runtime::Isolation::kNamespace, 1);
  const ExploreReport found_two = Explored("create-order", "fingerprint-key-order", 7, std::nullopt,
                                           runtime::Isolation::kNamespace, 2);
  REQUIRE(found_one.violation);
  REQUIRE(found_two.violation);
  CHECK(found_two.first_failure.ToString() == found_one.first_failure.ToString());
  CHECK(found_two.trials_run == found_one.trials_run);
  CHECK(found_two.minimal.ToString() == found_one.minimal.ToString());
  CHECK(found_two.reproduced >= 1);
}

TEST_CASE("explore finds inbox-no-dedup with generated deliveries, and the repro reproduces", "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("inbox", "inbox-no-dedup", "applied_once");
}

TEST_CASE("explore finds no-range-marker with generated run_batch/rerun, and the repro reproduces", "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("batch", "no-range-marker", "range_continuity");
}

TEST_CASE("explore finds cross-caller-replay by sends as either of two callers, and the repro reproduces",
          "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("callers", "cross-caller-replay", "caller_scope");
}

TEST_CASE("explore finds store-after-answer by kills the moment an answer arrives, and the repro reproduces",
          "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("after-answer", "store-after-answer", "identical_replay");
}

TEST_CASE("explore finds instance-local-claims by bursts the balancer spreads over three instances, and the repro "
          "reproduces",
          "[explore][e2e][slow]") {
  FindsShrinksAndReproduces("across-instances", "instance-local-claims", "one_record", kClusterTargetFile);
}
