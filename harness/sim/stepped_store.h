// SteppedStore: the Store decorator that makes every store operation of the
// reference core a step point of the simulation. Before each call it
// switches back to the scheduler's driver (naming the op: claim, release,
// lookup, sweep, transaction); then it runs the real call to the end (a
// transaction is one step: nothing yields inside it) and notes the outcome
// on the trace. Claims are also recorded as ClaimSeen, the evidence the
// lease_recovery invariant reads.
//
// Thread-safety: as the wrapped store; the claim log is written only by the
// request the scheduler runs (one at a time, on the scheduler's thread).
#pragma once

#include <vector>

#include "idemproof/ref/store.h"
#include "sim/step_scheduler.h"

namespace idemproof::sim {

// One claim the core made and what the store answered.
struct ClaimSeen {
  StepScheduler::RequestId request = 0;
  ref::RequestScope scope;
  ref::ClaimKind kind = ref::ClaimKind::claimed;
  ref::TimePoint now{};  // the core's "now" for this claim (the lease starts here)
};

const char* ClaimKindName(ref::ClaimKind kind);

class SteppedStore final : public ref::Store {
 public:
  // `inner`, `scheduler` and `claims` must outlive this object.
  SteppedStore(ref::Store& inner, StepScheduler& scheduler, std::vector<ClaimSeen>& claims)
      : inner_(inner), scheduler_(scheduler), claims_(claims) {}

  ref::ClaimOutcome claim(const ref::ClaimRequest& request) override;
  bool release(const ref::RequestScope& scope, const std::string& owner) override;
  std::optional<ref::RequestRecord> lookup(const ref::RequestScope& scope,
                                           ref::TimePoint now) override;
  std::size_t sweep(ref::TimePoint now) override;
  bool transact(const std::function<bool(ref::StoreTransaction&)>& body) override;

 private:
  ref::Store& inner_;
  StepScheduler& scheduler_;
  std::vector<ClaimSeen>& claims_;
};

}  // namespace idemproof::sim
