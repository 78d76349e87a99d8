// RequestRouting: where one scenario run's requests go: the main instance's
// URL, the client's route (an active fault's proxy, else the main
// instance), and the placement of each request over the target instances
// (the balancer, `instance:`). The step context (step_context.h) owns one
// per run over its target instances and hands it out by reference, so the
// request steps place and route without the whole context.
//
// Thread-safety: any thread, except Reset (interpreter's thread).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/scenario.h"
#include "model/target.h"
#include "runtime/balancer.h"
#include "runtime/run_types.h"
#include "runtime/target_instances.h"
#include "base/thread_annotations.h"

namespace idemproof::runtime {

class RequestRouting {
 public:
  // `target`, `options` and `instances` (the run's slot of target instances,
  // null until they start) must outlive the routing.
  RequestRouting(const TargetDescription& target, const InterpreterOptions& options, const Scenario& scenario,
                 const std::unique_ptr<TargetInstances>& instances);

  RequestRouting(const RequestRouting&) = delete;
  RequestRouting& operator=(const RequestRouting&) = delete;

  // A fresh balancer over the instances, seeded by --seed and the run's name
  // (the same --seed places the same way). Interpreter's thread.
  // REQUIRES: the instances are there.
  void Reset(const std::string& run);

  // The main instance's URL; where action requests go (an active fault's
  // proxy, else the main instance); whether a fault routes them.
  std::string BaseUrl();
  std::string ClientBaseUrl();
  bool Routed();
  void UpdateClientRoute();

  // Where one request of `step` with the concrete `key` goes: the instance
  // the step names; for `instance: other` one other than the last request of
  // the key went to; else the balancer's (while a fault in front of the
  // target is armed: main, whose hop the proxy fronts). `url` is the base URL
  // to send to (main's goes through an armed fault's proxy).
  // kUnsupported when the named instance is not running, or no other is up.
  // Records the placement for the next `other`.
  // REQUIRES: the instances are there (Reset called).
  struct Placement {
    std::string instance;
    std::string url;
  };
  // `instance`: the step's (SendOptions::instance).
  Result<Placement> Place(const std::string& instance, const std::string& key);
  // The `keys.size()` requests of a burst: an explicit or `other` instance
  // takes them all; else they go over the up instances in turn.
  Result<std::vector<Placement>> PlaceBurst(const std::string& instance, const std::vector<std::string>& keys);
  // Whether requests record their instance (`value.instance`): the run may
  // have more than one (the target declares several, or a step spawns or names one).
  bool RecordsInstances() const { return records_instances_; }

 private:
  const TargetDescription& target_;
  const InterpreterOptions& options_;
  const std::unique_ptr<TargetInstances>& instances_;
  bool records_instances_ = false;
  std::unique_ptr<Balancer> balancer_;  // per scenario run, over instances_

  base::Mutex mu_;
  std::string client_base_url_ GUARDED_BY(mu_);  // "" = the main instance
};

}  // namespace idemproof::runtime
