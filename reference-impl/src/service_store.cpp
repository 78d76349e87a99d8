#include "idemproof/ref/service_store.h"

namespace idemproof::ref {

ServiceStore::ServiceStore(const ServiceOptions& options) {
  SqliteStoreOptions sqlite;
  if (options.service.flaw == Flaw::check_then_insert) {
    sqlite.discipline = ClaimDiscipline::check_then_insert;
    sqlite.check_insert_pause = options.check_insert_pause;
  }
  if (options.service.flaw == Flaw::expiry_race) {
    sqlite.discipline = ClaimDiscipline::read_then_replace;
    sqlite.check_insert_pause = options.check_insert_pause;
  }
  durable_ = std::make_unique<SqliteStore>(options.db, sqlite);
  if (options.service.flaw == Flaw::memory_store) {
    memory_ = std::make_unique<MemoryRecordStore>(*durable_);
  }
  if (options.service.flaw == Flaw::instance_local_claims) {
    local_claims_ = std::make_unique<InstanceLocalClaimStore>(*durable_);
  }
}

}  // namespace idemproof::ref
