// pause (tcp): stop forwarding in both directions while in force (`window`,
// else until healed), then resume: the bytes read meanwhile are held, not
// lost, and flow on afterwards. A store that hangs, then answers late.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

struct PauseOptions {
  std::optional<std::chrono::nanoseconds> window;
};

class Pause final : public TcpFault {
 public:
  static constexpr const char* kKind = "pause";
  // Errors go into `options`.
  static PauseOptions parse(YamlOptions& options);

  explicit Pause(PauseOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  void on_chunk(TcpChunk& chunk) const override;
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const PauseOptions& options() const { return options_; }

 private:
  PauseOptions options_;
};

}  // namespace idemproof::injectors
