// ChaosControl: the `/_chaos` settings that drive the business step from
// outside. `delay_ms` makes every following business step sleep; `fail_next`
// makes the next n business steps fail as if a downstream had answered
// `fail_status`. Thread-safe.
//
// One request may also ask for chaos of its own, in its query string (the
// fingerprint ignores the query, so a retry without it is the same request):
// `slow_ms=N` (0..600000) makes its business step sleep N ms more;
// `fail_status=S` (400..599) makes its business step fail as if a downstream
// had answered S. Only the request carrying them is affected.
#pragma once

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace idemproof::ref {

struct ChaosSettings {
  std::int64_t delay_ms = 0;
  std::int64_t fail_next = 0;
  int fail_status = 503;

  nlohmann::json to_json() const;
};

// What one business step must suffer.
struct ChaosForStep {
  std::chrono::milliseconds delay{0};
  std::optional<int> fail_status;  // set: the downstream answered this status
};

// The chaos a request's query string asks for (see above); a message on a
// malformed or out-of-range value.
std::optional<std::string> request_chaos(std::string_view query, ChaosForStep& out);

class ChaosControl {
 public:
  ChaosSettings settings() const;
  // Merges the fields present in `patch` into the settings. On a wrong type,
  // an out-of-range value or an unknown field, returns a message and changes
  // nothing.
  std::optional<std::string> apply(const nlohmann::json& patch);
  void reset();
  // Called once at the start of each business step; consumes one `fail_next`.
  ChaosForStep begin_business_step();

 private:
  mutable std::mutex mu_;
  ChaosSettings settings_;
};

}  // namespace idemproof::ref
