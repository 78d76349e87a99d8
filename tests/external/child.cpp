#include "child.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <stdexcept>
#include <thread>

namespace idemproof::testing {

using Clock = std::chrono::steady_clock;

std::string built(const std::string& relative) {
  return std::string(IDEMPROOF_BINARY_DIR) + "/" + relative;
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

Child::Child(std::vector<std::string> args, const std::string& ready,
             std::chrono::milliseconds deadline) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  out_fd_ = fds[0];
  const std::regex pattern(ready);
  const auto until = Clock::now() + deadline;
  std::string text;
  char buf[512];
  std::smatch m;
  while (!std::regex_search(text, m, pattern)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{out_fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(out_fd_, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  if (!std::regex_search(text, m, pattern)) {
    kill9();
    throw std::runtime_error("child " + args[0] + " not ready: " + text);
  }
  if (m.size() > 1 && m[1].matched) port_ = std::stoi(m[1].str());
  // Keep draining its output so a chatty child never blocks on a full pipe.
  std::thread([fd = out_fd_] {
    char sink[512];
    while (read(fd, sink, sizeof sink) > 0) {
    }
    close(fd);
  }).detach();
}

Child::~Child() { kill9(); }

int Child::wait_exit(std::chrono::milliseconds deadline) {
  const auto until = Clock::now() + deadline;
  while (pid_ > 0 && Clock::now() < until) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

void Child::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace idemproof::testing
