#include "sim/stepped_store.h"

namespace idemproof::sim {

const char* ClaimKindName(ref::ClaimKind kind) {
  switch (kind) {
    case ref::ClaimKind::claimed: return "claimed";
    case ref::ClaimKind::took_over: return "took over";
    case ref::ClaimKind::in_progress: return "in progress";
    case ref::ClaimKind::completed: return "completed";
    case ref::ClaimKind::mismatch: return "mismatch";
  }
  return "?";
}

ref::ClaimOutcome SteppedStore::claim(const ref::ClaimRequest& request) {
  scheduler_.StepPoint("claim");
  ref::ClaimOutcome outcome = inner_.claim(request);
  scheduler_.Note(std::string(" -> ") + ClaimKindName(outcome.kind));
  return outcome;
}

bool SteppedStore::release(const ref::RequestScope& scope, const std::string& owner) {
  scheduler_.StepPoint("release");
  const bool released = inner_.release(scope, owner);
  scheduler_.Note(released ? " -> released" : " -> not the owner");
  return released;
}

std::optional<ref::RequestRecord> SteppedStore::lookup(const ref::RequestScope& scope,
                                                       ref::TimePoint now) {
  scheduler_.StepPoint("lookup");
  return inner_.lookup(scope, now);
}

std::size_t SteppedStore::sweep(ref::TimePoint now) {
  scheduler_.StepPoint("sweep");
  return inner_.sweep(now);
}

bool SteppedStore::transact(const std::function<bool(ref::StoreTransaction&)>& body) {
  scheduler_.StepPoint("transaction");
  const bool committed = inner_.transact(body);
  scheduler_.Note(committed ? " -> committed" : " -> rolled back");
  return committed;
}

}  // namespace idemproof::sim
