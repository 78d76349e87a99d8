// reset (tcp): RST every connection open when it is armed (SO_LINGER 0, so
// the service and the store both see a reset, not an orderly close), and
// every new one while in force. A store that crashed or a network that
// dropped its state. (On an http hop, `reset` is proxy_faults/reset.h.)
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

struct ResetConnectionsOptions {
  std::optional<std::chrono::nanoseconds> window;
};

class ResetConnections final : public TcpFault {
 public:
  static constexpr const char* kKind = "reset";
  // Errors go into `options`.
  static ResetConnectionsOptions parse(YamlOptions& options);

  explicit ResetConnections(ResetConnectionsOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  void on_arm(TcpArm& arm) const override;
  void on_accept(TcpAccept& accept) const override;
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const ResetConnectionsOptions& options() const { return options_; }

 private:
  ResetConnectionsOptions options_;
};

}  // namespace idemproof::injectors
