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
//    family lives in its own file behind one StepContext (step_context.h):
//    request_steps, process_steps, fault_steps, probe_steps, batch_steps,
//    queue_steps; this file keeps the run loop, the dispatch and the heal;
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
// `cause` steps (cause_steps.h) may arm one. `spawn` starts another instance of the target (same
// command, same store); `pause`/`resume` SIGSTOP/SIGCONT an instance (every
// paused one is resumed first thing at the end); `deliver`/`publish` are the
// queue steps (queue_steps.h).
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

#include "model/history.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/http_client.h"

namespace idemproof::injectors {
class ChaosProxy;
class FaultEventLog;
}  // namespace idemproof::injectors

namespace idemproof::runtime {
struct TargetEnvironment;
class KeptBudget;
}  // namespace idemproof::runtime

namespace idemproof::runtime {

// Sends n requests "at the same instant". Results in the order of requests.
class BurstSender {
 public:
  virtual ~BurstSender() = default;
  virtual std::vector<HttpExchange> Send(const std::vector<HttpRequest>& requests) = 0;
  // The harness-side spread of the last Send() (last release - first), when
  // the sender can observe it.
  virtual std::optional<std::int64_t> LastHarnessSpreadNs() const { return std::nullopt; }
};

// What a FaultRunner needs from the scenario run it serves.
struct FaultScope {
  std::string target_base_url;  // the target's own base URL now
  std::size_t max_body = std::size_t{4} << 20;  // the target's answer-body cap
  // Called for every event of the injectors (from their threads): the event
  // JSON and its steady-clock time (monotonic_ns()). Must be quick.
  std::function<void(const nlohmann::json& event, std::int64_t steady_ns)> on_event;
  // A fault `on: egress.NAME`: arm on this proxy (the egress hop, owned by
  // the run) and log to `egress_log`, instead of a proxy in front of the target.
  injectors::ChaosProxy* egress_proxy = nullptr;
  injectors::FaultEventLog* egress_log = nullptr;
  std::string target_pid;  // the main instance's pid ("" = none): kill-after-answer's default pid
};

// Starts and heals the faults a scenario declares (implemented by injectors).
// One scenario run at a time; every fault started is healed by Heal() or
// HealAll() before the run ends.
class FaultRunner {
 public:
  virtual ~FaultRunner() = default;
  virtual bool Supports(const std::string& kind) const = 0;
  // Starts the fault; returns the JSON recorded in the history's fault event.
  virtual Result<nlohmann::json> Start(const FaultDeclaration& fault, const FaultScope& scope) = 0;
  // Heals it (idempotent); returns how many times it fired.
  virtual Result<std::int64_t> Heal(const FaultDeclaration& fault) = 0;
  // Heals whatever is still active (end of a scenario run, always).
  virtual void HealAll() noexcept {}
  // Where the client's action requests go now; nullopt = the target itself.
  virtual std::optional<std::string> ClientBaseUrl() const { return std::nullopt; }
};

// How scenario runs are kept apart. kProcess: every run starts its own
// services, egress proxies and target (and stops them). kNamespace: a run
// whose steps leave the target's environment as they found it reuses the
// processes the last such run left running, in a folder of their own; its
// keys, biz ids, message and job ids are its own anyway (model/naming.h),
// and the target's `reset` call, if declared, runs first. Killing, stopping,
// restarting or pausing the main instance leaves the environment as found
// once the main instance runs again on the same store (restarted by the
// steps, or by the run's end to read the records), so such a run reuses and
// keeps them too. A run that spawns an instance, controls another instance,
// has a cause that ends the target, fires a hook or injects a fault (either
// may arm something in a service) gets processes of its own, and they are
// stopped after it.
enum class Isolation { kProcess, kNamespace };
const char* IsolationName(Isolation isolation);

// True when the scenario's steps might leave the environment other than they
// found it (see Isolation), or the target file asks for `isolation: process`.
bool NeedsOwnProcesses(const Scenario& scenario, const TargetDescription& target);

struct InterpreterOptions {
  std::uint64_t seed = 0;
  // The run's namespace (model/naming.h); "" = a fresh one per Interpreter.
  // REQUIRES: "" or ValidateNamespace(run_namespace).ok()
  std::string run_namespace;
  // build_dir, source_dir...; `run` and `run_dir` (the scenario run's own
  // folder) are set per scenario by Run().
  TemplateVars vars;
  std::optional<std::string> flaw;  // passed to the target's flaw_args
  const std::atomic<bool>* cancel = nullptr;  // interrupt flag (may be null)
  // Optional senders per burst mode; kThreads defaults to curl multi.
  BurstSender* last_byte_burst = nullptr;
  FaultRunner* faults = nullptr;
  Isolation isolation = Isolation::kProcess;
  // kNamespace: where the kept processes run ({{run_dir}} of the target
  // and services), a fresh sub-folder per start. REQUIRES: set with kNamespace.
  std::string shared_dir;
  // The budget of answer-body bytes every request of every Run() draws on
  // (kept_budget.h); null = the interpreter's own, of the target's max_kept.
  KeptBudget* kept = nullptr;
};

// The interpreter's part of a front end's options (a run's, an exploration's):
// any struct with the same-named members above.
template <typename FrontEndOptions>
InterpreterOptions InterpreterOptionsOf(const FrontEndOptions& o) {
  InterpreterOptions out;
  out.seed = o.seed;
  out.run_namespace = o.run_namespace;
  out.vars = o.vars;
  out.flaw = o.flaw;
  out.cancel = o.cancel;
  out.last_byte_burst = o.last_byte_burst;
  out.faults = o.faults;
  return out;
}

// What one scenario run produced.
struct ScenarioRun {
  History history;
  // Non-ok: the tool could not run the scenario properly (the target did not
  // start, a template names an unknown variable...). The history is kept.
  Status error;
  bool interrupted = false;
  std::map<std::string, std::int64_t> fault_counts;
  std::int64_t elapsed_ms = 0;
  std::vector<pid_t> target_pids;  // every process of the target started
};

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
