#include "runtime/service_processes.h"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "model/pattern.h"

namespace idemproof::runtime {

// One started service: TargetProcess does the starting, port reading and
// readiness; it needs a TargetDescription, so each service gets its own.
struct ServiceProcesses::Running {
  std::string name;
  TargetDescription as_target;
  std::unique_ptr<TargetProcess> process;
};

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

ServiceProcesses::ServiceProcesses(const std::map<std::string, ServiceDescription>& services,
                                   TemplateVars vars, std::string dir, const std::atomic<bool>* cancel)
    : services_(services), vars_(std::move(vars)), dir_(std::move(dir)), cancel_(cancel) {}

ServiceProcesses::~ServiceProcesses() { Stop(); }

Status ServiceProcesses::Start() {
  for (const auto& [name, svc] : services_) {
    Status s = StartOne(svc);
    // A refused handshake stays one (the run stops with exit 2), said of the service.
    if (IsTlsRefusal(s)) return Status(s.code(), "tls: service " + name + ": " + s.message().substr(5));
    if (!s.ok()) return Status(s.code(), "service " + name + ": " + s.message());
  }
  return Status::Ok();
}

Status ServiceProcesses::StartOne(const ServiceDescription& svc) {
  auto running = std::make_unique<Running>();
  running->name = svc.name;
  running->as_target.name = svc.name;
  running->as_target.file = svc.mark.file;
  running->as_target.base_url = svc.url;
  running->as_target.tls = svc.tls;
  running->as_target.start = svc.start;
  running->process = std::make_unique<TargetProcess>(running->as_target, vars_, dir_ + "/service-" + svc.name,
                                                     std::nullopt, cancel_);
  TargetProcess& proc = *running->process;
  running_.push_back(std::move(running));
  Status started = proc.Start();
  if (!started.ok()) return started;
  if (!svc.ready_stdout.empty()) {
    auto pattern = Pattern::Compile(svc.ready_stdout);
    if (!pattern.ok()) return Status::InvalidArgument("ready_stdout: " + pattern.status().message());
    auto deadline = std::chrono::steady_clock::now() + svc.start.start_timeout;
    int starts = 1;
    while (!pattern->Search(read_file(proc.stdout_path()))) {
      if (!proc.Running() && starts < TargetProcess::kFreePortTries && proc.LostPortRace()) {
        // Its free port was taken before it bound it: a new port, a new start.
        ++starts;
        if (Status again = proc.Start(); !again.ok()) return again;
        deadline = std::chrono::steady_clock::now() + svc.start.start_timeout;
        continue;
      }
      if (!proc.Running()) {
        return Status(StatusCode::kUnavailable,
                      "exited before printing a line matching '" + svc.ready_stdout + "'; " +
                          OutputTail(proc.stderr_path(), proc.stdout_path()));
      }
      if (cancel_ != nullptr && cancel_->load()) return Status(StatusCode::kUnavailable, "interrupted while starting");
      if (std::chrono::steady_clock::now() >= deadline) {
        proc.Kill();
        return Status(StatusCode::kTimeout, "printed no line matching '" + svc.ready_stdout + "' within " +
                                                FormatDuration(svc.start.start_timeout) + " (see " +
                                                proc.stdout_path() + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  const std::string prefix = "services." + svc.name + ".";
  vars_out_[prefix + "url"] = proc.base_url();
  vars_out_[prefix + "port"] = proc.vars().count("port") ? proc.vars().at("port") : "";
  vars_out_[prefix + "pid"] = std::to_string(proc.pid());
  return Status::Ok();
}

void ServiceProcesses::Stop() {
  for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
    TargetProcess& proc = *(*it)->process;
    if (proc.Running()) proc.Stop();
  }
  running_.clear();
}

std::string ServiceProcesses::Url(const std::string& name) const {
  auto it = vars_out_.find("services." + name + ".url");
  return it == vars_out_.end() ? "" : it->second;
}

std::vector<pid_t> ServiceProcesses::Pids() const {
  std::vector<pid_t> out;
  for (const auto& r : running_) {
    if (r->process->pid() > 0) out.push_back(r->process->pid());
  }
  return out;
}

}  // namespace idemproof::runtime
