// SteppedStore: the Store decorator that makes every store operation of the
// reference core a step point of the simulation. Before each call it
// switches back to the scheduler's driver (naming the op: claim, release,
// lookup, sweep, transaction); then it runs the real call to the end (a
// transaction is one step: nothing yields inside it) and notes the outcome
// on the trace.
//
// Thread-safety: as the wrapped store; used only by the request the
// scheduler runs (one at a time, on the scheduler's thread).
#pragma once

#include "idemproof/ref/store.h"
#include "sim/step_scheduler.h"

namespace idemproof::sim {

const char* ClaimKindName(ref::ClaimKind kind);

class SteppedStore final : public ref::Store {
 public:
  // `inner` and `scheduler` must outlive this object.
  SteppedStore(ref::Store& inner, StepScheduler& scheduler) : inner_(inner), scheduler_(scheduler) {}

  ref::ClaimOutcome claim(const ref::ClaimRequest& request) override;
  bool release(const ref::RequestScope& scope, const std::string& owner) override;
  // Not a step point: renewals run on the owner's keeper thread, never from
  // a simulated process (the simulation's business steps take no time).
  bool renew(const ref::RequestScope& scope, const std::string& owner, ref::TimePoint expires_at) override {
    return inner_.renew(scope, owner, expires_at);
  }
  std::optional<ref::RequestRecord> lookup(const ref::RequestScope& scope,
                                           ref::TimePoint now) override;
  std::size_t sweep(ref::TimePoint now) override;
  bool transact(const std::function<bool(ref::StoreTransaction&)>& body) override;

 private:
  ref::Store& inner_;
  StepScheduler& scheduler_;
};

}  // namespace idemproof::sim
