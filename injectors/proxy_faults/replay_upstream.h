// replay-upstream: a gateway retry the client never sees. The proxy sends
// the same request upstream `times` more times (default 1, at most 16):
// after the first answer (after: response, default), or after a timeout
// (after: 100ms: each copy goes out on a fresh connection when the one
// before has not answered by then). The client gets one answer: the last
// copy's; the fault event carries the others.
//
// Thread-safety: immutable once built.
#pragma once

#include <chrono>
#include <optional>

#include "injectors/proxy_fault.h"

namespace idemproof::injectors {

struct ReplayUpstreamOptions {
  std::optional<std::chrono::nanoseconds> replay_after;  // nullopt: after the first answer
  int times = 1;
};

class ReplayUpstream final : public ProxyFault {
 public:
  static constexpr const char* kKind = "replay-upstream";
  // Reads after and times; errors go into `options`.
  static ReplayUpstreamOptions parse(YamlOptions& options);

  explicit ReplayUpstream(ReplayUpstreamOptions options) : options_(options) {}
  const char* kind() const override { return kKind; }
  ProxyTask<bool> act(ProxyExchange& exchange) const override;
  const ReplayUpstreamOptions& options() const { return options_; }

 private:
  ReplayUpstreamOptions options_;
};

}  // namespace idemproof::injectors
