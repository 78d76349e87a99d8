#include "sim/simulated_process.h"

namespace idemproof::sim {

ref::SqliteStoreOptions ProcessStoreOptions(ref::Flaw flaw, StepScheduler* const* scheduler) {
  // As ServiceStore chooses, with the pause between check and insert made a
  // step point instead of a sleep.
  ref::SqliteStoreOptions sqlite;
  if (flaw == ref::Flaw::check_then_insert) {
    sqlite.discipline = ref::ClaimDiscipline::check_then_insert;
    sqlite.between_check_and_insert = [scheduler] { (*scheduler)->StepPoint("claim: insert (after its check)"); };
  }
  return sqlite;
}

SimulatedProcess::SimulatedProcess(ProcessStores stores, const ref::ServiceConfig& config,
                                   const ref::Clock& clock, StepScheduler& scheduler,
                                   SimulatedProvider& provider)
    : durable_(stores.durable) {
  ref::Store* store = &durable_;
  if (config.flaw == ref::Flaw::memory_store) {
    memory_ = std::make_unique<ref::MemoryRecordStore>(durable_);
    store = memory_.get();
  }
  stepped_ = std::make_unique<SteppedStore>(*store, scheduler);
  service_ = std::make_unique<ref::ReferenceService>(config, *stepped_, clock);
  routes_ = std::make_unique<ref::SideEffectRoutes>(config, *stepped_, stores.effects, clock, &provider);
  service_->add_extension(*routes_);
  reconciled_ = routes_->reconcile_pending();
}

std::size_t SimulatedProcess::OrderCount(const std::string& biz_no) {
  std::size_t count = 0;
  durable_.transact([&](ref::StoreTransaction& tx) {
    count = tx.find_orders(biz_no).size();
    return false;  // read only
  });
  return count;
}

}  // namespace idemproof::sim
