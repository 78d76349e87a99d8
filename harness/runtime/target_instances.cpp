#include "runtime/target_instances.h"

#include <algorithm>

namespace idemproof::runtime {

TargetInstances::TargetInstances(const TargetDescription& target, TemplateVars vars, std::string log_prefix,
                                 std::optional<std::string> flaw, const std::atomic<bool>* cancel)
    : target_(target),
      vars_(std::move(vars)),
      log_prefix_(std::move(log_prefix)),
      flaw_(std::move(flaw)),
      cancel_(cancel),
      main_(std::make_unique<TargetProcess>(target_, vars_, log_prefix_, flaw_, cancel_)),
      target_vars_(vars_) {
  for (int i = 0; i < target_.instance_count; ++i) {
    const std::string name = TargetInstanceName(i);
    declared_.push_back(name);
    if (i == 0 || static_cast<std::size_t>(i) >= target_.instance_urls.size()) continue;
    auto listed = std::make_unique<TargetDescription>(target_);
    listed->base_url = target_.instance_urls[static_cast<std::size_t>(i)];
    listed->start.reset();
    listed_[name] = std::move(listed);
  }
}

const TargetDescription& TargetInstances::DescriptionOf(const std::string& name) const {
  auto it = listed_.find(name);
  return it == listed_.end() ? target_ : *it->second;
}

bool TargetInstances::Up(const std::string& name) {
  base::MutexLock lock(mu_);
  if (name == "main") return main_up_;
  TargetProcess* proc = Find(name);
  return proc != nullptr && (!proc->Managed() || proc->Running());
}

const char* ProcessOpName(ProcessOp op) {
  switch (op) {
    case ProcessOp::kStart: return "start";
    case ProcessOp::kStop: return "stop";
    case ProcessOp::kKill: return "kill";
    case ProcessOp::kRestart: return "restart";
  }
  return "?";
}

TargetInstances::ControlOutcome TargetInstances::Control(const std::string& name, ProcessOp kind) {
  ControlOutcome out;
  const bool declared = std::find(declared_.begin(), declared_.end(), name) != declared_.end();
  std::unique_ptr<TargetProcess> proc;
  {
    // Out of the table while it changes: lookups see it down, none waits.
    base::MutexLock lock(mu_);
    auto it = spawned_.find(name);
    if (it != spawned_.end()) {
      proc = std::move(it->second);
      spawned_.erase(it);
    }
  }
  if (!proc) {
    if (!declared || kind != ProcessOp::kStart) {
      out.status = Status(StatusCode::kUnsupported, "no target instance '" + name + "' to " + ProcessOpName(kind));
      return out;
    }
    proc = std::make_unique<TargetProcess>(DescriptionOf(name), vars_, log_prefix_ + "-" + name, flaw_, cancel_);
  }
  const pid_t before = proc->pid();
  if (kind == ProcessOp::kStart) {
    out.status = proc->Start();
  } else if (kind == ProcessOp::kRestart) {
    out.status = proc->Restart();
  } else {
    auto exit = kind == ProcessOp::kKill ? proc->Kill() : proc->Stop();
    if (exit.ok()) out.exit = *exit;
    else out.status = exit.status();
  }
  const bool down = kind == ProcessOp::kStop || kind == ProcessOp::kKill;
  out.pid = down ? before : proc->pid();
  if (proc->vars().count("port")) out.port = proc->vars().at("port");
  base::MutexLock lock(mu_);
  spawned_[name] = std::move(proc);
  return out;
}

TargetInstances::~TargetInstances() { StopAll(); }

void TargetInstances::RefreshMain() {
  TemplateVars vars = vars_;
  for (const auto& [k, v] : main_->vars()) vars[k] = v;
  if (main_->pid() > 0) vars["target_pid"] = std::to_string(main_->pid());
  base::MutexLock lock(mu_);
  target_vars_ = std::move(vars);
  main_url_ = main_->base_url();
  main_up_ = !main_->Managed() || main_->Running();
}

std::string TargetInstances::MainUrl() {
  base::MutexLock lock(mu_);
  return main_url_;
}

TemplateVars TargetInstances::TargetVars() {
  base::MutexLock lock(mu_);
  return target_vars_;
}

Status TargetInstances::Spawn(const std::string& name, pid_t* pid) {
  auto proc = std::make_unique<TargetProcess>(target_, vars_, log_prefix_ + "-" + name, flaw_, cancel_);
  // Started before it is shared: its readiness wait holds no lock.
  Status s = proc->Start();
  *pid = s.ok() ? proc->pid() : 0;
  std::unique_ptr<TargetProcess> replaced;
  {
    base::MutexLock lock(mu_);
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
  base::MutexLock lock(mu_);
  TargetProcess* proc = Find(name);
  // A listed URL's instance runs without a process of ours.
  if (proc == nullptr || (proc->Managed() && !proc->Running()))
    return Status(StatusCode::kUnsupported, "no running target instance '" + name + "'");
  return proc->base_url();
}

std::optional<pid_t> TargetInstances::Pid(const std::string& name) {
  if (name == "main") {
    if (!main_->Managed()) return std::nullopt;
    return main_->pid();
  }
  base::MutexLock lock(mu_);
  TargetProcess* proc = Find(name);
  if (proc == nullptr || !proc->Managed()) return std::nullopt;
  return proc->pid();
}

bool TargetInstances::Signal(const std::string& name, int sig) {
  if (name == "main") return main_->Signal(sig);
  base::MutexLock lock(mu_);
  TargetProcess* proc = Find(name);
  return proc != nullptr && proc->Signal(sig);
}

std::vector<TargetInstances::Ended> TargetInstances::EndedOthers() {
  std::vector<Ended> out;
  base::MutexLock lock(mu_);
  for (auto& [name, proc] : spawned_) {
    if (auto exit = proc->Exited()) out.push_back({name, proc->pid(), *exit});
  }
  return out;
}

std::vector<pid_t> TargetInstances::OtherPids() {
  std::vector<pid_t> out;
  base::MutexLock lock(mu_);
  for (auto& [name, proc] : spawned_) {
    if (proc->pid() > 0) out.push_back(proc->pid());
  }
  return out;
}

void TargetInstances::StopAll() {
  std::map<std::string, std::unique_ptr<TargetProcess>> spawned;
  {
    base::MutexLock lock(mu_);
    spawned.swap(spawned_);
  }
  for (auto& [name, proc] : spawned) {
    if (proc->Running()) proc->Stop();
  }
  if (main_->Managed() && main_->Running()) main_->Stop();
}

}  // namespace idemproof::runtime
