#include "service_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <thread>

namespace idemproof::ref::testing {
namespace {

using Clock = std::chrono::steady_clock;

// fork/exec with stdout (and stderr when `with_stderr`) on a pipe; returns {pid, read end}.
std::pair<pid_t, int> spawn(const std::vector<std::string>& args, bool with_stderr = false) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  std::vector<std::string> argv_strings{reference_binary()};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
    if (with_stderr) dup2(fds[1], STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Reads from `fd` until `done(text)` or EOF or the deadline; returns the text.
template <typename Done>
std::string read_until(int fd, Clock::time_point deadline, Done done) {
  std::string text;
  char buf[512];
  while (!done(text)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

// waitpid with a deadline; the exit code, or nullopt (signal / still running).
std::optional<int> wait_for_exit(pid_t pid, Clock::time_point deadline, bool& reaped) {
  reaped = false;
  while (true) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      reaped = true;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return std::nullopt;
    }
    if (r < 0) {
      reaped = true;
      return std::nullopt;
    }
    if (Clock::now() > deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

OpenDescriptors open_descriptors(pid_t pid) {
  OpenDescriptors open;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++open.count;
    open.highest = std::max(open.highest, std::stoi(entry.path().filename().string()));
  }
  return open;
}

std::string reference_binary() {
  return std::string(IDEMPROOF_BINARY_DIR) + "/reference-impl/idemproof-ref";
}

ServiceProcess::ServiceProcess(std::vector<std::string> args,
                               std::chrono::milliseconds startup_deadline) {
  auto [pid, fd] = spawn(args);
  pid_ = pid;
  const std::string text = read_until(fd, Clock::now() + startup_deadline, [](const std::string& t) {
    return t.find('\n') != std::string::npos;
  });
  close(fd);  // the service writes nothing more to stdout
  static const std::regex kListening(R"(^listening on 127\.0\.0\.1:(\d+)\n)");
  std::smatch m;
  if (!std::regex_search(text, m, kListening)) {
    kill9();
    throw std::runtime_error("idemproof-ref did not announce its port; stdout: " + text);
  }
  port_ = std::stoi(m[1].str());
}

ServiceProcess::~ServiceProcess() { kill9(); }

std::string ServiceProcess::url() const { return "http://127.0.0.1:" + std::to_string(port_); }

void ServiceProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::optional<int> ServiceProcess::terminate(std::chrono::milliseconds deadline) {
  if (pid_ <= 0) return std::nullopt;
  ::kill(pid_, SIGTERM);
  bool reaped = false;
  auto code = wait_for_exit(pid_, Clock::now() + deadline, reaped);
  if (!reaped) {
    kill9();
    return std::nullopt;
  }
  pid_ = -1;
  return code;
}

ExitedProcess run_reference_to_exit(const std::vector<std::string>& args,
                                    std::chrono::milliseconds deadline, Collect collect) {
  auto [pid, fd] = spawn(args, collect == Collect::stdout_and_stderr);
  const auto until = Clock::now() + deadline;
  ExitedProcess result;
  result.out = read_until(fd, until, [](const std::string&) { return false; });
  close(fd);
  bool reaped = false;
  result.exit_code = wait_for_exit(pid, until, reaped);
  if (!reaped) {
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  return result;
}

}  // namespace idemproof::ref::testing
