// The target's hooks and records probes in a scenario run, shared by the
// hook and cause steps (steps/hook_step.cpp, cause_step.cpp) and the
// interpreter (its reset before a reused run, the records probes and the
// heal at the end), recorded as model/history_events.h says: a hook is f
// hook, process nemesis: "response", or "command" {exit, signal, stdout head}
// for a command hook, or "error"; a failed hook adds "failed": true and stops
// the scenario with an error, so its oracles are not judged on a premise
// that may not have happened. A hook binds the biz it is given: {{biz}} and
// that biz's captured values.
// RecordsProbes() runs every sent action's records probe for every biz it
// sent ("value", "count").
//
// Thread-safety: interpreter's thread only.
#pragma once

#include <string>

#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// Fires hook `name` of the target, recorded as hook `name` (step `index`);
// `cause` (a capability, "" = a literal hook step) is recorded with it. A
// failed call or a non-2xx answer is recorded, then returned as an error.
Status FireHook(StepContext& ctx, const std::string& name, const std::string& biz_name, int index,
                StepContext::CallMode mode, const std::string& cause = "");
// Fires the hook with role heal (by default the one named heal) at the end
// of a run, even after an interrupt (short deadline, the interrupt flag
// ignored). Ok when the target has none.
Status HealHook(StepContext& ctx);
// The target's `reset` call, when declared: before a run that reuses kept
// processes (namespace isolation), recorded as a hook "reset". Ok when there is none.
Status ResetCall(StepContext& ctx);
void RecordsProbes(StepContext& ctx);

}  // namespace idemproof::runtime
