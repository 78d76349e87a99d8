#include "model/shard.h"

#include <charconv>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "base/stable_hash.h"

namespace idemproof {

namespace {

std::optional<int> WholeNumber(const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

}  // namespace

std::size_t Shard::ItemsOf(std::size_t items) const {
  const auto n = static_cast<std::size_t>(count), k = static_cast<std::size_t>(index - 1);
  return items > k ? (items - k + n - 1) / n : 0;
}

std::string Shard::ToString() const { return std::to_string(index) + "/" + std::to_string(count); }

Result<Shard> ParseShard(const std::string& text) {
  const std::size_t slash = text.find('/');
  const std::string usage = "--shard '" + text + "': expected K/N, shard K of N with 1 <= K <= N (e.g. 2/4)";
  if (slash == std::string::npos) return Status::InvalidArgument(usage);
  const auto k = WholeNumber(text.substr(0, slash));
  const auto n = WholeNumber(text.substr(slash + 1));
  if (!k || !n) return Status::InvalidArgument(usage);
  if (*n < 1) return Status::InvalidArgument("--shard '" + text + "': the shard count N must be at least 1");
  if (*k < 1 || *k > *n)
    return Status::InvalidArgument("--shard '" + text + "': shard K must be 1 to " + std::to_string(*n) +
                                   " (shards are numbered from 1)");
  return Shard{*k, *n};
}

std::string SuiteDigest(const std::vector<std::string>& names) {
  std::uint64_t h = kStableHashBasis;
  for (const auto& name : names) h = StableHash(name + "\n", h);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

nlohmann::json ShardOfRunToJson(const ShardOfRun& s) {
  return {{"index", s.shard.index}, {"count", s.shard.count}, {"bound", s.bound}, {"suite", s.suite}};
}

Result<ShardOfRun> ShardOfRunFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("shard: expected an object");
  try {
    ShardOfRun s;
    s.shard.index = doc.at("index").get<int>();
    s.shard.count = doc.at("count").get<int>();
    s.bound = doc.value("bound", 0);
    s.suite = doc.value("suite", "");
    if (s.shard.count < 1 || s.shard.index < 1 || s.shard.index > s.shard.count)
      return Status::InvalidArgument("shard: index " + std::to_string(s.shard.index) + " of " +
                                     std::to_string(s.shard.count) + " is no shard");
    return s;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("shard: ") + e.what());
  }
}

nlohmann::json MergedShardsToJson(const MergedShards& m, bool incomplete) {
  return {{"count", m.count}, {"bound", m.bound},       {"suite", m.suite},          {"shards", m.merged},
          {"missing", m.missing}, {"runs", m.run_ids}, {"incomplete", incomplete}};
}

Result<MergedShards> MergedShardsFromJson(const nlohmann::json& doc) {
  if (!doc.is_object()) return Status::InvalidArgument("merged_shards: expected an object");
  try {
    MergedShards m;
    m.count = doc.at("count").get<int>();
    m.bound = doc.value("bound", 0);
    m.suite = doc.value("suite", "");
    m.merged = doc.value("shards", std::vector<int>{});
    m.missing = doc.value("missing", std::vector<int>{});
    m.run_ids = doc.value("runs", std::vector<std::string>{});
    return m;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("merged_shards: ") + e.what());
  }
}

}  // namespace idemproof
