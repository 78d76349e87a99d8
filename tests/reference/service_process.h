// ServiceProcess: one real `idemproof-ref` child process for integration
// tests. The constructor fork/execs the binary with the given arguments and
// reads the first stdout line ("listening on 127.0.0.1:PORT") within a
// deadline; the destructor always kills (SIGKILL) and reaps the child. Not
// thread-safe: one owner thread drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace idemproof::ref::testing {

// Path of the built binary (from IDEMPROOF_BINARY_DIR).
std::string reference_binary();

class ServiceProcess {
 public:
  // Starts `reference_binary() args...`. Throws std::runtime_error when the
  // child does not announce its port within `startup_deadline`.
  explicit ServiceProcess(std::vector<std::string> args,
                          std::chrono::milliseconds startup_deadline = std::chrono::seconds(15));
  ~ServiceProcess();
  ServiceProcess(const ServiceProcess&) = delete;
  ServiceProcess& operator=(const ServiceProcess&) = delete;

  int port() const { return port_; }
  // The child's process id (for /proc and prlimit); -1 once it is reaped.
  pid_t pid() const { return pid_; }
  // "http://127.0.0.1:PORT"
  std::string url() const;

  // SIGKILL and reap (a crash). Idempotent.
  void kill9();
  // SIGTERM, then wait up to `deadline`; returns the exit status, or nullopt
  // when the child had to be SIGKILLed or died of a signal.
  std::optional<int> terminate(std::chrono::milliseconds deadline = std::chrono::seconds(20));

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// The descriptors process `pid` has open (/proc/PID/fd): how many, and the
// highest number.
struct OpenDescriptors {
  int count = 0;
  int highest = -1;
};
OpenDescriptors open_descriptors(pid_t pid);

// Result of running the binary to completion (e.g. `--flaw list`).
struct ExitedProcess {
  std::optional<int> exit_code;  // nullopt: killed at the deadline or by a signal
  std::string out;
};

enum class Collect { stdout_only, stdout_and_stderr };

// Runs `reference_binary() args...`, collecting stdout (and stderr, mixed in,
// with Collect::stdout_and_stderr), killing it at `deadline`.
ExitedProcess run_reference_to_exit(const std::vector<std::string>& args,
                                    std::chrono::milliseconds deadline = std::chrono::seconds(10),
                                    Collect collect = Collect::stdout_only);

}  // namespace idemproof::ref::testing
