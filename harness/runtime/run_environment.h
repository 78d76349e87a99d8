// RunEnvironment: the environment part of a scenario run's step context
// (step_context.h): the processes it talks to (the target instances, the
// services, the egress proxies), the folder they run in, the variables they
// add to every template, and which instances are paused. The step context
// owns one per run beside its recorder (run_recorder.h) and its routing
// (request_routing.h), so code that only starts, stops or reads processes
// (process_steps.h, the spawn, deliver and probe steps) takes a
// RunEnvironment and a RunRecorder instead of the whole context.
// Under namespace isolation the interpreter keeps the processes between runs
// (TargetEnvironment, Release / Adopt).
//
// Thread-safety: interpreter's thread only, but instances() may be read from
// background sends (TargetInstances is thread-safe for that); EventRoute from
// any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"
#include "model/history.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/egress_proxies.h"
#include "runtime/run_recorder.h"
#include "runtime/run_types.h"
#include "runtime/service_processes.h"
#include "runtime/target_instances.h"
#include "base/thread_annotations.h"

namespace idemproof::runtime {

// Where the events of a long-lived part (the egress proxies and their faults)
// go: the scenario run using it now, or nowhere between runs (dropped).
// Thread-safety: any thread; Bind waits for a delivery in progress.
class EventRoute {
 public:
  void Bind(RunRecorder* recorder);
  void Record(HistoryEvent e, std::int64_t steady_ns);
  void Injector(const nlohmann::json& event, std::int64_t steady_ns);

 private:
  base::Mutex mu_;
  RunRecorder* recorder_ GUARDED_BY(mu_) = nullptr;
};

// The processes a scenario run talks to: the services, the egress proxies
// and the target instances. A run owns them; under namespace isolation the
// interpreter keeps them between runs (interpreter.h), so the next run
// adopts them instead of starting its own.
struct TargetEnvironment {
  std::unique_ptr<ServiceProcesses> services;
  std::unique_ptr<EgressProxies> egress;  // after services: stopped before them
  std::unique_ptr<TargetInstances> instances;
  std::shared_ptr<EventRoute> route = std::make_shared<EventRoute>();
  TemplateVars vars;  // what the services and egress proxies added to the base variables
  std::string dir;    // where they run ({{run_dir}} of the target): the first run's folder, or a shared one
  int runs = 0;       // scenario runs it served

  // Stops the instances, then the egress proxies, then the services.
  void Stop();
};

class RunEnvironment {
 public:
  // `target`, `options` and `recorder` must outlive it; `dir` is the scenario
  // run's folder ({{run_dir}} until SetDir chooses a shared one).
  RunEnvironment(const TargetDescription& target, const InterpreterOptions& options, RunRecorder& recorder,
                 const std::string& dir);
  // Unbinds the egress proxies' events from the recorder.
  ~RunEnvironment();

  RunEnvironment(const RunEnvironment&) = delete;
  RunEnvironment& operator=(const RunEnvironment&) = delete;

  // The variables every process and template starts from (run, run_dir,
  // services...).
  TemplateVars& base_vars() { return base_vars_; }
  // The folder the services and the target run in ({{run_dir}} of their
  // commands): this run's, unless SetDir() chose a shared one.
  // REQUIRES (SetDir): before StartServices / StartInstances.
  const std::string& dir() const { return env_.dir; }
  void SetDir(const std::string& dir);

  // The target instances. REQUIRES: HasInstances() (after StartInstances or
  // an Adopt of started ones).
  TargetInstances& instances() { return *env_.instances; }
  bool HasInstances() const { return env_.instances != nullptr; }
  // What the routing reads the instances through (null until started).
  const std::unique_ptr<TargetInstances>& instances_holder() const { return env_.instances; }
  // Creates the target instances (none started yet) and binds the egress
  // proxies' events to this run's recorder.
  void StartInstances();
  // Instances paused and not resumed (PauseOrResume, process_steps.h).
  std::set<std::string>& paused() { return paused_; }

  // Starts the services, then the egress proxies (StartEgress); their
  // variables join base_vars(). Recorded as f services ({"services":
  // {vars}}). kUnavailable when one did not start (a TLS refusal keeps its
  // code: a configuration error).
  Status StartServices();
  // Starts the proxies of the target's `egress:` downstreams (f egress,
  // {"egress": {vars}}); their records and fault events go to the history.
  // kInvalidConfig for an upstream with a path, kUnavailable otherwise.
  Status StartEgress();
  // The services; null until StartServices().
  ServiceProcesses* services() const { return env_.services.get(); }
  // The proxies between the target and its downstreams (target `egress:`);
  // null until StartEgress().
  EgressProxies* egress() const { return env_.egress.get(); }
  // A service's URL (`base:`), or an error naming it.
  Result<std::string> ServiceUrl(const std::string& name) const;

  // Namespace isolation: takes over the processes an earlier run left
  // running (their variables join the base ones), or hands them back.
  void Adopt(TargetEnvironment env);
  TargetEnvironment Release();

 private:
  const TargetDescription& target_;
  const InterpreterOptions& options_;
  RunRecorder& recorder_;
  const std::string run_dir_;  // the scenario run's own folder
  TemplateVars base_vars_;
  TargetEnvironment env_;
  std::set<std::string> paused_;
};

}  // namespace idemproof::runtime
