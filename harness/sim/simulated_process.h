// SimulatedProcess: one life of the reference service's process inside the
// simulation, wired as reference-impl/server/http_server.cpp wires it: the
// real SqliteStore on the trial's file (the unconstrained claim table under
// check-then-insert, MemoryRecordStore over it under memory-store), the real
// EffectStore on the same file, ReferenceService with SideEffectRoutes added,
// and the start-up reconciliation of pending payment intents. Only the edges
// are simulated: the store is seen through SteppedStore, the clock is the
// simulation's, the provider is SimulatedProvider, and the check-then-insert
// pause is a step point.
//
// A crash is the destruction of this object (after the scheduler unwound
// every request); a restart is a new one over the same file: what committed
// survives, nothing else does.
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

class SimulatedProcess {
 public:
  // Opens (creating) the store at `db_path` and reconciles. Throws
  // ref::StoreError. Every reference must outlive this object.
  SimulatedProcess(const std::string& db_path, const ref::ServiceConfig& config,
                   const ref::Clock& clock, StepScheduler& scheduler, SimulatedProvider& provider,
                   std::vector<ClaimSeen>& claims);

  HttpResponse Handle(const HttpRequest& request) {
    return service_->handle_request(request);
  }

  // Payment intents the start-up reconciliation settled.
  std::size_t reconciled() const { return reconciled_; }

  // How many orders the store holds for `biz_no` (read directly, no step).
  std::size_t OrderCount(const std::string& biz_no);

 private:
  std::unique_ptr<ref::SqliteStore> durable_;
  std::unique_ptr<ref::MemoryRecordStore> memory_;
  std::unique_ptr<SteppedStore> stepped_;
  std::unique_ptr<ref::EffectStore> effects_;
  std::unique_ptr<ref::ReferenceService> service_;
  std::unique_ptr<ref::SideEffectRoutes> routes_;
  std::size_t reconciled_ = 0;
};

}  // namespace idemproof::sim
