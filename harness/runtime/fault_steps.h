// Faults in a scenario run, shared by the fault / heal steps
// (steps/fault_heal_steps.cpp), the cause step (a kill-after-charge through
// an egress) and the interpreter (HealFaults at the end): a fault starts
// through the FaultRunner (run_types.h) and heals, recorded as f fault,
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

// The fault `name`: one the scenario declares, else one a cause step armed;
// nullptr for neither.
const FaultDeclaration* FindFault(StepContext& ctx, const std::string& name);
// Heals every fault still started (events with step -1), then HealAll().
void HealFaults(StepContext& ctx);
// Starts (`start`) or heals one fault, recorded as a fault step; `extra`
// (an object, or null) joins the invoke's value (a `cause` step's
// {"cause": NAME}). A fault `on: egress.NAME` arms on that egress proxy.
Status StartOrHealFault(StepContext& ctx, const FaultDeclaration& fault, bool start, int index,
                        const nlohmann::json& extra);

}  // namespace idemproof::runtime
