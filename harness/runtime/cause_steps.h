// The `cause` step: bring about a capability the way the target provides it.
// On this branch only kill_after_charge (model/scenario.h,
// FindKillAfterChargeRoute): the target's kill_after_charge hook when it
// declares one, else KillAfterChargeThroughEgress() — the function a
// capability seam calls for the egress route.
//
// Thread-safety: interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// REQUIRES: step.kind is kCause. kUnsupported when the target provides the
// capability in no way (CheckScenarioAgainstTarget reports that first).
Status CauseStep(StepContext& ctx, const Step& step, int index);

// Arms a kill-after-answer on `ledger`'s egress downstream for the next
// request its `match` picks (method and path: a charge), killing the target's
// main instance once the downstream answered; recorded as the fault
// "kill_after_charge" with {"cause": "kill_after_charge"}, healed at the end
// of the run, judged by faults_fired (a kill that never fired is unknown).
// REQUIRES: !ledger.egress.empty().
Status KillAfterChargeThroughEgress(StepContext& ctx, const ProbeDescription& ledger, int index);

}  // namespace idemproof::runtime
