#include "idemproof/ref/memory_record_store.h"

#include "idemproof/ref/forwarding_transaction.h"

namespace idemproof::ref {

MemoryRecordStore::MemoryRecordStore(Store& durable) : durable_(durable) {}

ClaimOutcome MemoryRecordStore::claim(const ClaimRequest& request) {
  std::lock_guard lock(mu_);
  auto it = records_.find(request.scope);
  if (it != records_.end() && it->second.live_at(request.now)) {
    ClaimOutcome out;
    out.existing = it->second;
    if (it->second.fingerprint != request.fingerprint) {
      out.kind = ClaimKind::mismatch;
    } else {
      out.kind = it->second.state == RecordState::in_progress ? ClaimKind::in_progress
                                                              : ClaimKind::completed;
    }
    return out;
  }
  RequestRecord record;
  record.scope = request.scope;
  record.fingerprint = request.fingerprint;
  record.lease = request.lease;
  const bool replaced = it != records_.end();
  records_[request.scope] = record;
  return ClaimOutcome{replaced ? ClaimKind::took_over : ClaimKind::claimed, std::nullopt};
}

bool MemoryRecordStore::complete(const RequestScope& scope, const std::string& owner,
                                 const StoredResponse& response, TimePoint completed_at,
                                 TimePoint expires_at, Fencing fencing) {
  std::lock_guard lock(mu_);
  auto it = records_.find(scope);
  if (it == records_.end()) return false;
  if (fencing == Fencing::by_owner &&
      (it->second.lease.owner != owner || it->second.state != RecordState::in_progress)) {
    return false;
  }
  it->second.state = RecordState::completed;
  it->second.response = response;
  it->second.completed_at = completed_at;
  it->second.expires_at = expires_at;
  return true;
}

bool MemoryRecordStore::release(const RequestScope& scope, const std::string& owner) {
  std::lock_guard lock(mu_);
  auto it = records_.find(scope);
  if (it == records_.end() || it->second.lease.owner != owner ||
      it->second.state != RecordState::in_progress) {
    return false;
  }
  records_.erase(it);
  return true;
}

bool MemoryRecordStore::renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) {
  std::lock_guard lock(mu_);
  auto it = records_.find(scope);
  if (it == records_.end() || it->second.lease.owner != owner || it->second.state != RecordState::in_progress) {
    return false;
  }
  it->second.lease.expires_at = expires_at;
  return true;
}

std::optional<RequestRecord> MemoryRecordStore::lookup(const RequestScope& scope, TimePoint now) {
  std::lock_guard lock(mu_);
  auto it = records_.find(scope);
  if (it == records_.end() || !it->second.live_at(now)) return std::nullopt;
  return it->second;
}

std::size_t MemoryRecordStore::sweep(TimePoint now) {
  std::lock_guard lock(mu_);
  return std::erase_if(records_, [&](const auto& entry) { return !entry.second.live_at(now); });
}

bool MemoryRecordStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  return durable_.transact([&](StoreTransaction& durable) {
    // Completion goes to this store (that split is the flaw), the rest to the durable one.
    RedirectedCompletion tx(durable, [this](auto&&... args) { return complete(args...); });
    return body(tx);
  });
}

}  // namespace idemproof::ref
