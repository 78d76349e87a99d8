#include "runtime/run_environment.h"

#include <nlohmann/json.hpp>

#include "base/tls_options.h"
#include "clients/trace_context.h"
#include "model/history_events.h"

namespace idemproof::runtime {

void EventRoute::Bind(RunRecorder* recorder) {
  base::MutexLock lock(mu_);
  recorder_ = recorder;
}

void EventRoute::Record(HistoryEvent e, std::int64_t steady_ns) {
  base::MutexLock lock(mu_);
  if (recorder_ != nullptr) recorder_->Append(std::move(e), steady_ns);
}

void EventRoute::Injector(const nlohmann::json& event, std::int64_t steady_ns) {
  base::MutexLock lock(mu_);
  if (recorder_ != nullptr) RecordInjectorEvent(*recorder_, event, steady_ns);
}

void TargetEnvironment::Stop() {
  if (instances) instances->StopAll();
  if (egress) egress->Stop();
  if (services) services->Stop();
}

RunEnvironment::RunEnvironment(const TargetDescription& target, const InterpreterOptions& options,
                               RunRecorder& recorder, const std::string& dir)
    : target_(target), options_(options), recorder_(recorder), run_dir_(dir) {
  base_vars_ = options.vars;
  base_vars_["run"] = recorder_.naming().run();
  if (target.http.trace) base_vars_[kTraceIdVariable] = TraceIdFor(recorder_.naming().run());  // a trace per scenario run
  // A scenario run is one "run" of the target ({{run}} is its namespace):
  // {{run_dir}} is that scenario run's folder, so each gets a fresh store.
  base_vars_["run_dir"] = run_dir_;
  if (target.idempotency.lease) base_vars_[kSlowMsVariable] = SlowMsFor(*target.idempotency.lease);
  env_.dir = run_dir_;
}

RunEnvironment::~RunEnvironment() { env_.route->Bind(nullptr); }

void RunEnvironment::SetDir(const std::string& dir) {
  env_.dir = dir;
  base_vars_["run_dir"] = dir;
}

void RunEnvironment::StartInstances() {
  env_.instances =
      std::make_unique<TargetInstances>(target_, base_vars_, env_.dir + "/target", options_.flaw, options_.cancel);
  env_.route->Bind(&recorder_);
}

Status RunEnvironment::StartServices() {
  auto& services = env_.services;
  services = std::make_unique<ServiceProcesses>(target_.services, base_vars_, env_.dir, options_.cancel);
  // A downstream the target file does not start (a provider's sandbox) may
  // still sit behind an egress proxy.
  if (target_.services.empty()) return StartEgress();
  HistoryEvent invoke = ProcessInvoke(event_f::kServices, -1, nlohmann::json::object());
  HistoryEvent done = invoke;
  recorder_.Append(std::move(invoke), monotonic_ns());
  Status s = services->Start();
  done.type = s.ok() ? EventType::kOk : EventType::kFail;
  done.value = {{"services", services->Vars()}};
  if (!s.ok()) done.value["error"] = s.message();
  recorder_.Append(std::move(done), monotonic_ns());
  for (const auto& [k, v] : services->Vars()) base_vars_[k] = v;
  // A service whose handshake failed is a configuration error (exit 2), as the target's.
  if (!s.ok()) return Status(IsTlsRefusal(s) ? s.code() : StatusCode::kUnavailable, s.message());
  return StartEgress();
}

Status RunEnvironment::StartEgress() {
  auto& egress = env_.egress;
  // Through the route: the proxies may outlive this run (namespace isolation).
  env_.route->Bind(&recorder_);
  egress = std::make_unique<EgressProxies>(
      target_.egress,
      [route = env_.route](const nlohmann::json& entry, std::int64_t steady_ns) {
        route->Record(EgressEvent(entry), steady_ns);
      },
      [route = env_.route](const nlohmann::json& event, std::int64_t steady_ns) { route->Injector(event, steady_ns); });
  if (target_.egress.empty()) return Status::Ok();
  HistoryEvent invoke = ProcessInvoke(event_f::kEgress, -1, nlohmann::json::object());
  HistoryEvent done = invoke;
  recorder_.Append(std::move(invoke), monotonic_ns());
  Status s = egress->Start(base_vars_);
  done.type = s.ok() ? EventType::kOk : EventType::kFail;
  done.value = {{"egress", egress->Vars()}};
  if (!s.ok()) done.value["error"] = s.message();
  recorder_.Append(std::move(done), monotonic_ns());
  for (const auto& [k, v] : egress->Vars()) base_vars_[k] = v;
  if (!s.ok()) return Status(s.code() == StatusCode::kInvalidConfig ? s.code() : StatusCode::kUnavailable, s.message());
  return s;
}

Result<std::string> RunEnvironment::ServiceUrl(const std::string& name) const {
  const std::string url = env_.services ? env_.services->Url(name) : "";
  if (url.empty()) return Status(StatusCode::kUnsupported, "no running service '" + name + "'");
  return url;
}

void RunEnvironment::Adopt(TargetEnvironment env) {
  env_.route->Bind(nullptr);
  env_ = std::move(env);
  for (const auto& [k, v] : env_.vars) base_vars_[k] = v;
  base_vars_["run_dir"] = env_.dir;
  ++env_.runs;
  env_.route->Bind(&recorder_);
}

TargetEnvironment RunEnvironment::Release() {
  env_.route->Bind(nullptr);
  if (env_.services)
    for (const auto& [k, v] : env_.services->Vars()) env_.vars[k] = v;
  if (env_.egress)
    for (const auto& [k, v] : env_.egress->Vars()) env_.vars[k] = v;
  TargetEnvironment out = std::move(env_);
  env_ = TargetEnvironment{};
  env_.dir = run_dir_;
  return out;
}

}  // namespace idemproof::runtime
