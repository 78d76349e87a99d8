// TargetInstances: the target processes of one scenario run — "main", the
// one the scenario starts, stops, kills and restarts by default, the
// target's other declared instances ("instance-2"..., target `instances:`:
// started with the same command and variables, hence the same store, or the
// listed URLs of a target already running) and the instances `spawn` steps
// add — behind ONE lock: background sends look instances up (Url, Up) on
// their own threads while the interpreter's thread spawns, pauses and
// controls them. An instance other than main being started, stopped or
// restarted is out of the lookup table meanwhile: it is down for requests.
//
// The main instance's process is driven by the interpreter's thread alone
// (main()); what other threads read of it — its URL and template variables —
// is a copy taken under the lock by RefreshMain() after every control.
// Process starts and stops happen outside the lock (they wait for readiness),
// so a lookup never waits for a start.
//
// Thread-safety: every member but main() may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/scenario.h"
#include "model/target.h"
#include "model/template.h"
#include "runtime/target_process.h"
#include "base/thread_annotations.h"

namespace idemproof::runtime {

// What process control does to an instance (the start, stop, kill and
// restart steps, and the interpreter's own start and stop).
enum class ProcessOp { kStart, kStop, kKill, kRestart };
// "start", "stop", "kill", "restart".
const char* ProcessOpName(ProcessOp op);

class TargetInstances {
 public:
  // `target` and `cancel` must outlive this object; `vars` are every
  // instance's variables (run, run_dir, services...); logs go to
  // `log_prefix` ("main") and `log_prefix`-NAME (spawned).
  TargetInstances(const TargetDescription& target, TemplateVars vars, std::string log_prefix,
                  std::optional<std::string> flaw, const std::atomic<bool>* cancel);
  ~TargetInstances();  // stops every instance still running
  TargetInstances(const TargetInstances&) = delete;
  TargetInstances& operator=(const TargetInstances&) = delete;

  // REQUIRES: called from the interpreter's thread only; call RefreshMain()
  // after changing its state.
  TargetProcess& main() { return *main_; }
  // Publishes the main instance's URL and variables (port, target_pid).
  void RefreshMain();
  std::string MainUrl();
  // Every instance's variables plus the main one's (port, target_pid).
  TemplateVars TargetVars();

  // Starts another instance with the same command and variables (hence the
  // same store); `pid` gets its pid, 0 when it did not start. A name spawned
  // again replaces the earlier instance (stopped first).
  Status Spawn(const std::string& name, pid_t* pid);

  // The target's own instances in order: "main", "instance-2", ...
  const std::vector<std::string>& declared() const { return declared_; }
  // Whether a request may go to the instance now: main once started and not
  // stopped or killed by a step (or unmanaged); another while its process
  // runs (or it is one of the target's listed URLs).
  bool Up(const std::string& name);

  // Process control of an instance other than main (main: main()). REQUIRES:
  // the interpreter's thread. kStart starts it (a declared instance on first
  // use), kStop / kKill / kRestart as TargetProcess. kUnsupported for a name
  // neither declared nor spawned.
  struct ControlOutcome {
    Status status;
    pid_t pid = 0;                  // stop/kill: the pid ended; start/restart: the new one
    std::optional<ExitInfo> exit;   // stop/kill: how it ended
    std::string port;               // once started: its {{port}}, when known
  };
  ControlOutcome Control(const std::string& name, ProcessOp op);
  // The base URL of a running instance ("main" included); kUnsupported when
  // there is none by that name, or it is not running.
  Result<std::string> Url(const std::string& name);
  // The pid of a managed instance by name; nullopt when there is none.
  std::optional<pid_t> Pid(const std::string& name);
  // Sends `sig` to an instance; false when it is not running.
  bool Signal(const std::string& name, int sig);
  // The started instances other than main whose process ended by itself (a
  // crash: one a step stopped or killed is no longer theirs to report), and
  // the pids of those running, for the interpreter's watch.
  struct Ended {
    std::string name;
    pid_t pid = 0;
    ExitInfo exit;
  };
  std::vector<Ended> EndedOthers();
  std::vector<pid_t> OtherPids();
  // Stops the spawned instances, then the main one (if running).
  void StopAll();

 private:
  TargetProcess* Find(const std::string& name) REQUIRES(mu_);
  // The description an instance starts from: the target's, or for a listed
  // URL a copy with that base_url and no start.
  const TargetDescription& DescriptionOf(const std::string& name) const;

  const TargetDescription& target_;
  const TemplateVars vars_;
  const std::string log_prefix_;
  const std::optional<std::string> flaw_;
  const std::atomic<bool>* cancel_;
  const std::unique_ptr<TargetProcess> main_;
  base::Mutex mu_;
  std::string main_url_ GUARDED_BY(mu_);
  TemplateVars target_vars_ GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<TargetProcess>> spawned_ GUARDED_BY(mu_);     // (declared ones too)
  bool main_up_ GUARDED_BY(mu_) = false;
  std::vector<std::string> declared_;
  std::map<std::string, std::unique_ptr<TargetDescription>> listed_;  // instance -> its URL's description
};

}  // namespace idemproof::runtime
