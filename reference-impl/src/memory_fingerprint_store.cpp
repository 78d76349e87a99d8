#include "idemproof/ref/memory_fingerprint_store.h"

namespace idemproof::ref {

MemoryFingerprintStore::MemoryFingerprintStore(Store& durable) : durable_(durable) {}

ClaimOutcome MemoryFingerprintStore::claim(const ClaimRequest& request) {
  ClaimRequest unfingerprinted = request;
  unfingerprinted.fingerprint.clear();  // the durable row has no fingerprint: every request "matches" there
  ClaimOutcome out = durable_.claim(unfingerprinted);
  std::lock_guard lock(mu_);
  if (out.kind == ClaimKind::claimed || out.kind == ClaimKind::took_over) {
    fingerprints_[request.scope] = request.fingerprint;
    return out;
  }
  if (out.kind == ClaimKind::completed || out.kind == ClaimKind::in_progress) {
    auto known = fingerprints_.find(request.scope);
    // The flaw: a key this process did not claim has no fingerprint to compare.
    if (known != fingerprints_.end() && known->second != request.fingerprint) out.kind = ClaimKind::mismatch;
  }
  return out;
}

}  // namespace idemproof::ref
