// Shards: `idemproof run --shard K/N` and `idemproof explore --shard K/N` do
// part K of N of the work, each in a CI job of its own; `idemproof merge`
// puts the parts' results.json back together (MergeShardResults).
//
// Assignment: item i (0-based) of the work belongs to shard (i mod N) + 1.
// For run the items are the bound scenarios after --filter and --action, in
// the order an unsharded run takes them (sorted file order, then the
// target's action order); for explore, the trials. Round robin by index,
// not a hash of the name: the shards of one CI matrix get the same paths and
// filter, so the same list, and round robin keeps every shard within one
// item of the others and none empty while there are at least N items (a
// hash can leave a shard empty, or give one shard all the slow scenarios).
// Nothing else goes in: no clock, no file outside the bound list.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace idemproof {

struct Shard {
  int index = 1;  // K, 1-based
  int count = 1;  // N

  // True when item `item` (0-based) of the work is this shard's.
  bool Holds(std::size_t item) const { return item % static_cast<std::size_t>(count) == static_cast<std::size_t>(index - 1); }
  // How many of `items` items are this shard's.
  std::size_t ItemsOf(std::size_t items) const;
  std::string ToString() const;  // "2/4"
};

// "K/N" with 1 <= K <= N; kInvalidArgument naming what is wrong otherwise.
Result<Shard> ParseShard(const std::string& text);

// What a shard's results.json records ("shard": {"index", "count", "bound",
// "suite"}), so merge can tell the shards of one suite from another's.
struct ShardOfRun {
  Shard shard;
  int bound = 0;      // items of the whole list, every shard together
  std::string suite;  // SuiteDigest of the whole list
};

// 16 hex digits over the names of the whole (unsharded) list, in order.
std::string SuiteDigest(const std::vector<std::string>& names);

nlohmann::json ShardOfRunToJson(const ShardOfRun& shard);
Result<ShardOfRun> ShardOfRunFromJson(const nlohmann::json& doc);

// What a merged results.json records ("merged_shards"): the shards found
// and those missing. A merge with any missing (or a shard that ran fewer
// scenarios than it was dealt) is incomplete: never a pass.
struct MergedShards {
  int count = 0;
  int bound = 0;
  std::string suite;
  std::vector<int> merged;            // shard indexes merged, ascending
  std::vector<int> missing;           // shard indexes absent
  std::vector<std::string> run_ids;   // the shards' run ids, in shard order
};

nlohmann::json MergedShardsToJson(const MergedShards& merged, bool incomplete);
Result<MergedShards> MergedShardsFromJson(const nlohmann::json& doc);

}  // namespace idemproof
