#include "idemproof/ref/instance_local_claim_store.h"

#include "idemproof/ref/forwarding_transaction.h"

namespace idemproof::ref {

// Business operations and the completed record go to the shared store's
// transaction; the owner fence is the local claim only (that split is the flaw).
class InstanceLocalClaimStore::Transaction final : public ForwardingTransaction {
 public:
  Transaction(InstanceLocalClaimStore& owner, StoreTransaction& shared) : ForwardingTransaction(shared), owner_(owner) {}

  bool complete(const RequestScope& scope, const std::string& owner, const StoredResponse& response,
                TimePoint completed_at, TimePoint expires_at, Fencing fencing) override {
    if (!owner_.complete_locally(scope, owner, fencing)) return false;
    // Blind by scope: whichever instance completes last overwrites the record.
    return inner().complete(scope, owner, response, completed_at, expires_at, Fencing::none);
  }

 private:
  InstanceLocalClaimStore& owner_;
};

InstanceLocalClaimStore::InstanceLocalClaimStore(Store& shared) : shared_(shared) {}

ClaimOutcome InstanceLocalClaimStore::claim(const ClaimRequest& request) {
  bool replaced = false;
  {
    std::lock_guard lock(mu_);
    auto it = claims_.find(request.scope);
    if (it != claims_.end() && it->second.live_at(request.now)) {
      ClaimOutcome out;
      out.existing = it->second;
      out.kind = it->second.fingerprint == request.fingerprint ? ClaimKind::in_progress : ClaimKind::mismatch;
      return out;
    }
    replaced = it != claims_.end();
    // Reserved before the shared store is asked: the process's duplicates see it at once.
    RequestRecord record;
    record.scope = request.scope;
    record.fingerprint = request.fingerprint;
    record.lease = request.lease;
    claims_[request.scope] = record;
  }
  ClaimOutcome shared = shared_.claim(request);
  const bool completed = shared.existing && shared.existing->state == RecordState::completed;
  if ((shared.kind == ClaimKind::completed || shared.kind == ClaimKind::mismatch) && completed) {
    forget(request.scope, request.lease.owner);
    return shared;  // replay, or refuse another payload: the shared record decides
  }
  // claimed / took_over, or the flaw: a live claim of another process, which
  // this process does not hold, is not seen.
  return ClaimOutcome{replaced || shared.kind == ClaimKind::took_over ? ClaimKind::took_over : ClaimKind::claimed,
                      std::nullopt};
}

bool InstanceLocalClaimStore::complete_locally(const RequestScope& scope, const std::string& owner, Fencing fencing) {
  std::lock_guard lock(mu_);
  auto it = claims_.find(scope);
  if (it == claims_.end()) return true;  // swept after its lease: nobody here took it over
  if (it->second.lease.owner == owner) {
    claims_.erase(it);
    return true;
  }
  // Taken over within this process: the fence holds here, and only here.
  return fencing == Fencing::none;
}

void InstanceLocalClaimStore::forget(const RequestScope& scope, const std::string& owner) {
  std::lock_guard lock(mu_);
  auto it = claims_.find(scope);
  if (it != claims_.end() && it->second.lease.owner == owner) claims_.erase(it);
}

bool InstanceLocalClaimStore::release(const RequestScope& scope, const std::string& owner) {
  bool held = false;
  {
    std::lock_guard lock(mu_);
    auto it = claims_.find(scope);
    held = it != claims_.end() && it->second.lease.owner == owner;
    if (held) claims_.erase(it);
  }
  shared_.release(scope, owner);  // deletes the shared row only if this claim wrote it
  return held;
}

bool InstanceLocalClaimStore::renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) {
  bool held = false;
  {
    std::lock_guard lock(mu_);
    auto it = claims_.find(scope);
    held = it != claims_.end() && it->second.lease.owner == owner;
    if (held) it->second.lease.expires_at = expires_at;
  }
  shared_.renew(scope, owner, expires_at);  // the shared row, if this claim wrote it
  return held;
}

std::optional<RequestRecord> InstanceLocalClaimStore::lookup(const RequestScope& scope, TimePoint now) {
  {
    std::lock_guard lock(mu_);
    auto it = claims_.find(scope);
    if (it != claims_.end() && it->second.live_at(now)) return it->second;
  }
  auto shared = shared_.lookup(scope, now);
  // Another process's claim is not seen here (the flaw), a completed record is.
  if (shared && shared->state != RecordState::completed) return std::nullopt;
  return shared;
}

std::size_t InstanceLocalClaimStore::sweep(TimePoint now) {
  std::size_t swept = 0;
  {
    std::lock_guard lock(mu_);
    swept = std::erase_if(claims_, [&](const auto& entry) { return !entry.second.live_at(now); });
  }
  return swept + shared_.sweep(now);
}

bool InstanceLocalClaimStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  return shared_.transact([&](StoreTransaction& shared) {
    Transaction tx(*this, shared);
    return body(tx);
  });
}

}  // namespace idemproof::ref
