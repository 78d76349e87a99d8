#include "runtime/interpreter.h"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>

#include "clients/kept_budget.h"
#include "model/history_events.h"
#include "model/naming.h"
#include "runtime/fault_steps.h"
#include "runtime/hook_calls.h"
#include "runtime/process_steps.h"
#include "runtime/step_context.h"
#include "runtime/step_execution.h"

namespace idemproof::runtime {

namespace {

// Naive concurrency: every request on its own new connection, driven by one
// curl multi handle.
class MultiBurst : public BurstSender {
 public:
  explicit MultiBurst(const std::atomic<bool>* cancel) : cancel_(cancel) {}
  std::vector<HttpExchange> Send(const std::vector<OutgoingRequest>& requests) override {
    HttpClient client(cancel_);
    return client.send_concurrently(requests);
  }

 private:
  const std::atomic<bool>* cancel_;
};

}  // namespace

const char* IsolationName(Isolation isolation) {
  return isolation == Isolation::kNamespace ? "namespace" : "process";
}

bool NeedsOwnProcesses(const Scenario& scenario, const TargetDescription& target) {
  if (target.process_isolation) return true;
  for (const Step& step : scenario.steps) {
    if (step.kind->NeedsOwnProcesses(step)) return true;
  }
  return false;
}

// One scenario run: the steps in order through the step families, then the
// heal (Finish), whatever happened.
class Interpreter::Execution {
 public:
  // `interpreter` keeps the processes between runs (namespace isolation).
  Execution(Interpreter& interpreter, const Scenario& scenario, std::string dir, int ordinal)
      : interpreter_(interpreter),
        ctx_(interpreter.target_, interpreter.options_, interpreter.threads_burst_.get(), scenario, std::move(dir),
             interpreter.run_namespace_, ordinal),
        keep_(interpreter.options_.isolation == Isolation::kNamespace && !interpreter.options_.shared_dir.empty() &&
              !NeedsOwnProcesses(scenario, interpreter.target_)) {}

  ScenarioRun Run() {
    ctx_.recorder().MarkStart();
    Status started = keep_ && interpreter_.kept_ ? Reuse() : StartAll();
    if (!started.ok()) {
      ctx_.recorder().out().error = started;
    } else {
      const std::vector<Step>& steps = ctx_.scenario().steps;
      for (std::size_t i = 0; i < steps.size(); ++i) {
        if (ctx_.Cancelled()) break;
        const Step& step = steps[i];
        if (step.after.count() > 0 && !ctx_.Sleep(step.after)) break;
        Status s = ExecuteGuarded(step, static_cast<int>(i));
        WatchTarget(step, static_cast<int>(i));
        if (!s.ok()) {
          ctx_.recorder().out().error = s;
          ctx_.recorder().Note(static_cast<int>(i), "step stopped the scenario: " + s.ToString());
          break;
        }
      }
    }
    Finish();
    ScenarioRun out = std::move(ctx_.recorder().out());
    out.interrupted = ctx_.Cancelled();
    out.elapsed_ms = (monotonic_ns() - ctx_.recorder().start_ns()) / 1000000;
    return out;
  }

 private:
  // No exception from a step ends the run: it stops this scenario with its
  // message (an error, so the run exits 3), and the heal, the records and
  // results.json still follow.
  Status ExecuteGuarded(const Step& step, int index) {
    try {
      return Execute(step, index);
    } catch (const std::exception& e) {
      return Status::Internal("the " + step.KindName() + " step threw: " + e.what());
    }
  }

  // The step's kind runs it (harness/steps/).
  Status Execute(const Step& step, int index) { return ExecutionOf(*step.kind).Execute(step, index, ctx_); }

  // After each step: a target instance that ended though no step could have
  // ended it (kill, stop, a send with then: kill, a hook, a fault, a cause
  // that ends the target) is a target_exited event naming it, once, so the
  // oracles say unknown rather than judge what answered after.
  void WatchTarget(const Step& step, int index) {
    // Process control of another instance says nothing about main (its
    // kind's Effect); theirs takes their process out of the watch (EndedOthers).
    const StepEffect effect = step.kind->Effect(step);
    if (effect.brings_main_up) may_be_down_ = false;
    const bool may_end_any = effect.may_end_any;
    if (effect.may_take_main_down || may_end_any) may_be_down_ = true;
    // A hook or a fault may reach any instance: the processes running now
    // are not watched any more (one started later is).
    if (may_end_any)
      for (pid_t pid : ctx_.env().instances().OtherPids()) unwatched_.insert(pid);
    // A hook or a fault may have armed something in a service: not kept.
    if (effect.touches_environment) environment_touched_ = true;
    Watch(index);
  }

  // Says every instance that ended on its own since the last look.
  void Watch(int index) {
    for (const auto& ended : ctx_.env().instances().EndedOthers()) {
      if (unwatched_.count(ended.pid) || !said_.insert(ended.pid).second) continue;
      HistoryEvent e = TargetExited(index, ended.pid, "exited (" + ended.exit.ToString() + ")");
      e.value["instance"] = ended.name;
      ctx_.recorder().Append(std::move(e), monotonic_ns());
    }
    TargetProcess& main = ctx_.env().instances().main();
    if (may_be_down_ || !main.Managed()) return;
    if (auto exit = main.Exited()) {
      HistoryEvent e = TargetExited(index, main.pid(), "exited (" + exit->ToString() + ")");
      e.value["instance"] = "main";
      ctx_.recorder().Append(std::move(e), monotonic_ns());
      may_be_down_ = true;  // said once
    }
  }

  // Starts the services, the egress proxies and the target (in a shared
  // folder of their own when they may be kept).
  Status StartAll() {
    if (keep_) {
      const std::string dir =
          interpreter_.options_.shared_dir + "/env-" + std::to_string(interpreter_.environment_starts_ + 1);
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      ctx_.env().SetDir(dir);
    }
    ++interpreter_.environment_starts_;
    Status started = ctx_.env().StartServices();
    ctx_.StartInstances();
    if (started.ok()) started = ControlTarget(ctx_.env(), ctx_.recorder(), ProcessOp::kStart, -1);
    if (started.ok()) started = StartDeclaredInstances(ctx_.env(), ctx_.recorder());
    return started;
  }

  // Adopts the processes the last run left running, makes the target's reset call.
  Status Reuse() {
    TargetEnvironment kept = std::move(*interpreter_.kept_);
    interpreter_.kept_.reset();
    const int runs = kept.runs;
    ctx_.Adopt(std::move(kept));
    ++interpreter_.environment_reuses_;
    reused_ = true;
    ctx_.recorder().Note(-1, "namespace isolation: the target and services started for an earlier run serve this one too "
                  "(runs before: " + std::to_string(runs + 1) + ")");
    return ResetCall(ctx_);
  }

  // Runs whatever happened before: background sends joined, records probed,
  // faults healed, the heal hook fired, the target stopped and reaped (or,
  // under namespace isolation, kept running for the next run when it is).
  void Finish() {
    // A paused instance would hold background sends (and the stop) up.
    for (const auto& name : std::set<std::string>(ctx_.env().paused()))
      PauseOrResume(ctx_.env(), ctx_.recorder(), false, name, -1);
    ctx_.JoinBackground();
    // Background sends may have outlived the last step: so may a crash.
    if (ctx_.env().HasInstances() && ctx_.recorder().out().error.ok()) Watch(-1);
    HealFaults(ctx_);
    TargetProcess& main = ctx_.env().instances().main();
    ScenarioRun& out = ctx_.recorder().out();
    auto alive = [&] { return main.Managed() ? main.Running() : out.error.code() != StatusCode::kUnavailable; };
    if (!ctx_.Cancelled()) {
      if (main.Managed() && !main.Running() && (reused_ || !out.target_pids.empty()) &&
          out.error.code() != StatusCode::kUnavailable) {
        // The scenario ended with the target down (kill/stop): bring it back
        // on the same store to read the records, and say so.
        ctx_.recorder().Note(-1, "the target was down at the end of the steps: started again on the same store to read "
                      "the records");
        ControlTarget(ctx_.env(), ctx_.recorder(), ProcessOp::kStart, -1);
      }
      // A start `until: accepting` left its readiness wait to a `ready` step:
      // the records are read from a target that says it is ready.
      if (alive() && main.Managed()) AwaitMainReady(ctx_.env(), ctx_.recorder(), -1);
      if (alive()) RecordsProbes(ctx_);
    }
    if (ctx_.target().HookFor("heal") && alive() && !(ctx_.Cancelled() && main.Managed())) {
      Status s = HealHook(ctx_);
      if (!s.ok()) ctx_.recorder().Note(-1, "heal hook failed: " + s.ToString());
    }
    if (keep_ && !ctx_.Cancelled() && out.error.code() != StatusCode::kUnavailable && !environment_touched_ &&
        said_.empty() && (!main.Managed() || main.Running())) {
      interpreter_.kept_ = std::make_unique<TargetEnvironment>(ctx_.Release());
      return;
    }
    if (main.Managed() && main.Running()) ControlTarget(ctx_.env(), ctx_.recorder(), ProcessOp::kStop, -1);
    TargetEnvironment own = ctx_.Release();
    own.Stop();
  }

  Interpreter& interpreter_;
  StepContext ctx_;
  const bool keep_;  // the processes may serve the next run too
  bool may_be_down_ = false;  // a step since the last start could have ended the target
  std::set<pid_t> unwatched_;  // other instances' processes a hook, fault or cause may have ended
  std::set<pid_t> said_;       // other instances' processes whose exit is in the history
  bool reused_ = false;  // the target ran before this run began (Reuse)
  bool environment_touched_ = false;  // a hook or a fault acted beyond the target's process
};

Interpreter::Interpreter(const TargetDescription& target, InterpreterOptions options)
    : target_(target),
      options_(std::move(options)),
      run_namespace_(options_.run_namespace.empty() ? FreshNamespace(std::random_device{}())
                                                    : options_.run_namespace),
      threads_burst_(std::make_unique<MultiBurst>(options_.cancel)) {
  if (options_.kept == nullptr) {
    own_kept_ = std::make_unique<KeptBudget>(target.max_kept);
    options_.kept = own_kept_.get();
  }
}

Interpreter::~Interpreter() {
  if (kept_) kept_->Stop();
}

void Interpreter::ResetKeptBudget() { options_.kept->Reset(); }

std::vector<std::string> Interpreter::NeedsOf(const Scenario& scenario) const {
  std::vector<std::string> needs;
  for (const Step& step : scenario.steps) ExecutionOf(*step.kind).RuntimeNeeds(step, scenario, target_, options_, needs);
  std::sort(needs.begin(), needs.end());
  needs.erase(std::unique(needs.begin(), needs.end()), needs.end());
  return needs;
}

ScenarioRun Interpreter::Run(const Scenario& scenario, const std::string& scenario_dir, int ordinal) {
  Execution execution(*this, scenario, scenario_dir, ordinal);
  return execution.Run();
}

}  // namespace idemproof::runtime
