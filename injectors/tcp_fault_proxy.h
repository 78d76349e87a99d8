// TcpFaultProxy: a byte-level proxy between a service and its own store
// (a target's `egress:` with `protocol: tcp`), where tcp faults (tcp_fault.h,
// one file each in tcp_faults/) act on whole connections: no protocol is
// parsed, so it fits PostgreSQL, Redis or any TCP server alike.
//
// It binds 127.0.0.1 on an ephemeral port (endpoint() after start()) and,
// for every connection accepted, opens one to the upstream and copies bytes
// both ways (a half-close is passed on). Every fault that acts is a
// FaultEvent in the log given at construction (phase "injected"), and the
// end of a fault's window is its "heal" event.
//
// Deadlines: connecting upstream (connect_timeout), a write the peer does not
// take (io_timeout) and a connection idle both ways (idle_timeout) end the
// connection; a pause holds bytes no longer than the fault is in force, a
// latency each chunk its delay (a reset or heal drops what it still holds).
// heal() stops accepting, closes every connection, ends every armed fault
// and joins the proxy's thread; the destructor heals.
//
// Thread-safety: all methods from any thread, except that start() and heal()
// must not race each other.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "injectors/endpoint.h"
#include "injectors/fault_event.h"

namespace idemproof::injectors {

struct TcpFaultRule;

struct TcpProxySettings {
  Endpoint listen{"127.0.0.1", 0};
  Endpoint upstream;
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
  std::chrono::nanoseconds io_timeout = std::chrono::seconds(30);     // one write
  std::chrono::nanoseconds idle_timeout = std::chrono::minutes(10);   // no byte either way
  std::chrono::nanoseconds heal_timeout = std::chrono::seconds(5);    // drain, then force
};

struct TcpProxyCounters {
  std::int64_t connections_accepted = 0;
  std::int64_t connections_open = 0;
  std::int64_t bytes_upstream = 0;    // service -> store, forwarded
  std::int64_t bytes_downstream = 0;  // store -> service, forwarded
};

class TcpFaultProxy {
 public:
  // `events` (borrowed, may be null) receives every fault's events.
  TcpFaultProxy(TcpProxySettings settings, FaultEventLog* events);
  ~TcpFaultProxy();
  TcpFaultProxy(const TcpFaultProxy&) = delete;
  TcpFaultProxy& operator=(const TcpFaultProxy&) = delete;

  // Binds, listens, starts the thread. kUnavailable when it cannot listen,
  // kInternal when started twice.
  Status start();
  Endpoint endpoint() const;

  // Puts `rule` in force now (a reset acts on the open connections at once).
  // REQUIRES: started, `rule` armed nowhere before.
  void arm(std::shared_ptr<TcpFaultRule> rule);
  // Takes `rule` out of force; true when it was still in force (its window
  // had not ended). Bytes a pause held flow again.
  bool disarm(const std::shared_ptr<TcpFaultRule>& rule);

  // See above. Idempotent, never throws; false when the thread had to be
  // stopped by force.
  bool heal() noexcept;
  TcpProxyCounters counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace idemproof::injectors
