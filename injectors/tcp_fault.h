// TcpFault: what the TCP fault proxy (tcp_fault_proxy.h) does to the raw
// byte streams between a service and its own store (PostgreSQL, Redis, any
// TCP server), one kind per file in tcp_faults/ (Toxiproxy's shape):
//
//   pause      tcp_faults/pause.h      hold every byte, both ways, then resume
//   refuse     tcp_faults/refuse.h     new connections closed (or reset) at once
//   reset      tcp_faults/reset.h      RST every open connection, and new ones
//   cut-after  tcp_faults/cut_after.h  close a connection after N more bytes
//   latency    tcp_faults/latency.h    hold every chunk for a delay, in order
//   store-error tcp_faults/store_error.h answer a write with the store's own error
//
// A fault owns its behaviour, as a ProxyFault (proxy_fault.h) does: the proxy
// calls its hooks, on the proxy's thread, while it is in force, and the fault
// acts with the means the hook is given (close a connection, rewrite, cut,
// delay or hold a chunk, record what it did); the proxy only carries the
// bytes and keeps the deadlines. Several faults in force act in arming order:
//   on_arm     once, when armed: the connections open then (reset: RST them)
//   on_accept  a connection accepted, before it reaches the store (refuse)
//   on_chunk   a chunk read from one side, before it is written to the other
// A fault is in force from arming until its `window` (option of every tcp
// fault; absent = until healed) has passed or it is healed, whichever comes
// first; both end it once (one "heal" event).
//
// Adding a fault:
//   1. one header and one .cpp in tcp_faults/: a struct of options, a class
//      derived from TcpFault with `static constexpr const char* kKind`,
//      `static Options parse(YamlOptions&)` (ReadTcpWindow, ReadTcpDirection;
//      errors go into the YamlOptions), a constructor from the options,
//      window() and the hooks it needs; it includes only this header;
//   2. one line add_tcp_fault<YourFault>(registry) in
//      tcp_faults/builtin_tcp_faults.cpp (and its .cpp in
//      injectors/CMakeLists.txt);
//   3. its row in docs/injectors.md and a test in tests/injectors/
//      (tcp_fault_recipe_test.cpp is a whole fault, defined in the test).
//
// Thread-safety: a TcpFault is immutable once built and its hooks run on the
// proxy's thread; TcpFaultRule's state is atomic or touched on the proxy's
// thread only.
#pragma once

#include <any>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "injectors/fault_selector.h"
#include "injectors/yaml_options.h"

namespace idemproof::injectors {

enum class TcpDirection { kUpstream, kDownstream };  // service -> store, store -> service
// "service->store" or "store->service" (the events' words).
const char* TcpDirectionName(TcpDirection direction);
// "150ms" (the events' words).
std::string TcpMillis(std::chrono::nanoseconds duration);

// One connection through the proxy, as a hook sees it.
class TcpLink {
 public:
  virtual ~TcpLink() = default;
  virtual std::uint64_t id() const = 0;  // 1, 2, ... in accepting order
  // Ends it both ways: an orderly close, or an RST on both sides (`reset`,
  // SO_LINGER 0). What is held for it is dropped. Once; later calls do nothing.
  virtual void close(bool reset) = 0;
  virtual bool closed() const = 0;
};

// What every hook may do: record an act of its fault, and keep a small mark
// per connection (a hook's state lives here, not in the fault).
class TcpFaultAct {
 public:
  virtual ~TcpFaultAct() = default;
  // Counts one act of the fault and logs an "injected" event with `detail`.
  virtual void record(std::string detail) = 0;

 protected:
  TcpFaultAct() = default;
};

// on_arm's means: the connections open when the fault was armed.
class TcpArm : public TcpFaultAct {
 public:
  virtual std::vector<TcpLink*> open_links() = 0;
};

// on_accept's means: the connection just accepted.
class TcpAccept : public TcpFaultAct {
 public:
  virtual TcpLink& link() = 0;
};

// on_chunk's means: one chunk read from one side of a connection.
class TcpChunk : public TcpFaultAct {
 public:
  virtual TcpLink& link() = 0;
  virtual TcpDirection direction() const = 0;
  // The bytes to be written (a fault may rewrite them in place); fewer than
  // were read once a cut has shortened them.
  virtual std::span<char> bytes() = 0;
  virtual std::size_t read_size() const = 0;  // bytes read
  // True the first time this fault asks about this connection (an act
  // recorded once per connection).
  virtual bool first_on_link() = 0;
  // This fault's count of bytes on this connection, per direction (its own
  // to keep; zero at the start).
  virtual std::int64_t& counted() = 0;
  // Write only the first `keep` bytes, then close the connection. The
  // smallest cut of the faults in force wins; `detail` is recorded (once the
  // chunk is handled) for the fault whose cut won.
  virtual void cut(std::size_t keep, std::string detail) = 0;
  // Write it no sooner than `delay` after it was read, in order behind what
  // is held for its direction (the longest delay wins). Ending this fault
  // (window, heal) writes what it held at once.
  virtual void delay(std::chrono::nanoseconds delay) = 0;
  // Hold it, and every read after it on its side, while this fault is in
  // force; it is written afterwards, not lost.
  virtual void hold() = 0;
  // Write `bytes` instead of the chunk (longer, shorter or nothing now): a
  // fault that reads a protocol's framing holds a partial message back and
  // rewrites whole ones. bytes() is `bytes` afterwards.
  virtual void replace(std::string bytes) = 0;
  // This fault's own state for this connection, both directions (empty at the
  // start; a protocol parser's buffer lives here).
  virtual std::any& state() = 0;
  // This fault's own count across every connection (zero when armed).
  virtual std::int64_t& tally() = 0;
};

class TcpFault {
 public:
  virtual ~TcpFault() = default;
  virtual const char* kind() const = 0;
  // How long it stays in force once armed; nullopt = until healed.
  virtual std::optional<std::chrono::nanoseconds> window() const = 0;
  // The hooks (see above); each does nothing unless the fault overrides it.
  virtual void on_arm(TcpArm&) const {}
  virtual void on_accept(TcpAccept&) const {}
  virtual void on_chunk(TcpChunk&) const {}
};

// The `window` option every tcp fault takes (> 0 when given; at most 10 min).
std::optional<std::chrono::nanoseconds> ReadTcpWindow(YamlOptions& options);

// Which ways a fault acts on a connection's bytes.
struct TcpDirections {
  bool upstream = true;    // service -> store
  bool downstream = true;  // store -> service
  bool has(TcpDirection d) const { return d == TcpDirection::kUpstream ? upstream : downstream; }
};
// The `direction` option (upstream | downstream | both; default both) of
// the faults that act on one way of the bytes.
TcpDirections ReadTcpDirection(YamlOptions& options);

// A fault as the proxy arms it.
struct TcpFaultRule {
  TcpFaultRule(std::shared_ptr<const TcpFault> f, FaultSettings s)
      : fault(std::move(f)), settings(std::move(s)), window(fault->window()) {}
  const std::shared_ptr<const TcpFault> fault;
  const FaultSettings settings;  // its name; tcp faults match no HTTP request
  const std::optional<std::chrono::nanoseconds> window;
  std::atomic<std::int64_t> armed_ns{0};  // set when armed
  std::atomic<std::int64_t> id{0};        // set when armed: the proxy's serial
  std::atomic<std::int64_t> injected{0};  // times it acted (connections refused, reset, cut, held)
  std::atomic<bool> ended{false};
  std::int64_t tally = 0;  // the fault's own count (TcpChunk::tally), the proxy's thread only

  // In force at steady time `now_ns`.
  bool in_force(std::int64_t now_ns) const {
    return !ended.load() && (!window || now_ns < armed_ns.load() + window->count());
  }
  // Ends it; true for the call that did (exactly one).
  bool end() { return !ended.exchange(true); }
};

}  // namespace idemproof::injectors
