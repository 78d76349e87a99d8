// The probe and hook steps of a scenario run, and the records probes at its
// end (model/history_events.h): `probe` reads a target probe into the
// history under a label (f probe, process probe: "value", or "error"),
// `hook` fires a target hook (f hook, process nemesis: "response", or
// "command" {exit, signal, stdout head} for a command hook, or "error"; a
// failed hook adds "failed": true and stops the scenario with an error, so
// its oracles are not judged on a premise that may not have happened). Both bind the biz of the step that names them (`biz:`, default
// b1): {{biz}} and that biz's captured values. A probe whose template needs a
// value no answer captured is not run: a note says so.
// RecordsProbes() runs every sent action's records probe for every biz it
// sent ("value", "count").
//
// Thread-safety: interpreter's thread only.
#pragma once

#include <string>

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

Status ProbeStep(StepContext& ctx, const Step& step, int index);
Status HookStep(StepContext& ctx, const Step& step, int index);
// `cause: NAME` (model/capabilities.h): a variant provision makes the next
// request of the step's action use it (a note {"cause", "action",
// "variant"} records that); a hook provision fires the hook (its events
// carry "cause"). heal also drops every pending variant.
Status CauseStep(StepContext& ctx, const Step& step, int index);
// Fires the target's `heal` hook at the end of a run, even after an
// interrupt (short deadline, the interrupt flag ignored).
Status HealHook(StepContext& ctx);
// The target's `reset` call, when declared: before a run that reuses kept
// processes (namespace isolation), recorded as a hook "reset". Ok when there is none.
Status ResetCall(StepContext& ctx);
void RecordsProbes(StepContext& ctx);

}  // namespace idemproof::runtime
