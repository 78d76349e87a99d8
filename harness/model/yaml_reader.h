// Internal to idemproof_model: strict reading of yaml-cpp nodes for the target
// and scenario loaders. Every failure throws ConfigError carrying a Status
// with the file:line:column (1-based) of the offending node; the public
// loaders catch it and return the Status, so no exception leaves the library.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <yaml-cpp/yaml.h>

#include "base/duration.h"
#include "model/json_path.h"
#include "base/status.h"

namespace idemproof::yaml {

struct ConfigError {
  Status status;
};

// Most nodes one file may expand to, counting every alias as the nodes it
// repeats: far above any real target or scenario file, far below a bomb.
// The longest duration a file may give (wait, after, timeouts, window...).
inline constexpr Duration kMaxDuration = std::chrono::hours(24);

inline constexpr std::uint64_t kMaxExpandedNodes = 100'000;

// Checks `text` before it is parsed into nodes: no NUL byte (a binary file),
// valid UTF-8, exactly one document, no key twice in one map (the error
// names the second), at most kMaxExpandedNodes nodes with aliases expanded.
// Errors are kInvalidConfig with file:line:column.
Status CheckYamlText(const std::string& text, const std::string& file);

// The closest candidate to `word` by edit distance, or "" when none is close.
std::string ClosestWord(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

// Test hook (tests/schema): when set, every Reader::CheckKeys reports where
// it checks (its `what`) and the keys it allows, so a test can hold the JSON
// Schemas in schemas/ to the loaders' own key tables. nullptr (the default):
// one relaxed load per call. Set it before loading, from one thread.
using KeyTableRecorder = void (*)(const std::string& what, const std::vector<std::string>& allowed);
void SetKeyTableRecorder(KeyTableRecorder recorder);

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  SourceMark MarkOf(const YAML::Node& node) const;
  [[noreturn]] void Fail(const YAML::Node& node, const std::string& message) const;
  [[noreturn]] void FailAt(const SourceMark& mark, const std::string& message) const;

  // Parses a whole document; a syntax error becomes a ConfigError with its mark.
  YAML::Node Load(const std::string& text) const;

  void ExpectMap(const YAML::Node& node, const std::string& what) const;
  // Fails on the first key of `map` not in `allowed`, suggesting the closest.
  void CheckKeys(const YAML::Node& map, const std::vector<std::string>& allowed,
                 const std::string& what) const;
  // map[key], failing with `what` when absent or null.
  YAML::Node Required(const YAML::Node& map, const std::string& key, const std::string& what) const;

  std::string String(const YAML::Node& node, const std::string& what) const;
  long long Int(const YAML::Node& node, const std::string& what) const;
  bool Bool(const YAML::Node& node, const std::string& what) const;
  // At most kMaxDuration: a longer one would overflow the clock's deadlines.
  Duration DurationOf(const YAML::Node& node, const std::string& what) const;
  // A DurationOf that is also > 0 (a deadline; 0 never means "none").
  Duration Timeout(const YAML::Node& node, const std::string& what) const;
  int HttpStatus(const YAML::Node& node, const std::string& what) const;
  JsonPath Path(const YAML::Node& node, const std::string& what) const;
  std::vector<std::string> StringList(const YAML::Node& node, const std::string& what) const;
  std::vector<std::pair<std::string, std::string>> StringPairs(const YAML::Node& node,
                                                               const std::string& what) const;
  // Plain scalars become null/bool/int/float when they read as one; quoted
  // scalars stay strings.
  nlohmann::json Json(const YAML::Node& node) const;
  // Checks {{var}} syntax (and names against `known` when non-empty).
  void CheckTemplate(const YAML::Node& node, const std::string& text,
                     const std::vector<std::string>& known) const;

 private:
  std::string file_;
};

}  // namespace idemproof::yaml
