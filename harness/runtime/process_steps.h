// Process control in a scenario run, shared by its steps
// (steps/start_stop_kill_restart_steps.cpp, pause_resume_steps.cpp, a send's
// `then: kill`) and the interpreter (its own start and stop, the resume of
// whatever is paused at the end), recorded as nemesis events
// (model/history_events.h): `start`, `stop`, `kill`, `restart` of a target
// instance, main by default (f = the step's name, value {"pid", "port",
// "exit", "error"}, and "instance" for any other than main), `pause` /
// `resume` (SIGSTOP / SIGCONT; {"instance", "pid"}), and the start of the
// target file's services before the target (f services, {"services":
// {vars}}). (`spawn` runs in steps/spawn_step.cpp.)
// A target without a start command: `start` only publishes its URL (no
// event); the others are kUnsupported.
//
// Thread-safety: interpreter's thread only.
#pragma once

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/step_context.h"

namespace idemproof::runtime {

// `index` -1: the interpreter's own start / stop. `instance`: "main", a
// declared ("instance-2") or a spawned one.
Status ControlTarget(StepContext& ctx, ProcessOp kind, int index, const std::string& instance = "main");
// After main started: starts the target's other declared instances (target
// `instances:`), each a `start` event with its "instance". The first that
// does not come up stops the run (kUnavailable), as main would.
Status StartDeclaredInstances(StepContext& ctx);
// pause: SIGSTOP `instance`, remembered until resumed; resume: SIGCONT.
Status PauseOrResume(StepContext& ctx, bool pause, const std::string& instance, int index);
// Starts the services, then the egress proxies (StartEgress); their
// variables join ctx.base_vars(). kUnavailable when one did not start.
Status StartServices(StepContext& ctx);
// Starts the proxies of the target's `egress:` downstreams (f egress,
// {"egress": {vars}}); their records and fault events go to the history.
// kInvalidConfig for an upstream with a path, kUnavailable otherwise.
Status StartEgress(StepContext& ctx);

}  // namespace idemproof::runtime
