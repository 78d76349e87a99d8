#include "sim/simulated_process.h"

namespace idemproof::sim {

SimulatedProcess::SimulatedProcess(const std::string& db_path, const ref::ServiceConfig& config,
                                   const ref::Clock& clock, StepScheduler& scheduler,
                                   SimulatedProvider& provider, std::vector<ClaimSeen>& claims) {
  // As ServiceStore chooses, with the pause between check and insert made a
  // step point instead of a sleep.
  ref::SqliteStoreOptions sqlite;
  if (config.flaw == ref::Flaw::check_then_insert) {
    sqlite.discipline = ref::ClaimDiscipline::check_then_insert;
    sqlite.between_check_and_insert = [&scheduler] {
      scheduler.StepPoint("claim: insert (after its check)");
    };
  }
  durable_ = std::make_unique<ref::SqliteStore>(db_path, sqlite);
  ref::Store* store = durable_.get();
  if (config.flaw == ref::Flaw::memory_store) {
    memory_ = std::make_unique<ref::MemoryRecordStore>(*durable_);
    store = memory_.get();
  }
  stepped_ = std::make_unique<SteppedStore>(*store, scheduler, claims);
  effects_ = std::make_unique<ref::EffectStore>(db_path);
  service_ = std::make_unique<ref::ReferenceService>(config, *stepped_, clock);
  routes_ = std::make_unique<ref::SideEffectRoutes>(config, *stepped_, *effects_, clock, &provider);
  service_->add_extension(*routes_);
  reconciled_ = routes_->reconcile_pending();
}

std::size_t SimulatedProcess::OrderCount(const std::string& biz_no) {
  std::size_t count = 0;
  durable_->transact([&](ref::StoreTransaction& tx) {
    count = tx.find_orders(biz_no).size();
    return false;  // read only
  });
  return count;
}

}  // namespace idemproof::sim
