// FaultSettings and FaultSelector: the settings every injector shares, and the
// decision "does this fault fire for this request?".
//
// The settings are the wrapper around each injector's own options: a name, a
// match on method and path, count selectors and a seeded probability. They are
// read from the same YAML block as the injector's options:
//
//   - drop-response: {name: lost-answer, match: {method: POST, path: /orders},
//                     first: 2, every: 1, probability: 0.5, seed: 7}
//
// Matching requests are numbered 1, 2, 3, ... in the order the selector sees
// them. A matching request is a candidate when its number is <= `first` (if
// set) and a multiple of `every` (if set); a candidate fires with
// `probability`, drawn from a generator seeded with `seed`, so the same seed
// and the same order of requests give the same faults. `limit` caps the total
// number of injections.
//
// `path` matches the request-target's path (query excluded) exactly, or by
// prefix when it ends in `*` (`/orders*`). `method` matches case-sensitively.
//
// Thread-safety: FaultSelector is safe to call from several threads.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "injectors/yaml_options.h"
#include "base/thread_annotations.h"

namespace idemproof::injectors {

struct FaultSettings {
  std::string name;                  // defaults to the kind
  std::optional<std::string> method; // absent = any
  std::optional<std::string> path;   // absent = any; trailing '*' = prefix
  std::optional<std::int64_t> first; // fire only among the first N matching requests
  std::optional<std::int64_t> every; // fire only on every k-th matching request
  std::optional<std::int64_t> limit; // at most this many injections in total
  double probability = 1.0;
  std::uint64_t seed = 0;

  // Reads name, match, first, every, limit, probability, seed from `options`
  // (errors stay in `options`). `kind` is the default name.
  static FaultSettings read(YamlOptions& options, const std::string& kind);
};

// What a selector (and so an injector) saw and did.
struct FaultCounters {
  std::int64_t seen = 0;      // requests offered to the selector
  std::int64_t matched = 0;   // of those, matching method and path
  std::int64_t injected = 0;  // of those, where the fault fired
};

class FaultSelector {
 public:
  explicit FaultSelector(FaultSettings settings);

  // Decides for one request; counts it. `target` may carry a query string.
  bool select(std::string_view method, std::string_view target);
  // Whether method and target match, without counting.
  bool matches(std::string_view method, std::string_view target) const;

  const FaultSettings& settings() const { return settings_; }
  FaultCounters counters() const;

 private:
  const FaultSettings settings_;
  mutable base::Mutex mu_;
  std::mt19937_64 rng_ GUARDED_BY(mu_);
  FaultCounters counters_ GUARDED_BY(mu_);
};

}  // namespace idemproof::injectors
