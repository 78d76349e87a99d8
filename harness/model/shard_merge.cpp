#include "model/shard_merge.h"

#include <algorithm>
#include <map>

namespace idemproof {

namespace {

// "" when `shard` may be merged with `first`; else what differs.
std::string Difference(const RunResults& first, const RunResults& shard) {
  auto differs = [](const std::string& what, const std::string& a, const std::string& b) {
    return what + " " + (a.empty() ? "(none)" : a) + " vs " + (b.empty() ? "(none)" : b);
  };
  if (shard.target_name != first.target_name) return differs("target", first.target_name, shard.target_name);
  if (shard.seed != first.seed) return differs("seed", std::to_string(first.seed), std::to_string(shard.seed));
  if (shard.flaw != first.flaw) return differs("flaw", first.flaw, shard.flaw);
  if (shard.profile != first.profile) return differs("profile", first.profile, shard.profile);
  if (shard.strict != first.strict) return "--strict in one and not the other";
  // One run directory holds histories of one format.
  if (shard.format != first.format)
    return differs("format", std::to_string(first.format), std::to_string(shard.format));
  const ShardOfRun& a = *first.shard;
  const ShardOfRun& b = *shard.shard;
  if (a.shard.count != b.shard.count)
    return differs("shard count", std::to_string(a.shard.count), std::to_string(b.shard.count));
  if (a.suite != b.suite || a.bound != b.bound)
    return "suite: " + std::to_string(a.bound) + " bound scenario(s) (digest " + a.suite + ") vs " +
           std::to_string(b.bound) + " (digest " + b.suite + "): other paths, --filter or --action";
  return "";
}

}  // namespace

Result<ShardMerge> MergeShardResults(const std::vector<ShardRun>& shards) {
  std::map<int, const ShardRun*> by_index;
  for (const ShardRun& run : shards) {
    const RunResults& r = run.results;
    if (!r.complete)
      return Status::InvalidArgument(run.dir + ": the run never finished (results.json says \"finished\": false); "
                                     "run that shard again");
    if (!r.shard) return Status::InvalidArgument(run.dir + ": not a shard (run without --shard K/N)");
    if (r.merged_shards) return Status::InvalidArgument(run.dir + ": already a merge; give the shards' folders");
    const ShardRun& first = shards.front();  // checked first, so a finished shard by now
    if (std::string why = Difference(first.results, r); !why.empty())
      return Status::InvalidArgument(run.dir + ": not a shard of the same run as " + first.dir + ": " + why);
    auto [it, fresh] = by_index.emplace(r.shard->shard.index, &run);
    if (!fresh)
      return Status::InvalidArgument("shard " + r.shard->shard.ToString() + " given twice: " + it->second->dir +
                                     " and " + run.dir + " (overlapping shards)");
  }

  const RunResults& first = shards.front().results;
  const ShardOfRun& cut = *first.shard;
  ShardMerge out;
  RunResults& merged = out.results;
  // The run's own fields (target, seed, flaw, profile, ...) are the shards' shared ones.
  merged = first;
  merged.run_id.clear();
  merged.scenarios.clear();
  merged.shard.reset();
  MergedShards info;
  info.count = cut.shard.count;
  info.bound = cut.bound;
  info.suite = cut.suite;
  for (int k = 1; k <= cut.shard.count; ++k) {
    auto it = by_index.find(k);
    if (it == by_index.end()) {
      info.missing.push_back(k);
      continue;
    }
    const RunResults& r = it->second->results;
    info.merged.push_back(k);
    info.run_ids.push_back(r.run_id);
    // Namespaces differ unless the shards were given one: keep it only when shared.
    if (r.run_namespace != merged.run_namespace) merged.run_namespace.clear();
    merged.started = std::min(merged.started, r.started);
    merged.finished = std::max(merged.finished, r.finished);
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(cut.bound); ++i) {
    const int k = static_cast<int>(i % static_cast<std::size_t>(cut.shard.count)) + 1;
    auto it = by_index.find(k);
    if (it == by_index.end()) continue;
    const std::size_t row = i / static_cast<std::size_t>(cut.shard.count);
    const auto& rows = it->second->results.scenarios;
    if (row >= rows.size()) continue;  // that shard stopped early: the merge is incomplete
    merged.scenarios.push_back(rows[row]);
    out.row_dirs.push_back(it->second->dir);
  }
  merged.merged_shards = std::move(info);
  return out;
}

}  // namespace idemproof
