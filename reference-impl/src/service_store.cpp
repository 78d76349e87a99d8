#include "idemproof/ref/service_store.h"

#include "idemproof/ref/postgres_store.h"
#include "idemproof/ref/sqlite_store.h"

namespace idemproof::ref {

ServiceStore::ServiceStore(const ServiceOptions& options) {
  ClaimOptions claim;
  if (options.service.flaw == Flaw::check_then_insert) {
    claim.discipline = ClaimDiscipline::check_then_insert;
    claim.check_insert_pause = options.check_insert_pause;
  }
  if (options.service.flaw == Flaw::expiry_race) {
    claim.discipline = ClaimDiscipline::read_then_replace;
    claim.check_insert_pause = options.check_insert_pause;
  }
  if (is_postgres_url(options.store)) {
    PostgresStoreOptions postgres;
    postgres.claim = claim;
    auto durable = std::make_unique<PostgresStore>(options.store, postgres);
    postgres_ = durable.get();
    durable_ = std::move(durable);
  } else {
    durable_ = std::make_unique<SqliteStore>(options.db, claim);
  }
  if (options.service.flaw == Flaw::memory_store) {
    memory_ = std::make_unique<MemoryRecordStore>(*durable_);
  }
  if (options.service.flaw == Flaw::memory_fingerprint)
    memory_fingerprints_ = std::make_unique<MemoryFingerprintStore>(*durable_);
  if (options.service.flaw == Flaw::whole_store_rewrite) whole_file_ = std::make_unique<WholeFileAnswerStore>(*durable_);
  if (options.service.flaw == Flaw::instance_local_claims) {
    local_claims_ = std::make_unique<InstanceLocalClaimStore>(*durable_);
  }
}

}  // namespace idemproof::ref
