#include "idemproof/ref/whole_file_answer_store.h"

#include "idemproof/ref/forwarding_transaction.h"

namespace idemproof::ref {

WholeFileAnswerStore::WholeFileAnswerStore(Store& durable) : durable_(durable) {}

ClaimOutcome WholeFileAnswerStore::claim(const ClaimRequest& request) {
  std::lock_guard lock(mu_);
  auto found = [&](const RequestRecord& existing) {
    ClaimOutcome out;
    out.existing = existing;
    if (existing.fingerprint != request.fingerprint) {
      out.kind = ClaimKind::mismatch;
    } else {
      out.kind = existing.state == RecordState::in_progress ? ClaimKind::in_progress : ClaimKind::completed;
    }
    return out;
  };
  auto answer = answers_.find(request.scope);
  if (answer != answers_.end() && answer->second.live_at(request.now)) return found(answer->second);
  auto running = claims_.find(request.scope);
  if (running != claims_.end() && running->second.live_at(request.now)) return found(running->second);
  RequestRecord record;
  record.scope = request.scope;
  record.fingerprint = request.fingerprint;
  record.lease = request.lease;
  const bool replaced = running != claims_.end();
  claims_[request.scope] = record;
  read_at_claim_[request.scope] = answers_;  // the flaw: the document as read now is what completion writes back
  return ClaimOutcome{replaced ? ClaimKind::took_over : ClaimKind::claimed, std::nullopt};
}

bool WholeFileAnswerStore::complete(const RequestScope& scope, const std::string& owner,
                                    const StoredResponse& response, TimePoint completed_at, TimePoint expires_at,
                                    Fencing fencing) {
  std::lock_guard lock(mu_);
  auto running = claims_.find(scope);
  if (running == claims_.end()) return false;
  if (fencing == Fencing::by_owner && running->second.lease.owner != owner) return false;
  RequestRecord record = running->second;
  record.state = RecordState::completed;
  record.response = response;
  record.completed_at = completed_at;
  record.expires_at = expires_at;
  auto read = read_at_claim_.find(scope);
  Document document = read != read_at_claim_.end() ? std::move(read->second) : answers_;
  document[scope] = std::move(record);
  answers_ = std::move(document);  // whole: answers saved since this request read it are gone
  claims_.erase(running);
  if (read != read_at_claim_.end()) read_at_claim_.erase(read);
  return true;
}

bool WholeFileAnswerStore::release(const RequestScope& scope, const std::string& owner) {
  std::lock_guard lock(mu_);
  auto it = claims_.find(scope);
  if (it == claims_.end() || it->second.lease.owner != owner) return false;
  claims_.erase(it);
  read_at_claim_.erase(scope);
  return true;
}

bool WholeFileAnswerStore::renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) {
  std::lock_guard lock(mu_);
  auto it = claims_.find(scope);
  if (it == claims_.end() || it->second.lease.owner != owner) return false;
  it->second.lease.expires_at = expires_at;
  return true;
}

std::optional<RequestRecord> WholeFileAnswerStore::lookup(const RequestScope& scope, TimePoint now) {
  std::lock_guard lock(mu_);
  auto answer = answers_.find(scope);
  if (answer != answers_.end() && answer->second.live_at(now)) return answer->second;
  auto running = claims_.find(scope);
  if (running != claims_.end() && running->second.live_at(now)) return running->second;
  return std::nullopt;
}

std::size_t WholeFileAnswerStore::sweep(TimePoint now) {
  std::lock_guard lock(mu_);
  auto dead = [&](const auto& entry) { return !entry.second.live_at(now); };
  const std::size_t swept = std::erase_if(answers_, dead) + std::erase_if(claims_, dead);
  std::erase_if(read_at_claim_, [&](const auto& entry) { return !claims_.count(entry.first); });
  return swept;
}

bool WholeFileAnswerStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  return durable_.transact([&](StoreTransaction& durable) {
    // Completion goes to this store (that split is the flaw), the rest to the durable one.
    RedirectedCompletion tx(durable, [this](auto&&... args) { return complete(args...); });
    return body(tx);
  });
}

}  // namespace idemproof::ref
