// ServiceProcesses: the helper processes a target file declares under
// `services:` (a payment provider stub, a Redis server...), started before the
// target and stopped after it, one set per scenario run.
//
// Start() starts them in name order. For each: when `free_port` is set, picks
// a free loopback port first ({{port}} in its argv); starts it like a target
// (ChildProcess: no shell, own process group, stdout/stderr appended to
// `<dir>/service-NAME.stdout|.stderr`, registered for Ctrl-C); reads its port
// from stdout when `port_from_stdout` is declared; waits for `ready_stdout`
// to match its stdout and for the `ready` request, each before its deadline.
// Once started, Vars() holds services.NAME.url / .port / .pid for the
// target's templates. Stop() stops them in reverse order (SIGTERM, SIGKILL
// after stop_timeout) and reaps them; the destructor kills what is left.
//
// Errors are values: kUnavailable (a service did not come up: which one and
// why, with the end of its stderr), kTimeout, kInvalidArgument (a template).
//
// Thread-safety: one thread at a time, the thread that lives as long as the
// processes (see child_process.h); Vars()/Url() may then be read from any
// thread while no Start()/Stop() runs.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/target/services.h"
#include "model/template.h"
#include "runtime/target_process.h"

namespace idemproof::runtime {

class ServiceProcesses {
 public:
  // `services` must outlive this object. `vars`: run_dir, build_dir... `dir`:
  // where the logs go. `cancel` (may be null) ends waits early.
  ServiceProcesses(const std::map<std::string, ServiceDescription>& services, TemplateVars vars,
                   std::string dir, const std::atomic<bool>* cancel);
  ~ServiceProcesses();
  ServiceProcesses(const ServiceProcesses&) = delete;
  ServiceProcesses& operator=(const ServiceProcesses&) = delete;

  // Starts every service; on an error, the ones already started keep running
  // until Stop() or the destructor.
  Status Start();
  // Stops every running service, last started first. Idempotent.
  void Stop();

  // services.NAME.url / .port / .pid of the started services.
  const TemplateVars& Vars() const { return vars_out_; }
  // The URL of a started service ("" when unknown), without a trailing slash.
  std::string Url(const std::string& name) const;
  // Pids of the running services, in start order.
  std::vector<pid_t> Pids() const;

 private:
  struct Running;
  Status StartOne(const ServiceDescription& svc);

  const std::map<std::string, ServiceDescription>& services_;
  TemplateVars vars_;
  std::string dir_;
  const std::atomic<bool>* cancel_;
  std::vector<std::unique_ptr<Running>> running_;
  TemplateVars vars_out_;
};

}  // namespace idemproof::runtime
