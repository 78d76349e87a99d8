// InstanceLocalClaimStore: the `instance-local-claims` flaw. In-progress
// claims are decided in process memory (a std::map under one mutex: atomic
// within the process), while completed records, orders and stock stay in
// the wrapped shared Store. So everything one process sees behaves: a
// duplicate while the first runs gets in_progress, a replay comes from the
// shared record (also after a restart), completion is fenced by the owner
// token within the process. What it gets wrong is the cluster: another
// instance's claim is not in this process's memory, so a duplicate that
// lands on another instance while the first runs executes too, and its
// completion overwrites the shared record blindly (no fence across
// processes). The claim is still written to the shared store (so completion
// has a row to write), but a live claim found there that this process does
// not hold is ignored.
//
// Thread-safety: thread-safe. The local lock is never held while calling
// the shared store (whose transaction calls back into complete()).
#pragma once

#include <map>
#include <mutex>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class InstanceLocalClaimStore final : public Store {
 public:
  // `shared` holds records, orders and stock; it must outlive this object.
  explicit InstanceLocalClaimStore(Store& shared);

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override;
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override;
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override;
  std::size_t sweep(TimePoint now) override;
  bool transact(const std::function<bool(StoreTransaction&)>& body) override;

 private:
  class Transaction;

  // Within the process: false when another claim of this process took
  // `scope` over (fenced completion); a claim swept after its lease does
  // not stop its owner (nobody here took it over). Drops the owner's claim.
  bool complete_locally(const RequestScope& scope, const std::string& owner, Fencing fencing);
  void forget(const RequestScope& scope, const std::string& owner);

  Store& shared_;
  std::mutex mu_;
  std::map<RequestScope, RequestRecord> claims_;  // in progress, this process only
};

}  // namespace idemproof::ref
