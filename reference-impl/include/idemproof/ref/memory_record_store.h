// MemoryRecordStore: the `memory-store` flaw. Idempotency records live in
// process memory (a std::map) while orders and stock stay in the wrapped
// durable Store, so a restart forgets every key but keeps every order: a
// retry after a restart executes again. Completion is recorded in memory
// when the business transaction's body runs, not atomically with it.
//
// Claims are still atomic within the process. Thread-safe.
#pragma once

#include <map>
#include <mutex>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class MemoryRecordStore final : public Store {
 public:
  // `durable` holds orders and stock; it must outlive this object.
  explicit MemoryRecordStore(Store& durable);

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override;
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override;
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override;
  std::size_t sweep(TimePoint now) override;
  bool transact(const std::function<bool(StoreTransaction&)>& body) override;

 private:

  bool complete(const RequestScope& scope, const std::string& owner,
                const StoredResponse& response, TimePoint completed_at,
                TimePoint expires_at, Fencing fencing);

  Store& durable_;
  std::mutex mu_;
  std::map<RequestScope, RequestRecord> records_;
};

}  // namespace idemproof::ref
