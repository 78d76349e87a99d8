// The one place the built-in op kinds are registered. The order is the
// alphabet's (Alphabet::groups) and so the draw order of every plan: a new
// kind goes where its draws should come, and moving one changes the plans a
// fixed seed gives.
#include "explore/ops/builtin_ops.h"

#include <cstdlib>
#include <iostream>

namespace idemproof::explore {

void RegisterBuiltinOps(OpRegistry& registry) {
  for (auto* make : {MakeSendOp, MakeSendOtherOp, MakeSendEquivalentOp, MakeSendChangedOp, MakeSendThenKillOp,
                     MakeSendBackgroundOp, MakeBurstOp, MakeFaultOp, MakeWaitOp, MakeWaitPastLeaseOp,
                     MakeWaitPastWindowOp, MakeKillOp, MakeRestartOp, MakeHookOp, MakeCauseOp, MakeKillMidWorkOp,
                     MakeSendPastLeaseOp, MakePauseOp, MakeResumeOp, MakeDeliverOp, MakeRedeliverOp, MakeRunBatchOp,
                     MakeRerunOp, MakeSendAbortOp, MakeSendCallerOp}) {
    Status s = registry.Register(make());
    if (!s.ok()) {
      std::cerr << "idemproof: internal error: " << s.message() << "\n";
      std::abort();
    }
  }
}

OpRegistry& Ops() {
  static OpRegistry* registry = [] {
    auto* r = new OpRegistry();
    RegisterBuiltinOps(*r);
    return r;
  }();
  return *registry;
}

const OpSpec* OpNamed(const std::string& name) {
  const OpSpec* kind = Ops().Find(name);
  if (kind == nullptr) {
    std::cerr << "idemproof: internal error: no op kind '" << name << "' is registered\n";
    std::abort();
  }
  return kind;
}

const std::vector<std::string>& OpKindNames() {
  static const std::vector<std::string> kNames = Ops().Names();
  return kNames;
}

}  // namespace idemproof::explore
