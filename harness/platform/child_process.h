// ChildProcess: one operating-system process the harness started, and the
// process-wide registry of every such process still unreaped.
//
// A child is started with posix_spawn (never through a shell) from an argv,
// an environment overlay and a working directory; stdin is /dev/null, stdout
// and stderr are appended to files, no other descriptor is inherited. It
// leads its own process group (a Ctrl-C at the terminal reaches the harness
// only, which then stops its children in order); every signal goes to the
// whole group, and reaping the leader SIGKILLs and reaps what is left of the
// group (a wrapper's real server). A watchdog process SIGKILLs every group
// still registered when the harness dies in any way (SIGKILL too).
// The first Spawn() makes the process a child subreaper and forks the
// watchdog.
//
// Every child is reaped: wait / terminate / kill reap it, and the destructor
// SIGKILLs and reaps a child still running. Reaping and signalling go through
// one registry under one mutex, so a signal is never sent to a pid that was
// already reaped (and possibly reused). SignalAllChildren() is what the
// interrupt handling uses to stop everything at once.
//
// Thread-safety: a ChildProcess object is used by one thread at a time; the
// registry functions are safe from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace idemproof::runtime {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up in PATH
  std::map<std::string, std::string> env;  // added to (or overriding) the harness's environment
  std::string cwd;          // empty = the harness's working directory
  std::string stdout_path;  // appended; empty = /dev/null
  std::string stderr_path;  // appended; empty = /dev/null
};

// How a reaped child ended.
struct ExitInfo {
  bool signalled = false;
  int code = 0;  // exit code, or the signal number when signalled
  // "exit 0", "signal 9 (Killed)".
  std::string ToString() const;
};

class ChildProcess {
 public:
  // Starts the process. Errors: kInvalidArgument (empty argv), kNotFound
  // (argv[0] not found in PATH), kProcessError (spawn failed, exec failed:
  // the message carries the errno text), kIoError (cannot open a log file).
  static Result<ChildProcess> Spawn(const ProcessSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  // SIGKILLs and reaps the child if it is still there.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // Reaps the child if it has exited; returns how it ended, or nullopt while
  // it runs. After a successful reap, every later call returns the same info.
  std::optional<ExitInfo> Poll();
  bool Running() { return !Poll().has_value(); }

  // Waits up to `timeout` for the child to exit (and reaps it).
  std::optional<ExitInfo> WaitFor(std::chrono::milliseconds timeout);

  // SIGTERM, then SIGKILL if still running after `grace`. Always reaps.
  ExitInfo Terminate(std::chrono::milliseconds grace);

  // SIGKILL and reap.
  ExitInfo Kill();

  // Sends `sig` (e.g. SIGSTOP/SIGCONT) to the child's process group if the
  // child is not reaped yet.
  // Returns false when it is already gone.
  bool Signal(int sig);

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
  std::optional<ExitInfo> exit_;
};

// Sends `sig` to the process group of every child started through
// ChildProcess and not yet reaped.
// Returns how many were signalled. Safe from any thread (not from a signal
// handler: use it from a signal-waiting thread).
int SignalAllChildren(int sig);

// Reaps every registered child that has exited, without blocking; returns
// how many are still running.
int ReapExitedChildren();

// Pids of the children started and not yet reaped.
std::vector<pid_t> LiveChildren();

}  // namespace idemproof::runtime
