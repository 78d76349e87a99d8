// refuse (tcp): a connection accepted while in force is closed at once
// (`how: close`, the default: FIN, an RST when the service had already
// written to it) or reset (`how: reset`: RST) and never
// reaches the store; connections already open go on. A store that refuses
// new clients for a while (down, restarting, out of connections).
//
// Thread-safety: immutable once built.
#pragma once

#include "injectors/tcp_fault.h"

namespace idemproof::injectors {

struct RefuseOptions {
  std::optional<std::chrono::nanoseconds> window;
  bool reset = false;
};

class Refuse final : public TcpFault {
 public:
  static constexpr const char* kKind = "refuse";
  // Errors go into `options`.
  static RefuseOptions parse(YamlOptions& options);

  explicit Refuse(RefuseOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  void on_accept(TcpAccept& accept) const override;
  // Ends the connection just accepted (an RST when `reset`) and records it;
  // reset (tcp) turns connections away the same way.
  static void TurnAway(TcpAccept& accept, bool reset);
  std::optional<std::chrono::nanoseconds> window() const override { return options_.window; }
  const RefuseOptions& options() const { return options_; }

 private:
  RefuseOptions options_;
};

}  // namespace idemproof::injectors
