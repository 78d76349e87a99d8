// TcpFault: what the TCP fault proxy (tcp_fault_proxy.h) does to the raw
// byte streams between a service and its own store (PostgreSQL, Redis, any
// TCP server), one kind per file in tcp_faults/ (Toxiproxy's shape):
//
//   pause      tcp_faults/pause.h      hold every byte, both ways, then resume
//   refuse     tcp_faults/refuse.h     new connections closed (or reset) at once
//   reset      tcp_faults/reset.h      RST every open connection, and new ones
//   cut-after  tcp_faults/cut_after.h  close a connection after N more bytes
//   latency    tcp_faults/latency.h    hold every chunk for a delay, in order
//
// A fault says what it does as a TcpFaultEffect; the proxy carries it out.
// It is in force from arming until its `window` (option of every tcp fault;
// absent = until healed) has passed or it is healed, whichever comes first;
// both end it once (one "heal" event).
//
// Adding a fault: one header and one .cpp in tcp_faults/ (options struct,
// `static constexpr const char* kKind`, `static Options parse(YamlOptions&)`,
// effect()), one line add_tcp_fault<YourFault>(registry) in
// tcp_faults/builtin_tcp_faults.cpp, its section in docs/injectors.md and a
// test in tests/injectors/tcp_fault_test.cpp.
//
// Thread-safety: a TcpFault is immutable once built; TcpFaultRule's state is
// atomic or touched on the proxy's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "injectors/fault_selector.h"
#include "injectors/yaml_options.h"

namespace idemproof::injectors {

struct TcpFaultEffect {
  bool pause = false;  // hold bytes in both directions while in force
  // What happens to a connection accepted while the fault is in force.
  enum class Admit { kForward, kClose, kReset } admit = Admit::kForward;
  bool reset_open = false;  // RST every connection open when it is armed
  // Close a connection once this many bytes passed (since arming) in a
  // counted direction; the bytes beyond it are not forwarded.
  std::optional<std::int64_t> cut_after;
  bool cut_upstream = true;    // service -> store counted
  bool cut_downstream = true;  // store -> service counted
  // Hold every chunk this long before writing it, in order (0 = no delay).
  std::chrono::nanoseconds latency{0};
  bool latency_upstream = true;    // service -> store delayed
  bool latency_downstream = true;  // store -> service delayed
};

class TcpFault {
 public:
  virtual ~TcpFault() = default;
  virtual const char* kind() const = 0;
  virtual TcpFaultEffect effect() const = 0;
  // How long it stays in force once armed; nullopt = until healed.
  virtual std::optional<std::chrono::nanoseconds> window() const = 0;
};

// The `window` option every tcp fault takes (> 0 when given; at most 10 min).
std::optional<std::chrono::nanoseconds> ReadTcpWindow(YamlOptions& options);

// Which ways a fault acts on a connection's bytes.
struct TcpDirections {
  bool upstream = true;    // service -> store
  bool downstream = true;  // store -> service
};
// The `direction` option (upstream | downstream | both; default both) of
// the faults that act on one way of the bytes.
TcpDirections ReadTcpDirection(YamlOptions& options);

// A fault as the proxy arms it.
struct TcpFaultRule {
  TcpFaultRule(std::shared_ptr<const TcpFault> f, FaultSettings s)
      : fault(std::move(f)), settings(std::move(s)), effect(fault->effect()), window(fault->window()) {}
  const std::shared_ptr<const TcpFault> fault;
  const FaultSettings settings;  // its name; tcp faults match no HTTP request
  const TcpFaultEffect effect;
  const std::optional<std::chrono::nanoseconds> window;
  std::atomic<std::int64_t> armed_ns{0};  // set when armed
  std::atomic<std::int64_t> id{0};        // set when armed: the proxy's serial
  std::atomic<std::int64_t> injected{0};  // times it acted (connections refused, reset, cut, held)
  std::atomic<bool> ended{false};

  // In force at steady time `now_ns`.
  bool in_force(std::int64_t now_ns) const {
    return !ended.load() && (!window || now_ns < armed_ns.load() + window->count());
  }
  // Ends it; true for the call that did (exactly one).
  bool end() { return !ended.exchange(true); }
};

}  // namespace idemproof::injectors
