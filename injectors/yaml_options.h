// YamlOptions: strict reading of one injector's options map.
//
// Every key read through this class is marked as known; finish() reports the
// first key that nobody read (a typo such as `probabilty`) with its
// line:column. Type errors and out-of-range values are reported the same way;
// after the first error every further read returns nullopt and the first
// error is kept.
//
// Thread-safety: none; one reader per YAML block.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "base/status.h"

namespace idemproof::injectors {

// An invalid_config Status positioned at `node` (1-based line:column; the
// file is the caller's to name).
Status error_at(const YAML::Node& node, const std::string& message);

// A duration as every room writes them (base/duration.h: "250us", "10ms",
// "2s", "1m", "1h", or "0"); invalid_config otherwise.
Result<std::chrono::nanoseconds> parse_duration(std::string_view text);

class YamlOptions {
 public:
  // `node` is a map, or null/absent (no options). `what` names the block in
  // messages; `anchor` (e.g. the kind's node) positions errors when `node` is absent.
  YamlOptions(const YAML::Node& node, std::string what, const YAML::Node& anchor = YAML::Node());

  std::optional<std::string> string(const char* key);
  std::optional<std::int64_t> integer(const char* key, std::int64_t min, std::int64_t max);
  std::optional<double> number(const char* key, double min, double max);
  std::optional<bool> boolean(const char* key);
  std::optional<std::chrono::nanoseconds> duration(const char* key);
  // The raw child node (marked known); nullopt when absent.
  std::optional<YAML::Node> child(const char* key);

  // Records "<what>: '<key>' is required" at the block.
  void require(const char* key);
  // Records an error found by the caller (keeps the first).
  void fail(Status error);
  // Records "<what>.<key>: <message>" positioned at the key's value.
  void fail_at(const char* key, const std::string& message);
  // The first error recorded so far (unknown keys not yet judged), else ok.
  const Status& first_error() const { return first_error_; }
  // The first error, else the first unknown key, else ok.
  Status finish() const;

 private:
  std::optional<YAML::Node> lookup(const char* key);

  YAML::Node node_;
  YAML::Node anchor_;
  std::string what_;
  std::set<std::string> known_;
  Status first_error_ = Status::Ok();
};

}  // namespace idemproof::injectors
