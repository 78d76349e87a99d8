// The fault steps of a scenario run: `fault` starts a declared fault through
// the FaultRunner (interpreter.h), `heal` heals it, recorded as f fault,
// process nemesis ({"fault", "phase": "start" | "heal"}, completion ok with
// "injector" / "injected", fail with "error": a fault that did not arm is
// data). The injectors' own events land on the proxy lane. After each, the
// client's route follows FaultRunner::ClientBaseUrl(). HealFaults() heals
// what is still active at the end of a run, always.
//
// Thread-safety: interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// REQUIRES: step.kind is kFault or kHeal. kInvalidConfig: no such declared
// fault; kUnsupported: no injector for its kind.
Status FaultStep(StepContext& ctx, const Step& step, int index);
// Heals every fault still started (events with step -1), then HealAll().
void HealFaults(StepContext& ctx);

}  // namespace idemproof::runtime
