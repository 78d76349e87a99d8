// ProxySettings: how a ChaosProxy (chaos_proxy.h) listens, forwards and
// times out. Apart from the proxy so its internals (proxy_exchange.h) can
// hold them without the proxy's public face.
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>

#include "base/tls_options.h"

#include "injectors/endpoint.h"
#include "injectors/fault_event.h"

namespace idemproof::injectors {

struct ProxySettings {
  Endpoint listen{"127.0.0.1", 0};
  Endpoint upstream;
  std::chrono::nanoseconds upstream_timeout = std::chrono::seconds(30);  // per upstream exchange
  std::chrono::nanoseconds client_idle_timeout = std::chrono::seconds(120);
  std::chrono::nanoseconds heal_timeout = std::chrono::seconds(5);  // drain, then force
  std::size_t body_limit = 64 * 1024 * 1024;
  // Set: the proxy speaks TLS to the upstream (an https:// target), checking
  // it as these say; the client's side stays plain HTTP on loopback.
  std::optional<TlsOptions> upstream_tls = std::nullopt;
  // True: the proxy speaks HTTP/2 to the upstream (a target that says
  // `http: 2`): h2c prior knowledge, or ALPN h2 over upstream_tls; one
  // connection per exchange (upstream_h2.h). The client's side stays HTTP/1.1.
  bool upstream_http2 = false;
  // Optional: called on the proxy's thread for every request written upstream
  // (faults' copies included) once its answer is read or lost: the egress
  // record of a proxy between a service and its downstream. Must be quick.
  std::function<void(const UpstreamExchange&)> on_exchange = nullptr;
};

}  // namespace idemproof::injectors
