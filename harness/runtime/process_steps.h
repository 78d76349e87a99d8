// Process control in a scenario run, shared by its steps
// (steps/start_stop_kill_restart_steps.cpp, pause_resume_steps.cpp, a send's
// `then: kill`) and the interpreter (its own start and stop, the resume of
// whatever is paused at the end), recorded as nemesis events
// (model/history_events.h): `start`, `stop`, `kill`, `restart` of a target
// instance, main by default (f = the step's name, value {"pid", "port",
// "exit", "error"}, and "instance" for any other than main; "until":
// "accepting" for a start that did not wait for readiness), `ready` (the
// readiness wait such a start left: {"pid", "error"}), `pause` /
// `resume` (SIGSTOP / SIGCONT; {"instance", "pid"}). They take the run's
// environment (its instances) and recorder only, not the whole step context.
// (`spawn` runs in steps/spawn_step.cpp; the services and egress proxies
// start in run_environment.h.)
// A target without a start command: `start` only publishes its URL (no
// event); the others are kUnsupported.
//
// Thread-safety: interpreter's thread only.
#pragma once

#include <string>

#include "model/scenario.h"
#include "base/status.h"
#include "runtime/run_environment.h"
#include "runtime/run_recorder.h"

namespace idemproof::runtime {

// `index` -1: the interpreter's own start / stop. `instance`: "main", a
// declared ("instance-2") or a spawned one.
// REQUIRES: env.HasInstances().
// `until` kAccepting (start / restart of main only): the step ends when the
// port accepts, before the readiness request (TargetProcess::StartUntil).
Status ControlTarget(RunEnvironment& env, RunRecorder& recorder, ProcessOp kind, int index,
                     const std::string& instance = "main", StartUntil until = StartUntil::kReady);
// Waits for main's readiness request that a start `until: accepting` left
// (TargetProcess::AwaitReady), as a `ready` event; nothing when none is
// pending. A target that does not get ready ends the run as a start would.
Status AwaitMainReady(RunEnvironment& env, RunRecorder& recorder, int index);
// After main started: starts the target's other declared instances (target
// `instances:`), each a `start` event with its "instance". The first that
// does not come up stops the run (kUnavailable), as main would.
Status StartDeclaredInstances(RunEnvironment& env, RunRecorder& recorder);
// pause: SIGSTOP `instance`, remembered in env.paused() until resumed; resume: SIGCONT.
Status PauseOrResume(RunEnvironment& env, RunRecorder& recorder, bool pause, const std::string& instance, int index);

}  // namespace idemproof::runtime
