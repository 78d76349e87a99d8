// ProxyFault: what the chaos proxy does to one HTTP exchange, one kind per
// file in proxy_faults/ (Toxiproxy's shape):
//
//   drop-response    proxy_faults/drop_response.h
//   replay-upstream  proxy_faults/replay_upstream.h
//   hedge            proxy_faults/hedge.h
//   delay            proxy_faults/delay.h
//   reset            proxy_faults/reset.h
//   kill-after-answer proxy_faults/kill_after_answer.h (egress: the side-effect boundary)
//   fail             proxy_faults/fail.h (answer 5xx instead of forwarding)
//
// The proxy's session reads a request and offers it to the armed rules in
// arming order; the first whose selector fires owns the exchange: the session
// calls its fault's act() and carries on with the connection only when act()
// says so. Later rules do not see that request; a request no rule takes is
// forwarded unchanged.
//
// Adding a fault (also an egress one, with the proxy between the service and
// its own downstream, e.g. "answer 5xx instead of the downstream's answer" or
// "kill the caller right after the downstream answered"):
//   1. one header and one .cpp in proxy_faults/: a struct of options, a class
//      derived from ProxyFault with `static constexpr const char* kKind`,
//      `static Options parse(YamlOptions&)` (errors go into the YamlOptions,
//      positioned at line:column; unknown keys are rejected by the Registry),
//      a constructor from the options and act(), built from ProxyExchange's
//      means (send_upstream, answer, sleep, close_client, UpstreamFlight);
//      what act() needs beyond the exchange (a process to kill) it gets in
//      its options or constructor, never from a global;
//   2. one line add_proxy_fault<YourFault>(registry) in
//      proxy_faults/builtin_proxy_faults.cpp (proxy_fault_injector.h);
//   3. its section in docs/injectors.md and a test in tests/injectors/.
//
// The fault files include only this header (and the proxy's means): the
// registry and the proxy depend on them, never the other way round.
//
// Thread-safety: a ProxyFault is immutable once built and act() runs on the
// proxy's thread; ProxyFaultRule is immutable apart from its selector, which
// is thread-safe.
#pragma once

#include <memory>
#include <string>

#include "injectors/fault_selector.h"
#include "injectors/proxy_exchange.h"
#include "injectors/yaml_options.h"

namespace idemproof::injectors {

class ProxyFault {
 public:
  virtual ~ProxyFault() = default;
  // The kind as written in scenario files ("drop-response").
  virtual const char* kind() const = 0;
  // Owns one exchange: `exchange` holds the request as read and the fault
  // event, stamped; act() fills in the event and records it once. True when
  // the client's connection may carry the next request.
  virtual ProxyTask<bool> act(ProxyExchange& exchange) const = 0;
};

// A fault paired with its FaultSelector, as the proxy arms it.
struct ProxyFaultRule {
  ProxyFaultRule(std::shared_ptr<const ProxyFault> f, FaultSettings settings)
      : fault(std::move(f)), selector(std::move(settings)) {}
  const std::shared_ptr<const ProxyFault> fault;
  FaultSelector selector;
};

}  // namespace idemproof::injectors
