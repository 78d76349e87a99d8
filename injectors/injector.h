// Injector: one fault the harness can switch on (start) and off (heal).
//
// Every injector is built from its YAML block by a Registry (registry.h),
// carries the shared FaultSettings (name, match, count selectors, seeded
// probability) and counts what it injected. A scenario whose injectors never
// fired proved nothing: never_fired() names them so the harness can report
// "fault never fired" instead of a pass.
//
// Lifecycle: start() once; heal() any number of times (idempotent, never
// throws); the destructor heals. ActiveFaults heals every injector it holds,
// in reverse start order, when it goes out of scope, also during stack
// unwinding, so a failing step never leaves a fault armed.
//
// Thread-safety: start/heal from one (the interpreter's) thread; counters()
// from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "injectors/fault_selector.h"
#include "base/status.h"

namespace idemproof::injectors {

class ChaosProxy;
class FaultEventLog;
class TcpFaultProxy;

// What an injector may act on; pointers are borrowed and must outlive the
// injector's armed period.
struct InjectorContext {
  ChaosProxy* proxy = nullptr;       // the proxy lane; required by proxy faults
  FaultEventLog* events = nullptr;   // where start/heal events go (optional)
  TcpFaultProxy* tcp_proxy = nullptr;  // a tcp egress; required by tcp faults (tcp_fault.h)
};

struct InjectorCounters {
  std::string kind;
  std::string name;
  FaultCounters counts;
  bool fired() const { return counts.injected > 0; }
};

class Injector {
 public:
  virtual ~Injector() = default;
  virtual const std::string& kind() const = 0;
  virtual const FaultSettings& settings() const = 0;
  // Arms the fault. Error (needs_proxy, invalid_state) leaves nothing armed.
  virtual Status start(const InjectorContext& context) = 0;
  // Disarms; effects already in flight finish. Idempotent.
  virtual void heal() noexcept = 0;
  virtual InjectorCounters counters() const = 0;
};

// Names ("kind/name") of the injectors that never fired.
std::vector<std::string> never_fired(const std::vector<InjectorCounters>& counters);

// The injectors armed in one scope; heals them all on destruction.
class ActiveFaults {
 public:
  explicit ActiveFaults(InjectorContext context) : context_(context) {}
  ~ActiveFaults() { heal_all(); }
  ActiveFaults(const ActiveFaults&) = delete;
  ActiveFaults& operator=(const ActiveFaults&) = delete;

  // Starts `injector` and keeps it; on error it is dropped (and healed).
  Status start(std::unique_ptr<Injector> injector);
  // Heals in reverse start order; keeps the injectors for counters().
  void heal_all() noexcept;
  std::vector<InjectorCounters> counters() const;

 private:
  InjectorContext context_;
  std::vector<std::unique_ptr<Injector>> injectors_;
};

}  // namespace idemproof::injectors
