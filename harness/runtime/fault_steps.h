// The fault steps of a scenario run: `fault` starts a declared fault through
// the FaultRunner (run_types.h), `heal` heals it, recorded as f fault,
// process nemesis ({"fault", "phase": "start" | "heal"}, completion ok with
// "injector" / "injected", fail with "error": a fault that did not arm is
// data). The injectors' own events land on the proxy lane
// (RecordInjectorEvent, run_recorder.h). After each, the client's route
// follows FaultRunner::ClientBaseUrl(). HealFaults() heals what is still
// active at the end of a run, always: declared faults and the ones `cause`
// steps armed (StepContext::caused_faults()).
//
// Thread-safety: interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// `start`: a fault step (else heal). kInvalidConfig: no such declared
// fault; kUnsupported: no injector for its kind.
Status FaultStep(StepContext& ctx, const Step& step, int index, bool start);
// Heals every fault still started (events with step -1), then HealAll().
void HealFaults(StepContext& ctx);
// Starts (`start`) or heals one fault, recorded as a fault step; `extra`
// (an object, or null) joins the invoke's value (a `cause` step's
// {"cause": NAME}). A fault `on: egress.NAME` arms on that egress proxy.
Status StartOrHealFault(StepContext& ctx, const FaultDeclaration& fault, bool start, int index,
                        const nlohmann::json& extra);

}  // namespace idemproof::runtime
