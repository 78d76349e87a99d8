// Child: one real child process for the side-effect tests (idemproof-stub,
// idemproof-ref, redis-server). The constructor fork/execs argv with stdout
// and stderr into a pipe and waits (with a deadline) for a line matching
// `ready` on it; group 1 of the match, when present, is the port. The
// destructor always SIGKILLs and reaps it. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace idemproof::testing {

std::string built(const std::string& relative);  // IDEMPROOF_BINARY_DIR + "/" + relative

// A free loopback TCP port (bound and released: a small race, fine in tests).
int free_port();

class Child {
 public:
  Child(std::vector<std::string> argv, const std::string& ready,
        std::chrono::milliseconds deadline = std::chrono::seconds(15));
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Waits (deadline) for the child to end on its own; the raw wait status, or -1.
  int wait_exit(std::chrono::milliseconds deadline);
  // SIGKILL and reap; idempotent.
  void kill9();

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int out_fd_ = -1;
};

}  // namespace idemproof::testing
