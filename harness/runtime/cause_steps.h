// The egress route of the capability kill_after_charge (model/capabilities.h):
// the cause step (probe_steps.h, CauseStep) calls it when the target declares
// no kill_after_charge hook but a ledger probe with `egress:` of the action.
//
// Thread-safety: interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// Arms a kill-after-answer on `ledger`'s egress downstream for the next
// request its `match` picks (method and path: a charge), killing the target's
// main instance once the downstream answered; recorded as the fault
// "kill_after_charge" with {"cause": "kill_after_charge"}, healed at the end
// of the run, judged by faults_fired (a kill that never fired is unknown).
// REQUIRES: !ledger.egress.empty().
Status KillAfterChargeThroughEgress(StepContext& ctx, const ProbeDescription& ledger, int index);

}  // namespace idemproof::runtime
