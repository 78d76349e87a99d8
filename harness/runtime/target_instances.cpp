#include "runtime/target_instances.h"

namespace idemproof::runtime {

TargetInstances::TargetInstances(const TargetDescription& target, TemplateVars vars, std::string log_prefix,
                                 std::optional<std::string> flaw, const std::atomic<bool>* cancel)
    : target_(target),
      vars_(std::move(vars)),
      log_prefix_(std::move(log_prefix)),
      flaw_(std::move(flaw)),
      cancel_(cancel),
      main_(std::make_unique<TargetProcess>(target_, vars_, log_prefix_, flaw_, cancel_)),
      target_vars_(vars_) {}

TargetInstances::~TargetInstances() { StopAll(); }

void TargetInstances::RefreshMain() {
  TemplateVars vars = vars_;
  for (const auto& [k, v] : main_->vars()) vars[k] = v;
  if (main_->pid() > 0) vars["target_pid"] = std::to_string(main_->pid());
  std::lock_guard<std::mutex> lock(mu_);
  target_vars_ = std::move(vars);
  main_url_ = main_->base_url();
}

std::string TargetInstances::MainUrl() {
  std::lock_guard<std::mutex> lock(mu_);
  return main_url_;
}

TemplateVars TargetInstances::TargetVars() {
  std::lock_guard<std::mutex> lock(mu_);
  return target_vars_;
}

Status TargetInstances::Spawn(const std::string& name, pid_t* pid) {
  auto proc = std::make_unique<TargetProcess>(target_, vars_, log_prefix_ + "-" + name, flaw_, cancel_);
  // Started before it is shared: its readiness wait holds no lock.
  Status s = proc->Start();
  *pid = s.ok() ? proc->pid() : 0;
  std::unique_ptr<TargetProcess> replaced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    replaced = std::move(spawned_[name]);
    spawned_[name] = std::move(proc);
  }
  if (replaced && replaced->Running()) replaced->Stop();
  return s;
}

TargetProcess* TargetInstances::Find(const std::string& name) {
  auto it = spawned_.find(name);
  return it == spawned_.end() ? nullptr : it->second.get();
}

Result<std::string> TargetInstances::Url(const std::string& name) {
  if (name == "main") return MainUrl();
  std::lock_guard<std::mutex> lock(mu_);
  TargetProcess* proc = Find(name);
  if (proc == nullptr || !proc->Running())
    return Status(StatusCode::kUnsupported, "no running target instance '" + name + "'");
  return proc->base_url();
}

std::optional<pid_t> TargetInstances::Pid(const std::string& name) {
  if (name == "main") {
    if (!main_->Managed()) return std::nullopt;
    return main_->pid();
  }
  std::lock_guard<std::mutex> lock(mu_);
  TargetProcess* proc = Find(name);
  if (proc == nullptr || !proc->Managed()) return std::nullopt;
  return proc->pid();
}

bool TargetInstances::Signal(const std::string& name, int sig) {
  if (name == "main") return main_->Signal(sig);
  std::lock_guard<std::mutex> lock(mu_);
  TargetProcess* proc = Find(name);
  return proc != nullptr && proc->Signal(sig);
}

void TargetInstances::StopAll() {
  std::map<std::string, std::unique_ptr<TargetProcess>> spawned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    spawned.swap(spawned_);
  }
  for (auto& [name, proc] : spawned) {
    if (proc->Running()) proc->Stop();
  }
  if (main_->Managed() && main_->Running()) main_->Stop();
}

}  // namespace idemproof::runtime
