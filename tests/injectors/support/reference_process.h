// ReferenceProcess: the reference service (idemproof-ref) as a child process,
// for the injector tests and the bench.
//
// start() spawns the binary with `--port 0 --db <tmp>/ref.db` plus the given
// arguments, stdout/stderr to files in a fresh temporary folder, and waits
// (with a deadline) for its first line `listening on 127.0.0.1:PORT`. The
// destructor sends SIGTERM, waits up to 5 s, then SIGKILLs; the child is
// always reaped and the folder removed.
//
// Thread-safety: none; one owner.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace idemproof::testkit {

// The idemproof-ref binary: $IDEMPROOF_REF if set, else <binary_dir>/reference-impl/idemproof-ref,
// else the first <source_dir>/build*/reference-impl/idemproof-ref that exists.
std::optional<std::string> find_reference_binary(const std::string& binary_dir,
                                                 const std::string& source_dir);

class ReferenceProcess {
 public:
  ReferenceProcess() = default;
  ~ReferenceProcess();
  ReferenceProcess(const ReferenceProcess&) = delete;
  ReferenceProcess& operator=(const ReferenceProcess&) = delete;

  // Empty string on success, else why it failed (the child is reaped).
  std::string start(const std::string& binary, const std::vector<std::string>& args,
                    std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));
  // Any command that prints `listening on 127.0.0.1:PORT` first (no --port/--db added).
  std::string start_command(std::vector<std::string> argv,
                            std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));
  // A command that prints nothing useful (HAProxy in the foreground): ready
  // once 127.0.0.1:`port` accepts a TCP connection.
  std::string start_listening(std::vector<std::string> argv, std::uint16_t port,
                              std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));
  // A command that listens on `port` and says when it is ready by printing a
  // line matching `ready_pattern` (ECMAScript regex) on stdout: PostgreSQL
  // accepts TCP connections before it accepts logins.
  std::string start_printing(std::vector<std::string> argv, std::uint16_t port, const std::string& ready_pattern,
                             std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));
  // What the child wrote to stdout so far.
  std::string output() const;
  // Sends `signal` without waiting.
  void signal(int signal_number) const;
  std::uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then SIGKILL after 5 s; reaps. Returns the exit status (waitpid's).
  int stop();

 private:
  pid_t pid_ = -1;
  std::uint16_t port_ = 0;
  std::string dir_;

  // Spawns argv with stdout/stderr into dir_, then polls `ready` (which may
  // set port_) every 10 ms until it holds, the child exits or the deadline.
  std::string spawn_until(std::vector<std::string> argv, std::chrono::milliseconds ready_timeout,
                          const std::function<bool()>& ready, const std::string& what);
};

}  // namespace idemproof::testkit
