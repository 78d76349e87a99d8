// StepContext: what one scenario run lends its steps (harness/steps/, and
// the helpers here they share with the interpreter: process_steps,
// fault_steps, hook_calls): the target and options, and three parts a
// step family may take alone: its recorder (run_recorder.h: the run's
// names, the history it records into, its notes and output), its routing
// (request_routing.h: where requests go, over the target instances or an
// active fault's proxy) and its environment (run_environment.h: the target
// instances, the services, the egress proxies, the base variables). Beside
// them: the template variables of a request, the captured values, the
// pending variants, the background sends, the faults started, and the target
// calls of probes, hooks and batch results.
// The interpreter (interpreter.h) owns it for one Run(), runs the steps in
// order through it and heals at the end.
//
// Thread-safety: the members marked "any thread" may be called from
// background sends; the rest from the interpreter's thread only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "clients/http_client.h"
#include "model/history.h"
#include "model/history_events.h"
#include "model/naming.h"
#include "model/scenario.h"
#include "base/status.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/request_routing.h"
#include "runtime/run_environment.h"
#include "runtime/run_recorder.h"
#include "runtime/run_types.h"
#include "base/thread_annotations.h"

namespace idemproof::runtime {

// The recorded form of what the HTTP client sent and got.
RecordedRequest RecordOf(const OutgoingRequest& request);
RecordedExchange RecordOf(const HttpExchange& exchange);

class StepContext {
 public:
  // `target`, `options`, `scenario` must outlive the context.
  StepContext(const TargetDescription& target, const InterpreterOptions& options, BurstSender* threads_burst,
              const Scenario& scenario, std::string dir, const std::string& run_namespace, int ordinal);
  ~StepContext();

  const TargetDescription& target() const { return target_; }
  const InterpreterOptions& options() const { return options_; }
  const Scenario& scenario() const { return scenario_; }
  const std::string& dir() const { return dir_; }
  BurstSender* threads_burst() const { return threads_burst_; }
  // The foreground client (connection kept between steps).
  HttpClient& client() { return client_; }
  // The run's names, history, notes and output.
  RunRecorder& recorder() { return recorder_; }

  // Any thread.
  bool Cancelled() const;
  bool Sleep(Duration d);

  // The template variables of a request of step `step` with this concrete
  // key and symbolic biz: the target's, {{key}}, {{biz}}, a fresh {{uuid}},
  // and what that biz captured.
  TemplateVars VarsFor(const std::string& key, const std::string& biz_name, int step);
  // A render error naming a variable some action captures: "that answer never came".
  bool IsMissingCapture(const Status& s) const;
  void Capture(const ActionDescription& action, const std::string& biz_name, const HttpExchange& e);
  void MarkSent(const std::string& action, const std::string& biz_name);
  std::vector<std::pair<std::string, std::string>> Sent();
  // Any thread. A variant the next request of `action` gets (a cause step),
  // replacing one still pending. It then belongs to that request's attempt
  // (its key, action, payload class and caller): every later request of the
  // attempt repeats it, as a client's retry repeats its request byte for
  // byte; `first_only`: that request alone carries it.
  void SetPendingVariant(const std::string& action, const std::string& variant, bool first_only);
  // The variant a request of `action` under concrete `key` ("" = none: no
  // attempt to belong to) with `payload_class` ("default" | "other") as
  // `caller` carries: a pending one (taken once, bound to the attempt
  // unless first_only), else its attempt's; "" = none. `*repeated`: it came
  // from the attempt.
  std::string VariantFor(const std::string& action, const std::string& key, const std::string& payload_class,
                         const std::string& caller, bool* repeated);
  // Drops every pending variant (cause: heal); returns how many there were.
  // Variants already bound to an attempt stay: they are its request's bytes.
  int ClearPendingVariants();

  // The processes (target instances, services, egress proxies), the folder
  // they run in and the base variables.
  RunEnvironment& env() { return env_; }
  // Creates the target instances (env().StartInstances()) and routes
  // requests over them.
  void StartInstances();
  // Namespace isolation: takes over the processes an earlier run left
  // running, or hands them back (RunEnvironment's, the routing reset over
  // the adopted instances).
  void Adopt(TargetEnvironment env);
  TargetEnvironment Release();

  // Any thread. Where requests go (placement, balancer, base URLs).
  RequestRouting& routing() { return routing_; }

  // Background sends: started by request steps, joined by `join` and Finish.
  void RunInBackground(std::function<void()> work);
  // The lane of the next background send: 1, 2, ... (0 is the foreground's).
  int NextBackgroundProcess() { return next_process_++; }
  void JoinBackground();

  // Faults started and not healed.
  std::set<std::string>& started_faults() { return started_faults_; }
  // Faults a `cause` step declared itself (not in the scenario's `faults:`).
  std::map<std::string, FaultDeclaration>& caused_faults() { return caused_faults_; }

  // A probe's, hook's or batch result's call: a request (to the target or a
  // service) or a command.
  struct CallOutcome {
    EventType type = EventType::kOk;
    nlohmann::json value;     // parsed JSON body / stdout (text when not JSON)
    nlohmann::json response;  // the HTTP answer, when a request answered
    // A command's end: {"exit": code | null, "signal": n | null, "stdout":
    // its first kCommandStdoutHead bytes, "stdout_truncated": bool}; null for
    // a request (and for a command that could not start).
    nlohmann::json command;
    std::string error;
    std::int64_t start_ns = 0, end_ns = 0;
  };
  // kUncancelled: the call ignores the interrupt flag, with a short deadline
  // (the final heal must reach the target even after Ctrl-C).
  enum class CallMode { kCancellable, kUncancelled };
  static constexpr std::size_t kCommandStdoutHead = 4096;
  // `headers`: the target-wide headers to send instead of the target's (a
  // probe's caller's, TargetDescription::HeadersAs); null = the target's.
  Result<CallOutcome> Call(const TargetCall& call, const TemplateVars& vars,
                           CallMode mode = CallMode::kCancellable, const HeaderList* headers = nullptr);

 private:
  const TargetDescription& target_;
  const InterpreterOptions& options_;
  BurstSender* threads_burst_;
  const Scenario& scenario_;
  const std::string dir_;
  RunRecorder recorder_;
  std::set<std::string> capture_names_;
  HttpClient client_;
  std::map<std::string, FaultDeclaration> caused_faults_;
  RunEnvironment env_;      // after recorder_: it records into it
  RequestRouting routing_;  // over env_'s instances
  std::vector<std::thread> background_;
  std::set<std::string> started_faults_;
  int command_counter_ = 0;
  int next_process_ = 1;

  base::Mutex mu_;
  std::map<std::string, TemplateVars> captured_ GUARDED_BY(mu_);
  std::vector<std::pair<std::string, std::string>> sent_ GUARDED_BY(mu_);
  struct PendingVariant {
    std::string variant;
    bool first_only = false;
  };
  std::map<std::string, PendingVariant> pending_variants_ GUARDED_BY(mu_);     // action -> variant
  // (action, key, payload class, caller) -> the attempt's variant
  std::map<std::tuple<std::string, std::string, std::string, std::string>, std::string> attempt_variants_
      GUARDED_BY(mu_);
  std::map<int, int> uuid_draws_ GUARDED_BY(mu_);
};

}  // namespace idemproof::runtime
