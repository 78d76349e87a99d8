// ChargeFaults: what the next charges must suffer, set per scenario through
// `POST /_faults` and cleared by `DELETE /_faults`.
//
//   fail               answer `status` (default 503), commit nothing
//   delay              sleep `delay_ms`, then commit and answer
//   timeout            commit, then hold the connection unanswered for
//                      `delay_ms` (default 60000) or until the caller leaves
//   kill_after_commit  commit, SIGKILL process `pid` (the caller), then close
//                      the connection unanswered
//   kill_after_answer  commit, SIGSTOP `pid`, write the answer, SIGKILL `pid`:
//                      the answer left, the caller never got to record it
//
// A fault applies to the next `times` charges (default 1), then the stub is
// healthy again. Thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/thread_annotations.h"

namespace idemproof::stub {

enum class FaultMode { none, fail, delay, timeout, kill_after_commit, kill_after_answer };

const char* fault_mode_name(FaultMode mode);

struct ChargeFault {
  FaultMode mode = FaultMode::none;
  std::int64_t times = 1;
  int status = 503;
  std::int64_t delay_ms = 0;
  std::int64_t pid = 0;  // for the kill modes; > 1

  nlohmann::json to_json() const;
};

class ChargeFaults {
 public:
  // Replaces the armed fault with `spec`. Returns an error message (and
  // changes nothing) for an unknown mode or field, a wrong type, or a kill
  // mode without a pid > 1.
  std::optional<std::string> arm(const nlohmann::json& spec);
  void clear();
  ChargeFault armed() const;
  // The fault for the charge arriving now (consumes one of `times`).
  ChargeFault take();
  // How many charges a fault was applied to since start.
  std::int64_t injected() const;

 private:
  mutable base::Mutex mu_;
  ChargeFault armed_ GUARDED_BY(mu_);
  std::int64_t injected_ GUARDED_BY(mu_) = 0;
};

}  // namespace idemproof::stub
