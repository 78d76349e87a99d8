// Interpreter: runs one Scenario against one target and records everything
// that happened in a History (see model/history.h for the event shapes).
//
// For a scenario run the interpreter
//  - names everything from the seed and the run's namespace (model/naming.h):
//    {{run}} is unique per scenario run, symbolic keys become
//    "idem-<run>-<name>" (the reserved "fresh" key a new value per request,
//    "none" no key header), symbolic biz ids "biz-<run>-<name>"; {{uuid}} is
//    fresh per request; the same seed and namespace give the same names;
//  - starts the target when the target file says how (one process per
//    scenario, logs in the scenario's directory) and stops it at the end;
//  - executes the steps in order, sleeping each step's `after` first: sends
//    (with `repeat`/`every`, or in the background until a `join`), bursts,
//    waits, hooks, probes, start/stop/kill/restart of the target. Each step
//    runs through its kind (model/step_kind.h, harness/steps/, one file per
//    kind or family), through one StepContext (step_context.h); this file
//    keeps the run loop, the watch and the heal;
//  - captures the declared variables from the first 2xx answer of each
//    (action, biz), so later requests of that biz can use them;
//  - at the end, even when a step failed or the run was interrupted: waits
//    for background sends, runs every action's records probe for every biz
//    it sent, fires the target's `heal` hook, and stops the target.
// Services (the target file's `services:`, service_processes.h) start before
// the target and stop after it; their services.NAME.* variables and
// {{target_pid}} reach every template, and a request with `base: NAME` goes
// to that service. Egress proxies (the target file's `egress:`,
// egress_proxies.h) start after the services and stop after the target;
// {{egress.NAME.url}} points the target at them, their records are history
// events and egress probes, faults `on: egress.NAME` act on them, and
// `cause` steps (steps/cause_step.cpp) may arm one. `spawn` starts another instance of the target (same
// command, same store); `pause`/`resume` SIGSTOP/SIGCONT an instance (every
// paused one is resumed first thing at the end); `deliver`/`publish` are the
// queue steps (steps/deliver_publish_steps.cpp).
// A request without an answer is an `info` event, one that certainly never
// left a `fail` event: the target's failures are data, never tool errors.
//
// Faults (`fault`/`heal` steps) and last-byte bursts come from the injectors
// room (injector_faults.h, last_byte_burst.h): without a FaultRunner /
// last-byte BurstSender, NeedsOf() lists them and the caller reports the
// scenario not_applicable. While a fault is active the client's action
// requests (sends, bursts) go to FaultRunner::ClientBaseUrl(), each on a fresh
// connection (libcurl would silently resend on a reused one that a fault
// closed); probes, hooks and records probes keep the target's own URL.
// Every event shape comes from model/history_events.h.
//
// Thread-safety: one Run() at a time per Interpreter. Background sends run on
// threads owned by Run(); all of them are joined before Run() returns.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/http_client.h"
#include "model/history.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/run_types.h"

namespace idemproof::runtime {
struct TargetEnvironment;
}  // namespace idemproof::runtime

namespace idemproof::runtime {

// "process" | "namespace" (Isolation: run_types.h).
const char* IsolationName(Isolation isolation);

// True when the scenario's steps might leave the environment other than they
// found it (see Isolation), or the target file asks for `isolation: process`.
bool NeedsOwnProcesses(const Scenario& scenario, const TargetDescription& target);

class Interpreter {
 public:
  // `target` must outlive the interpreter.
  Interpreter(const TargetDescription& target, InterpreterOptions options);
  ~Interpreter();

  // What the scenario needs that this interpreter + target cannot provide
  // (a last-byte burst sender, a fault kind without injector), besides what
  // CheckScenarioAgainstTarget() reports. Empty = runnable.
  std::vector<std::string> NeedsOf(const Scenario& scenario) const;

  // Runs the scenario. `scenario_dir` must exist: the target's stdout/stderr
  // (target.stdout / target.stderr) go there, and it is {{run_dir}}.
  // `ordinal` distinguishes scenario runs of one seed (e.g. its index).
  ScenarioRun Run(const Scenario& scenario, const std::string& scenario_dir, int ordinal);

  // The namespace every Run() names from (options' or a fresh one).
  const std::string& run_namespace() const { return run_namespace_; }

  // Namespace isolation: where kept processes run (see shared_dir), when
  // the folder is only known after construction.
  void KeepProcessesIn(const std::string& dir) { options_.shared_dir = dir; }
  // The next Run() starts with the whole max_kept (explore: every trial is a
  // run of its own, judged and written alone). REQUIRES: no Run() under way.
  void ResetKeptBudget();
  // Namespace isolation: how many times processes were started for a run,
  // and how many runs reused kept ones.
  int environment_starts() const { return environment_starts_; }
  int environment_reuses() const { return environment_reuses_; }

 private:
  class Execution;
  const TargetDescription& target_;
  InterpreterOptions options_;
  std::string run_namespace_;
  std::unique_ptr<BurstSender> threads_burst_;
  std::unique_ptr<TargetEnvironment> kept_;  // kNamespace: the processes between runs
  std::unique_ptr<KeptBudget> own_kept_;  // options_.kept when none was given
  int environment_starts_ = 0;
  int environment_reuses_ = 0;
};

}  // namespace idemproof::runtime
