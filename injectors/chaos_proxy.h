// ChaosProxy: an HTTP/1.1-aware proxy between the harness's client and the
// target, where proxy faults (proxy_fault.h, one file each in proxy_faults/)
// act on single exchanges.
//
// The proxy binds 127.0.0.1 on an ephemeral port by default (port() after
// start()), keeps connections alive on both sides (one upstream connection
// per client connection; hedged and replayed copies use extra, short-lived
// ones), and forwards requests unchanged. Every fault that fires is recorded
// as a FaultEvent in the log given at construction, with the upstream answers
// the client never saw. An upstream that cannot be reached or does not answer
// within upstream_timeout yields 502/504 to the client (and an "upstream-error"
// event); the proxy never retries on its own, because a silent retry would be
// a duplicate the harness did not ask for.
//
// heal() stops accepting, closes every connection (client and upstream),
// cancels every timer, lets the sessions drain and joins the proxy's thread;
// afterwards no socket is listening and no proxy thread runs. The destructor
// heals, so a proxy unwound by an exception is healed too.
//
// Thread-safety: all methods are safe to call from any thread except that
// start() and heal() must not race each other.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "injectors/endpoint.h"
#include "injectors/fault_event.h"
#include "injectors/proxy_settings.h"
#include "base/status.h"

namespace idemproof::injectors {

struct ProxyFaultRule;

struct ProxyCounters {
  std::int64_t connections_accepted = 0;
  std::int64_t connections_open = 0;     // client connections not yet closed
  std::int64_t requests = 0;             // requests read from clients
  std::int64_t upstream_sends = 0;       // requests written upstream (copies included)
  std::int64_t faults_injected = 0;
};

class ChaosProxy {
 public:
  // `events` (borrowed, may be null) receives every injected fault.
  ChaosProxy(ProxySettings settings, FaultEventLog* events);
  ~ChaosProxy();
  ChaosProxy(const ChaosProxy&) = delete;
  ChaosProxy& operator=(const ChaosProxy&) = delete;

  // Binds, listens and starts the proxy thread. bind_failed / resolve_failed /
  // invalid_state (started twice or after heal).
  Status start();
  // Listening endpoint (port resolved); valid after a successful start().
  Endpoint endpoint() const;

  // Offers every later request to `rule` (after the rules armed before it).
  void arm(std::shared_ptr<ProxyFaultRule> rule);
  // Stops offering requests to `rule`; exchanges it is acting on finish.
  void disarm(const std::shared_ptr<ProxyFaultRule>& rule);

  // See above. Idempotent, never throws; true when everything drained within
  // heal_timeout, false when the thread had to be stopped by force.
  bool heal() noexcept;
  bool running() const;

  ProxyCounters counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace idemproof::injectors
