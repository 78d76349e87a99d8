// MemoryFingerprintStore: the `memory-fingerprint` flaw (issue 46, "a
// restart between a request and a client-layer check"). Records, orders and
// stock stay in the wrapped durable Store, but the request fingerprint of
// each key is kept in process memory (a cache in front of a store whose rows
// have no fingerprint column). Within one process a key reused with another
// payload is refused as a mismatch; after a restart — or on another
// instance — nothing remembers the fingerprint, so the other payload gets
// the first request's stored answer (or in_progress) instead of the
// mismatch status.
//
// Thread-safety: thread-safe; the local lock is never held while calling the
// durable store.
#pragma once

#include <map>
#include <mutex>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class MemoryFingerprintStore final : public Store {
 public:
  // `durable` holds records (without fingerprints), orders and stock; it must
  // outlive this object.
  explicit MemoryFingerprintStore(Store& durable);

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override {
    return durable_.release(scope, owner);
  }
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override {
    return durable_.renew(scope, owner, expires_at);
  }
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override {
    return durable_.lookup(scope, now);
  }
  std::size_t sweep(TimePoint now) override { return durable_.sweep(now); }
  bool transact(const std::function<bool(StoreTransaction&)>& body) override { return durable_.transact(body); }

 private:
  Store& durable_;
  std::mutex mu_;
  std::map<RequestScope, std::string> fingerprints_;  // what this process saw claimed
};

}  // namespace idemproof::ref
