// Shards (model/shard.h, model/shard_merge.h): parsing --shard, the round
// robin deal, the shard in results.json, and merge's refusals and its
// incomplete (never passing) merges. Pure values, no process.
#include <catch2/catch.hpp>

#include <set>

#include "model/results.h"
#include "model/shard.h"
#include "model/shard_merge.h"
#include "model/results_json.h"

using namespace idemproof;

namespace {

// Shard `k` of `n` of a suite of `names`, as `run --shard k/n` records it:
// one valid row per scenario dealt (the row named after the scenario).
ShardRun ShardOf(int k, int n, const std::vector<std::string>& names, const std::string& dir) {
  ShardRun run;
  run.dir = dir;
  RunResults& r = run.results;
  r.run_id = dir;
  r.seed = 7;
  r.target_name = "reference";
  r.started = "2026-12-02T10:00:0" + std::to_string(k) + ".000Z";
  r.finished = "2026-12-02T10:01:0" + std::to_string(k) + ".000Z";
  r.shard = ShardOfRun{Shard{k, n}, static_cast<int>(names.size()), SuiteDigest(names)};
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!r.shard->shard.Holds(i)) continue;
    ScenarioResult s;
    s.name = names[i];
    s.verdicts.push_back(Verdict::Valid("one_record", "1 record"));
    r.scenarios.push_back(s);
  }
  return run;
}

const std::vector<std::string> kSuite = {"a", "b", "c", "d", "e", "f"};

std::vector<ShardRun> AllShards(int n) {
  std::vector<ShardRun> out;
  for (int k = 1; k <= n; ++k) out.push_back(ShardOf(k, n, kSuite, "runs/shard" + std::to_string(k)));
  return out;
}

std::string RefusalOf(const std::vector<ShardRun>& shards) {
  auto merged = MergeShardResults(shards);
  return merged.ok() ? "(merged)" : merged.status().message();
}

}  // namespace

TEST_CASE("shard specs K/N parse with 1 <= K <= N, and name what is wrong otherwise", "[shard]") {
  auto two_of_four = ParseShard("2/4");
  REQUIRE(two_of_four.ok());
  CHECK(two_of_four->index == 2);
  CHECK(two_of_four->count == 4);
  CHECK(two_of_four->ToString() == "2/4");
  CHECK(ParseShard("1/1").ok());
  for (const char* bad : {"0/4", "5/4", "a/b", "4", "1/0", "/4", "2/", "-1/4", "1/4x", " 1/4", "2/4/6"}) {
    INFO(bad);
    auto parsed = ParseShard(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().message().find("--shard '" + std::string(bad) + "'") != std::string::npos);
  }
  CHECK(ParseShard("0/4").status().message().find("1 to 4") != std::string::npos);
  CHECK(ParseShard("5/4").status().message().find("1 to 4") != std::string::npos);
}

TEST_CASE("the deal is round robin by index: disjoint, covering, within one of each other", "[shard]") {
  for (std::size_t items : {0u, 1u, 3u, 6u, 7u, 100u}) {
    std::multiset<std::size_t> dealt;
    for (int k = 1; k <= 4; ++k) {
      const Shard shard{k, 4};
      std::size_t mine = 0;
      for (std::size_t i = 0; i < items; ++i) {
        if (shard.Holds(i)) {
          dealt.insert(i);
          ++mine;
        }
      }
      CHECK(mine == shard.ItemsOf(items));
      CHECK(mine + 1 >= items / 4);
      CHECK(mine <= items / 4 + 1);
    }
    CHECK(dealt.size() == items);
    CHECK(std::set<std::size_t>(dealt.begin(), dealt.end()).size() == items);
  }
  CHECK(SuiteDigest({"a", "b"}) == SuiteDigest({"a", "b"}));
  CHECK(SuiteDigest({"a", "b"}) != SuiteDigest({"b", "a"}));
  CHECK(SuiteDigest({"ab"}) != SuiteDigest({"a", "b"}));
}

TEST_CASE("a shard's results.json carries the shard, and one dealt nothing is never a pass", "[shard]") {
  ShardRun two = ShardOf(2, 4, kSuite, "runs/two");
  nlohmann::json j = RunResultsToJson(two.results);
  CHECK(j["shard"]["index"] == 2);
  CHECK(j["shard"]["count"] == 4);
  CHECK(j["shard"]["bound"] == 6);
  auto back = RunResultsFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->shard);
  CHECK(back->shard->shard.index == 2);
  CHECK(back->shard->suite == two.results.shard->suite);
  CHECK(back->ExitCode() == 0);
  CHECK(back->ShardNote() == "shard 2/4: 2 of 6 bound scenario(s)");

  ShardRun empty = ShardOf(4, 4, {"a", "b", "c"}, "runs/empty");
  CHECK(empty.results.scenarios.empty());
  CHECK(empty.results.ExitCode() == 3);
  CHECK(empty.results.ShardNote().find("EMPTY") != std::string::npos);
  CHECK_FALSE(RunResultsToJson(RunResults{}).contains("shard"));
}

TEST_CASE("merge puts the rows back in the unsharded order and passes a complete set", "[shard]") {
  std::vector<ShardRun> shards = AllShards(4);
  std::swap(shards[0], shards[2]);  // the order of the folders does not matter
  auto merged = MergeShardResults(shards);
  REQUIRE(merged.ok());
  std::vector<std::string> names;
  for (const auto& s : merged->results.scenarios) names.push_back(s.name);
  CHECK(names == kSuite);
  CHECK(merged->row_dirs.front() == "runs/shard1");
  CHECK(merged->results.ExitCode() == 0);
  CHECK_FALSE(merged->results.Incomplete());
  CHECK(merged->results.started == "2026-12-02T10:00:01.000Z");
  CHECK(merged->results.finished == "2026-12-02T10:01:04.000Z");
  const nlohmann::json j = RunResultsToJson(merged->results);
  CHECK(j["merged_shards"]["shards"] == nlohmann::json({1, 2, 3, 4}));
  CHECK(j["merged_shards"]["incomplete"] == false);
  auto back = RunResultsFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->merged_shards);
  CHECK(back->ExitCode() == 0);
}

TEST_CASE("merge of an incomplete set goes on, says which shard is missing, and never passes", "[shard]") {
  std::vector<ShardRun> shards = AllShards(4);
  shards.erase(shards.begin() + 2);  // shard 3/4 lost
  auto merged = MergeShardResults(shards);
  REQUIRE(merged.ok());
  CHECK(merged->results.scenarios.size() == 5);  // shard 3/4 of six holds one (index 2)
  CHECK(merged->results.Incomplete());
  CHECK(merged->results.ExitCode() == 3);
  CHECK(merged->results.ShardNote().find("INCOMPLETE: shard(s) 3 of 4 missing") != std::string::npos);
  CHECK(RunResultsToJson(merged->results)["merged_shards"]["missing"] == nlohmann::json({3}));

  // A violation in a shard that is there still decides: exit 1.
  shards[0].results.scenarios[0].verdicts = {Verdict::Invalid("one_record", "2 records")};
  merged = MergeShardResults(shards);
  REQUIRE(merged.ok());
  CHECK(merged->results.ExitCode() == 1);
}

TEST_CASE("merge refuses what is not one suite cut N ways", "[shard]") {
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards[1].results.complete = false;
    CHECK(RefusalOf(shards).find("runs/shard2: the run never finished") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards[3].results.shard.reset();
    CHECK(RefusalOf(shards).find("runs/shard4: not a shard") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards[1].results.seed = 8;
    CHECK(RefusalOf(shards).find("seed 7 vs 8") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards[1].results.target_name = "other";
    CHECK(RefusalOf(shards).find("target reference vs other") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards.push_back(ShardOf(1, 3, kSuite, "runs/three"));
    CHECK(RefusalOf(shards).find("shard count 4 vs 3") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards[1] = ShardOf(2, 4, {"a", "b", "c", "d", "e", "g"}, "runs/other-suite");
    CHECK(RefusalOf(shards).find("suite") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(4);
    shards.push_back(ShardOf(2, 4, kSuite, "runs/again"));
    CHECK(RefusalOf(shards).find("shard 2/4 given twice: runs/shard2 and runs/again") != std::string::npos);
  }
  {
    std::vector<ShardRun> shards = AllShards(2);
    shards[0].results.flaw = "memory-store";
    CHECK(RefusalOf(shards).find("flaw") != std::string::npos);
  }
}
