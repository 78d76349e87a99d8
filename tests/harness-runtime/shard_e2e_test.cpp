// `idemproof run --shard K/N` and `idemproof merge` as a user runs them (real
// child processes against the reference service on loopback): the usage
// errors, merge's refusals, an empty shard, and four shards merged giving
// the verdicts of one unsharded run with the same seed.
#include <catch2/catch.hpp>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "test_support.h"

using namespace idemproof::testing;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Diagnose(const CliResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\n--- stdout\n" + r.out + "\n--- stderr\n" + r.err;
}

std::string Target() { return SourceDir() + "/scenarios/targets/reference.yaml"; }

// Six fast scenarios, one binding each on the reference.
std::vector<std::string> Scenarios() {
  std::vector<std::string> out;
  for (const char* name : {"double-submit", "key-reuse-other-payload", "missing-key", "replay-identity",
                           "put-target-state", "delete-releases-once"})
    out.push_back(SourceDir() + "/scenarios/client/" + name + ".yaml");
  return out;
}

CliResult RunScenarios(const std::string& dir, const std::string& out, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"run"};
  for (const auto& s : Scenarios()) args.push_back(s);
  for (const std::string& a : {std::string("--target"), Target(), std::string("--seed"), std::string("1818"),
                               std::string("--namespace"), std::string("shards"), std::string("--out"), dir + "/" + out})
    args.push_back(a);
  args.insert(args.end(), extra.begin(), extra.end());
  return RunIdemproof(args, dir);
}

using Row = std::tuple<std::string, std::string, std::string, std::string>;  // scenario, action, oracle, verdict

std::set<Row> VerdictRows(const json& results) {
  std::set<Row> rows;
  for (const auto& s : results.at("scenarios")) {
    const std::string action = s.value("binding", json::object()).value("create", "");
    for (const auto& v : s.at("verdicts"))
      rows.emplace(s.at("name").get<std::string>(), action, v.at("oracle").get<std::string>(),
                   v.at("status").get<std::string>());
  }
  return rows;
}

std::vector<std::string> Names(const json& results) {
  std::vector<std::string> out;
  for (const auto& s : results.at("scenarios")) out.push_back(s.at("name"));
  return out;
}

// The key the first request of a scenario's history sent.
std::string FirstKey(const std::string& run_dir, const json& row) {
  std::istringstream lines(ReadFile(run_dir + "/" + row.at("history_file").get<std::string>()));
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line);
    if (e.at("type") == "invoke" && !e.value("key", "").empty()) return e.at("key");
  }
  return "";
}

}  // namespace

TEST_CASE("run and explore take --shard K/N with 1 <= K <= N, else exit 2 with the reason", "[shard][cli][slow]") {
  const std::string dir = ScratchDir("shard-usage");
  for (const char* bad : {"0/4", "5/4", "a/b", "4"}) {
    CliResult r = RunScenarios(dir, "runs", {"--shard", bad});
    INFO(bad << "\n" << Diagnose(r));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--shard '" + std::string(bad) + "'") != std::string::npos);
    CHECK_FALSE(fs::exists(dir + "/runs"));  // nothing ran, no run folder
  }
  CliResult e = RunIdemproof({"explore", SourceDir() + "/scenarios/explore/create-order.yaml", "--target", Target(),
                              "--shard", "5/4", "--out", dir + "/explore"},
                             dir);
  INFO(Diagnose(e));
  CHECK(e.exit_code == 2);
  CHECK(e.err.find("--shard '5/4'") != std::string::npos);
}

TEST_CASE("a shard dealt no scenario exits 3 and says so", "[shard][cli][slow]") {
  const std::string dir = ScratchDir("shard-empty");
  CliResult r = RunIdemproof({"run", Scenarios().front(), "--target", Target(), "--shard", "2/2", "--out", dir + "/runs"},
                             dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 3);
  CHECK(r.err.find("shard 2/2 was dealt no scenario") != std::string::npos);
  const json results = json::parse(ReadFile(dir + "/runs/latest/results.json"));
  CHECK(results.at("shard").at("index") == 2);
  CHECK(results.at("exit_code") == 3);
}

TEST_CASE("merge refuses folders that are no finished shards of one run", "[shard][cli][slow]") {
  const std::string dir = ScratchDir("shard-refusals");
  fs::create_directories(dir + "/empty");
  CliResult none = RunIdemproof({"merge", dir + "/empty", "--out", dir + "/merged"}, dir);
  INFO(Diagnose(none));
  CHECK(none.exit_code == 2);
  CHECK(none.err.find("no results.json") != std::string::npos);

  // Two shard folders made by hand: results.json is all merge reads.
  auto shard = [&](const std::string& name, json doc) {
    fs::create_directories(dir + "/" + name);
    WriteFile(dir + "/" + name + "/results.json", doc.dump());
    return dir + "/" + name;
  };
  const json one = {{"run_id", "one"}, {"seed", 5}, {"target", {{"name", "reference"}}}, {"finished", "2026-12-02T10:00:00Z"},
                    {"scenarios", json::array()}, {"shard", {{"index", 1}, {"count", 2}, {"bound", 0}, {"suite", "x"}}}};
  json unfinished = one;
  unfinished["finished"] = false;
  unfinished["shard"]["index"] = 2;
  CliResult r = RunIdemproof({"merge", shard("one", one), shard("unfinished", unfinished), "--out", dir + "/merged"}, dir);
  INFO(Diagnose(r));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unfinished: the run never finished") != std::string::npos);

  json other_seed = one;
  other_seed["seed"] = 6;
  other_seed["shard"]["index"] = 2;
  r = RunIdemproof({"merge", shard("one", one), shard("seed6", other_seed), "--out", dir + "/merged"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("seed 5 vs 6") != std::string::npos);

  r = RunIdemproof({"merge", shard("one", one), shard("again", one), "--out", dir + "/merged"}, dir);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("shard 1/2 given twice") != std::string::npos);
  CHECK_FALSE(fs::exists(dir + "/merged"));
}

TEST_CASE("four shards merged give the verdicts of one unsharded run with the same seed", "[shard][cli][e2e][slow]") {
  const std::string dir = ScratchDir("shard-merge");
  CliResult whole = RunScenarios(dir, "whole", {});
  INFO(Diagnose(whole));
  REQUIRE(whole.exit_code == 0);
  const json unsharded = json::parse(ReadFile(dir + "/whole/latest/results.json"));
  const std::vector<std::string> bound = Names(unsharded);
  REQUIRE(bound.size() == 6);

  std::vector<std::string> shard_dirs;
  std::multiset<std::string> dealt;
  for (int k = 1; k <= 4; ++k) {
    const std::string out = "shard" + std::to_string(k);
    CliResult r = RunScenarios(dir, out, {"--shard", std::to_string(k) + "/4"});
    INFO(Diagnose(r));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("shard " + std::to_string(k) + "/4: ") != std::string::npos);
    shard_dirs.push_back(fs::canonical(dir + "/" + out + "/latest").string());
    const json results = json::parse(ReadFile(shard_dirs.back() + "/results.json"));
    CHECK(results.at("shard").at("index") == k);
    CHECK(results.at("shard").at("count") == 4);
    CHECK(results.at("shard").at("bound") == 6);
    for (const auto& s : results.at("scenarios")) {
      dealt.insert(s.at("name").get<std::string>());
      // A shard sends the keys the unsharded run sends (same seed and namespace).
      for (const auto& u : unsharded.at("scenarios"))
        if (u.at("name") == s.at("name"))
          CHECK(FirstKey(shard_dirs.back(), s) == FirstKey(fs::canonical(dir + "/whole/latest").string(), u));
    }
  }
  // Disjoint and covering the bound list.
  CHECK(dealt.size() == bound.size());
  CHECK(std::set<std::string>(dealt.begin(), dealt.end()) == std::set<std::string>(bound.begin(), bound.end()));

  std::vector<std::string> merge_args = {"merge"};
  merge_args.insert(merge_args.end(), shard_dirs.rbegin(), shard_dirs.rend());
  merge_args.insert(merge_args.end(), {"--out", dir + "/merged"});
  CliResult merged = RunIdemproof(merge_args, dir);
  INFO(Diagnose(merged));
  REQUIRE(merged.exit_code == 0);
  CHECK(merged.out.find("merged shards 1, 2, 3, 4 of 4: 6 of 6 bound scenario(s)") != std::string::npos);
  const std::string merged_dir = dir + "/merged/latest";
  const json results = json::parse(ReadFile(merged_dir + "/results.json"));
  CHECK(Names(results) == bound);  // the unsharded order
  CHECK(VerdictRows(results) == VerdictRows(unsharded));
  CHECK(results.at("merged_shards").at("incomplete") == false);
  CHECK(results.at("exit_code") == 0);
  for (const char* file : {"junit.xml", "report.html", "report.md", "target.yaml"})
    CHECK(fs::exists(merged_dir + "/" + std::string(file)));
  CHECK(ReadFile(merged_dir + "/report.md").find("merged shards 1, 2, 3, 4 of 4") != std::string::npos);
  // The merged folder is a run folder: check re-judges it offline, the same way.
  CliResult check = RunIdemproof({"check", merged_dir}, dir);
  INFO(Diagnose(check));
  CHECK(check.exit_code == 0);

  // Shard 3 lost: merged anyway, loudly incomplete, exit 3.
  CliResult partial = RunIdemproof({"merge", shard_dirs[0], shard_dirs[1], shard_dirs[3], "--out", dir + "/partial"}, dir);
  INFO(Diagnose(partial));
  CHECK(partial.exit_code == 3);
  CHECK(partial.err.find("INCOMPLETE: shard(s) 3 of 4 missing") != std::string::npos);
  const json partial_results = json::parse(ReadFile(dir + "/partial/latest/results.json"));
  CHECK(partial_results.at("merged_shards").at("missing") == json({3}));
  CHECK(partial_results.at("exit_code") == 3);
}
