#include "runtime/cause_steps.h"

#include "runtime/fault_steps.h"

namespace idemproof::runtime {

Status KillAfterChargeThroughEgress(StepContext& ctx, const ProbeDescription& ledger, int index) {
  const std::string name = "kill_after_charge";
  FaultDeclaration fault;
  fault.name = name;
  fault.kind = "kill-after-answer";
  fault.on = EgressHop(ledger.egress);
  fault.mark = ledger.mark;
  fault.params = {{"match", ledger.match.AsFaultMatch()}, {"first", 1}};
  ctx.caused_faults()[name] = fault;
  return StartOrHealFault(ctx, fault, true, index, {{"cause", name}, {"ledger", ledger.name}});
}


}  // namespace idemproof::runtime
