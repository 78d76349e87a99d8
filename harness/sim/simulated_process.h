// SimulatedProcess: one life of the reference service's process inside the
// simulation, wired as reference-impl/server/http_server.cpp wires it: the
// real SqliteStore on the trial's database (the unconstrained claim table
// under check-then-insert, MemoryRecordStore over it under memory-store), the
// real EffectStore on the same database, ReferenceService with
// SideEffectRoutes added, and the start-up reconciliation of pending payment
// intents. Only the edges are simulated: the store is seen through
// SteppedStore, the clock is the simulation's, the provider is
// SimulatedProvider, and the check-then-insert pause is a step point.
//
// The two SQLite stores are the caller's (ProcessStores): a process holds no
// state in them but their connections, and a crash never falls inside a
// transaction (step points sit outside them), so a restart over the same
// connections sees exactly what a reopened file would: what committed.
//
// A crash is the destruction of this object (after the scheduler unwound
// every request); a restart is a new one over the same stores: what
// committed survives, nothing else does (the memory-store flaw's records
// die with the process).
//
// Thread-safety: Handle() as ReferenceService::handle_request(); the rest
// from the driver with no request in flight.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/flaw.h"
#include "idemproof/ref/memory_record_store.h"
#include "idemproof/ref/reference_service.h"
#include "idemproof/ref/side_effect_routes.h"
#include "idemproof/ref/sqlite_store.h"
#include "sim/simulated_provider.h"
#include "sim/step_scheduler.h"
#include "sim/stepped_store.h"

namespace idemproof::sim {

// The durable stores a process runs on. `durable` must have been opened with
// ProcessStoreOptions(flaw, scheduler) for the process's flaw.
struct ProcessStores {
  ref::SqliteStore& durable;
  ref::EffectStore& effects;
};

// The SqliteStore options the server would choose for `flaw`, with the pause
// between check and insert made a step point of `*scheduler` (read when the
// pause is reached, so one store can serve the schedulers of many trials).
ref::SqliteStoreOptions ProcessStoreOptions(ref::Flaw flaw, StepScheduler* const* scheduler);

class SimulatedProcess {
 public:
  // Wires the core over `stores` and reconciles. Throws ref::StoreError.
  // Every reference must outlive this object.
  SimulatedProcess(ProcessStores stores, const ref::ServiceConfig& config, const ref::Clock& clock,
                   StepScheduler& scheduler, SimulatedProvider& provider);

  HttpResponse Handle(const HttpRequest& request) {
    return service_->handle_request(request);
  }

  // Payment intents the start-up reconciliation settled.
  std::size_t reconciled() const { return reconciled_; }

  // How many orders the store holds for `biz_no` (read directly, no step).
  std::size_t OrderCount(const std::string& biz_no);

 private:
  ref::SqliteStore& durable_;
  std::unique_ptr<ref::MemoryRecordStore> memory_;
  std::unique_ptr<SteppedStore> stepped_;
  std::unique_ptr<ref::ReferenceService> service_;
  std::unique_ptr<ref::SideEffectRoutes> routes_;
  std::size_t reconciled_ = 0;
};

}  // namespace idemproof::sim
