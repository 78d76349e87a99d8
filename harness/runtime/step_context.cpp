#include "runtime/step_context.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

#include "clients/trace_context.h"
#include "platform/child_process.h"
#include "platform/interrupt.h"
#include "runtime/request_render.h"

namespace idemproof::runtime {

namespace {

EventType TypeOf(HttpOutcome outcome) {
  switch (outcome) {
    case HttpOutcome::kAnswered: return EventType::kOk;
    case HttpOutcome::kNoAnswer: return EventType::kInfo;
    case HttpOutcome::kNotSent: return EventType::kFail;
  }
  return EventType::kInfo;
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

}  // namespace

RecordedRequest RecordOf(const OutgoingRequest& r) { return {r.message.method, r.url(), r.message.headers, r.message.body}; }

RecordedExchange RecordOf(const HttpExchange& e) {
  RecordedExchange x;
  x.type = TypeOf(e.outcome);
  x.connection_reused = e.connection_reused;
  x.send_attempts = e.send_attempts;
  if (e.outcome == HttpOutcome::kAnswered) {
    x.status = e.status;
    x.headers = e.response_headers;
    x.body = e.response_body;
    x.body_truncated = e.body_truncated;
    x.body_size = e.body_size;
    x.body_size_exact = e.body_size_exact;
    x.body_cut_by_kept = e.body_cut_by_kept;
  } else {
    x.error = e.error;
  }
  return x;
}

StepContext::StepContext(const TargetDescription& target, const InterpreterOptions& options,
                         BurstSender* threads_burst, const Scenario& scenario, std::string dir,
                         const std::string& run_namespace, int ordinal)
    : target_(target),
      options_(options),
      threads_burst_(threads_burst),
      scenario_(scenario),
      dir_(std::move(dir)),
      recorder_(options.seed, run_namespace, scenario.name, ordinal),
      client_(options.cancel),
      env_(target, options, recorder_, dir_),
      routing_(target, options, scenario, env_.instances_holder()) {
  for (const auto& [name, action] : target.actions) {
    for (const auto& [var, path] : action.capture) capture_names_.insert(var);
  }
}

StepContext::~StepContext() { JoinBackground(); }

void StepContext::Adopt(TargetEnvironment env) {
  env_.Adopt(std::move(env));
  if (env_.HasInstances()) routing_.Reset(recorder_.naming().run());
}

TargetEnvironment StepContext::Release() { return env_.Release(); }

bool StepContext::Cancelled() const { return options_.cancel != nullptr && options_.cancel->load(); }

bool StepContext::Sleep(Duration d) {
  if (options_.cancel == &InterruptFlag()) return SleepUnlessInterrupted(d);
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
    if (Cancelled()) return false;
    std::this_thread::sleep_for(
        std::min<Duration>(until - std::chrono::steady_clock::now(), std::chrono::milliseconds(20)));
  }
  return !Cancelled();
}

TemplateVars StepContext::VarsFor(const std::string& key, const std::string& biz_name, int step) {
  TemplateVars& base = env_.base_vars();
  TemplateVars vars = env_.HasInstances() ? env_.instances().TargetVars() : base;
  // The instances keep the variables of the run that started them; a
  // request names from this run (namespace isolation reuses them).
  vars["run"] = base["run"];
  if (target_.http.trace) vars[kTraceIdVariable] = base[kTraceIdVariable];
  if (target_.idempotency.lease) vars[kSlowMsVariable] = SlowMsFor(*target_.idempotency.lease);
  base::MutexLock lock(mu_);
  vars["key"] = key;
  vars["biz"] = recorder_.naming().Biz(biz_name);
  // Drawn per step, so concurrent steps do not reorder each other's uuids.
  vars["uuid"] = recorder_.naming().Uuid(step, ++uuid_draws_[step]);
  auto it = captured_.find(biz_name);
  if (it != captured_.end()) {
    for (const auto& [k, v] : it->second) vars[k] = v;
  }
  return vars;
}

bool StepContext::IsMissingCapture(const Status& s) const {
  for (const auto& name : capture_names_) {
    if (s.message().find("'{{" + name + "}}'") != std::string::npos) return true;
  }
  return false;
}

void StepContext::Capture(const ActionDescription& action, const std::string& biz_name, const HttpExchange& e) {
  if (action.capture.empty() || e.outcome != HttpOutcome::kAnswered || e.status < 200 || e.status >= 300) return;
  base::MutexLock lock(mu_);
  TemplateVars& vars = captured_[biz_name];
  for (const auto& [var, rule] : action.capture) {
    if (vars.count(var)) continue;  // the first 2xx answer wins
    if (auto v = rule.From(e.response_headers, e.response_body)) vars[var] = *v;
  }
}

void StepContext::MarkSent(const std::string& action, const std::string& biz_name) {
  base::MutexLock lock(mu_);
  for (const auto& s : sent_) {
    if (s.first == action && s.second == biz_name) return;
  }
  sent_.emplace_back(action, biz_name);
}

std::vector<std::pair<std::string, std::string>> StepContext::Sent() {
  base::MutexLock lock(mu_);
  return sent_;
}

void StepContext::StartInstances() {
  env_.StartInstances();
  routing_.Reset(recorder_.naming().run());
}

void StepContext::RunInBackground(std::function<void()> work) { background_.emplace_back(std::move(work)); }

void StepContext::JoinBackground() {
  for (auto& t : background_) t.join();
  background_.clear();
}

void StepContext::SetPendingVariant(const std::string& action, const std::string& variant, bool first_only) {
  base::MutexLock lock(mu_);
  pending_variants_[action] = {variant, first_only};
}

std::string StepContext::VariantFor(const std::string& action, const std::string& key,
                                    const std::string& payload_class, const std::string& caller, bool* repeated) {
  base::MutexLock lock(mu_);
  if (repeated != nullptr) *repeated = false;
  const auto attempt = std::make_tuple(action, key, payload_class, caller);
  auto it = pending_variants_.find(action);
  if (it != pending_variants_.end()) {
    PendingVariant v = it->second;
    pending_variants_.erase(it);
    if (!key.empty() && !v.first_only) attempt_variants_[attempt] = v.variant;
    return v.variant;
  }
  if (key.empty()) return "";
  auto a = attempt_variants_.find(attempt);
  if (a == attempt_variants_.end()) return "";
  if (repeated != nullptr) *repeated = true;
  return a->second;
}

int StepContext::ClearPendingVariants() {
  base::MutexLock lock(mu_);
  const int n = static_cast<int>(pending_variants_.size());
  pending_variants_.clear();
  return n;
}

Result<StepContext::CallOutcome> StepContext::Call(const TargetCall& call, const TemplateVars& vars, CallMode mode,
                                                   const HeaderList* headers) {
  CallOutcome out;
  if (call.request) {
    const bool uncancelled = mode == CallMode::kUncancelled;
    const std::string base = call.request->base.empty() ? routing_.BaseUrl() : (env_.services() ? env_.services()->Url(call.request->base) : "");
    const HeaderList& own = headers != nullptr ? *headers : target_.headers;
    auto request = Capped(RenderRequest(*call.request, base, vars, call.request->base.empty() ? own : HeaderList{},
                                        {}, uncancelled ? Duration(std::chrono::seconds(2)) : target_.request_timeout),
                          target_, options_.kept, call.request->base.empty() ? Hop::kTarget : Hop::kHarnessProxyOrService);
    if (!request.ok()) return request.status();
    // A service's own tls: checks its https:// url (its CA need not be the target's).
    if (auto svc = target_.services.find(call.request->base); svc != target_.services.end()) request->tls = svc->second.tls;
    std::optional<HttpClient> uncancellable;
    if (uncancelled) uncancellable.emplace();
    HttpExchange e = uncancellable ? uncancellable->send(*request) : client_.send(*request);
    out.start_ns = e.start_ns;
    out.end_ns = e.end_ns;
    out.type = TypeOf(e.outcome);
    if (e.outcome == HttpOutcome::kAnswered) {
      out.response = ResponseJson(RecordOf(e));
      out.value = nlohmann::json::parse(e.response_body, nullptr, false);
      if (out.value.is_discarded()) out.value = e.response_body;
    } else {
      out.error = e.error;
    }
    return out;
  }
  if (!call.command) return Status::Internal("a call with neither request nor command");
  ProcessSpec spec;
  for (const auto& arg : *call.command) {
    auto a = ExpandTemplate(arg, vars);
    if (!a.ok()) return a.status();
    spec.argv.push_back(*a);
  }
  spec.cwd = dir_;
  spec.stdout_path = dir_ + "/command-" + std::to_string(command_counter_++) + ".stdout";
  spec.stderr_path = dir_ + "/commands.stderr";
  out.start_ns = monotonic_ns();
  auto child = ChildProcess::Spawn(spec);
  if (!child.ok()) {
    out.end_ns = monotonic_ns();
    out.type = EventType::kFail;
    out.error = child.status().message();
    return out;
  }
  auto exit = child->WaitFor(std::chrono::duration_cast<std::chrono::milliseconds>(target_.request_timeout));
  if (!exit) exit = child->Kill();
  out.end_ns = monotonic_ns();
  std::ifstream in(spec.stdout_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(spec.stdout_path.c_str());
  const std::string raw = ss.str();
  out.command = {{"exit", exit->signalled ? nlohmann::json() : nlohmann::json(exit->code)},
                 {"signal", exit->signalled ? nlohmann::json(exit->code) : nlohmann::json()},
                 {"stdout", raw.substr(0, kCommandStdoutHead)},
                 {"stdout_truncated", raw.size() > kCommandStdoutHead}};
  std::string text = Trim(raw);
  if (exit->signalled || exit->code != 0) {
    out.type = EventType::kFail;
    out.error = "command ended with " + exit->ToString();
    return out;
  }
  out.value = nlohmann::json::parse(text, nullptr, false);
  if (out.value.is_discarded()) out.value = text;
  return out;
}

}  // namespace idemproof::runtime
