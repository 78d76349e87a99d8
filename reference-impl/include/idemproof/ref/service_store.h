// ServiceStore: the Store a service runs on, as its options choose it: the
// PostgreSQL database of --store when given, else the SQLite file of --db;
// wrapped by MemoryRecordStore under the `memory-store` flaw, by
// InstanceLocalClaimStore under `instance-local-claims`, by
// WholeFileAnswerStore under `whole-store-rewrite`, by MemoryFingerprintStore
// under `memory-fingerprint`, and claiming with
// the flaw's discipline under `check-then-insert` and `expiry-race`
// (claim_discipline.h) on either database. Owns what it opens; thread-safe
// like the stores it holds.
#pragma once

#include <memory>

#include "idemproof/ref/instance_local_claim_store.h"
#include "idemproof/ref/memory_fingerprint_store.h"
#include "idemproof/ref/memory_record_store.h"
#include "idemproof/ref/postgres_store.h"
#include "idemproof/ref/service_options.h"
#include "idemproof/ref/store.h"
#include "idemproof/ref/whole_file_answer_store.h"

namespace idemproof::ref {

class ServiceStore {
 public:
  // Opens options.store (PostgreSQL) or options.db (SQLite). Throws StoreError,
  // e.g. when the PostgreSQL server cannot be reached: no fallback to SQLite.
  explicit ServiceStore(const ServiceOptions& options);

  Store& store() {
    if (memory_) return *memory_;
    if (local_claims_) return *local_claims_;
    if (whole_file_) return *whole_file_;
    if (memory_fingerprints_) return *memory_fingerprints_;
    return *durable_;
  }
  // The PostgreSQL store of --store, on whose database and pool the batch
  // and side-effect stores live too; null on SQLite.
  PostgresStore* postgres() { return postgres_; }

 private:
  std::unique_ptr<Store> durable_;
  PostgresStore* postgres_ = nullptr;  // durable_ when it is one
  std::unique_ptr<MemoryRecordStore> memory_;
  std::unique_ptr<InstanceLocalClaimStore> local_claims_;
  std::unique_ptr<WholeFileAnswerStore> whole_file_;  // whole-store-rewrite
  std::unique_ptr<MemoryFingerprintStore> memory_fingerprints_;  // memory-fingerprint
};

}  // namespace idemproof::ref
