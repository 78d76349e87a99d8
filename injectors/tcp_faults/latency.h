// latency (tcp): every chunk forwarded in the chosen `direction`
// (`upstream`: service -> store, `downstream`: store -> service, `both`, the
// default) is held for `delay` (required, > 0, at most 1m) before it is
// written, in order per connection, while in force (`window`, else until
// healed). Ending it flushes: what is held is written at once. A connection
// reset or closed meanwhile loses what it still held. A slow store: a write
// sent just before a reset is still in flight when it comes.
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

struct LatencyOptions {
  std::optional<std::chrono::nanoseconds> window;
  std::chrono::nanoseconds delay{0};
  TcpDirections directions;
};

class Latency final : public TcpFault {
 public:
  static constexpr const char* kKind = "latency";
  // Errors go into `options`.
  static LatencyOptions parse(YamlOptions& options);

  explicit Latency(LatencyOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  void on_chunk(TcpChunk& chunk) const override;
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const LatencyOptions& options() const { return options_; }

 private:
  LatencyOptions options_;
};

}  // namespace idemproof::injectors
