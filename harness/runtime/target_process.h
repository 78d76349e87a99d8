// TargetProcess: the service under test as a process the harness controls,
// built from a target file's `start:` block.
//
// Start() picks a free loopback port for {{port}} when `start.free_port` is
// set, expands the argv/env/cwd templates, appends the flaw arguments when
// a flaw is requested, starts the process (ChildProcess: no shell, own process
// group, stdout/stderr appended to `<log_prefix>.stdout` / `.stderr`), reads
// the port from stdout with the declared regex before start_timeout, sets the
// `port` template variable, expands base_url, and polls the readiness request
// until it answers the declared status before its timeout. A loopback port
// known before start must be free, and once ready every socket listening on
// it must belong to the started process group (else kUnavailable naming the
// holder: a stale server must never be what gets tested). Stop() sends
// SIGTERM and SIGKILL after stop_timeout; Kill() sends SIGKILL; both reap.
// A port picked free may be taken by another process before the started one
// binds it (parallel workers, a helper on port 0): when the start failed and
// another process holds that port (LostPortRace), Start() picks a new one,
// at most kFreePortTries starts in all.
// Restart() is Stop() + Start() with the same argv, hence the same store
// (a new port when the target picks one).
// Start / Restart `until` kAccepting (a scenario's `until: accepting`): they
// return as soon as a TCP connection to base_url's port is accepted (the
// port known, the listener the started group's), without the readiness
// request: requests then race the target's start-up. AwaitReady() later
// waits for the readiness request as Start would have.
//
// A target file without `start:` describes a service that is already
// running: Start() then only expands base_url and checks that something
// answers HTTP there; Stop/Kill/Restart are kUnsupported.
//
// Errors are values: kUnavailable (the target did not come up: the message
// says why and quotes the end of its stderr), kTimeout, kProcessError,
// kInvalidArgument (a template variable nobody defined), kUnsupported.
//
// Thread-safety: one thread at a time (the thread that lives as long as the
// process, see child_process.h).
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "base/status.h"
#include "model/target.h"
#include "model/template.h"
#include "platform/child_process.h"

namespace idemproof::runtime {

// A TCP port on 127.0.0.1 nobody listens on right now (bind to port 0).
Result<int> FreeLoopbackPort();

// How far Start waits: the readiness request (kReady), or the first accepted
// TCP connection (kAccepting).
enum class StartUntil { kReady, kAccepting };

class TargetProcess {
 public:
  // `target` must outlive this object. `vars` holds run_dir, build_dir,
  // source_dir... (`port` is added by Start). `flaw`: appends the target's
  // flaw_args with {{flaw}} set to it. `cancel` (may be null) ends waits early.
  TargetProcess(const TargetDescription& target, TemplateVars vars, std::string log_prefix,
                std::optional<std::string> flaw, const std::atomic<bool>* cancel);
  ~TargetProcess();  // kills and reaps a process still running
  TargetProcess(const TargetProcess&) = delete;
  TargetProcess& operator=(const TargetProcess&) = delete;

  // True when the target file says how to start the target.
  bool Managed() const { return target_.start.has_value(); }

  Status Start(StartUntil until = StartUntil::kReady);
  Result<ExitInfo> Stop();
  Result<ExitInfo> Kill();
  Status Restart(StartUntil until = StartUntil::kReady);
  // After a Start `until` kAccepting: polls the readiness request until it
  // answers its status (deadline: its timeout); Ok at once when the target
  // declares no readiness request or nothing is pending. Fails (the process
  // killed) as Start would.
  Status AwaitReady();
  // True between a Start `until` kAccepting and AwaitReady (or a stop).
  bool ReadyPending() const { return ready_pending_; }

  // Sends `sig` (SIGSTOP / SIGCONT) to the running process; false when there
  // is none (unmanaged, not started, or already gone).
  bool Signal(int sig);
  // Whether the managed process is running (false when unmanaged).
  bool Running();
  // How the started process ended when it is gone though nobody stopped it
  // (nullopt while it runs, or when none was started).
  std::optional<ExitInfo> Exited();
  // 0 when not running or unmanaged.
  pid_t pid() const;
  // The expanded base URL without a trailing slash; valid after Start().
  const std::string& base_url() const { return base_url_; }
  // The template variables, including `port` once known.
  const TemplateVars& vars() const { return vars_; }
  // Paths of the stdout / stderr files (empty when unmanaged).
  std::string stdout_path() const;
  std::string stderr_path() const;

  // True when the target picks a free port and a process other than the
  // started one's group listens on the port picked last: another process
  // took it between the pick and the bind. A caller whose wait for the
  // process failed (ServiceProcesses' ready_stdout) may then Start() again.
  // REQUIRES: the started process has exited or been killed.
  bool LostPortRace();
  static constexpr int kFreePortTries = 3;

 private:
  Status StartOnce(StartUntil until);
  Status WaitForPort(std::size_t stdout_offset);
  // Until a TCP connection to base_url's host and port is accepted.
  Status WaitUntilAccepting();
  Status WaitUntilReady();
  Status CheckAnswers();
  // The LISTEN sockets on base_url's port belong to the started process group.
  Status CheckAnswering();
  // OutputTail of its stderr and stdout files.
  std::string StderrTail() const;

  const TargetDescription& target_;
  TemplateVars vars_;
  std::string log_prefix_;
  std::optional<std::string> flaw_;
  const std::atomic<bool>* cancel_;
  std::optional<ChildProcess> child_;
  std::string base_url_;
  bool ready_pending_ = false;
};

// The last lines (at most 600 bytes each) of a process's stderr and stdout
// files, for an error about a start that failed: "stderr: ...; stdout: ...",
// either left out when empty, "(stderr and stdout empty)" when both are. A
// service that dies before its ready line often says why on stdout alone.
std::string OutputTail(const std::string& stderr_path, const std::string& stdout_path);

}  // namespace idemproof::runtime
