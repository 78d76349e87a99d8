// ServiceStore: the Store a service runs on, as its options choose it: the
// SQLite file, wrapped by MemoryRecordStore under the `memory-store` flaw,
// by InstanceLocalClaimStore under `instance-local-claims`, and using the
// unconstrained claim table under `check-then-insert`. Owns what it
// opens; thread-safe like the stores it holds.
#pragma once

#include <memory>

#include "idemproof/ref/instance_local_claim_store.h"
#include "idemproof/ref/memory_record_store.h"
#include "idemproof/ref/service_options.h"
#include "idemproof/ref/sqlite_store.h"

namespace idemproof::ref {

class ServiceStore {
 public:
  // Opens options.db. Throws StoreError.
  explicit ServiceStore(const ServiceOptions& options);

  Store& store() {
    if (memory_) return *memory_;
    if (local_claims_) return *local_claims_;
    return *durable_;
  }

 private:
  std::unique_ptr<SqliteStore> durable_;
  std::unique_ptr<MemoryRecordStore> memory_;
  std::unique_ptr<InstanceLocalClaimStore> local_claims_;
};

}  // namespace idemproof::ref
