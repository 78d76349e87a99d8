#include "runtime/child_process.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace idemproof::runtime {

namespace {

// Pids started and not yet collected by their ChildProcess: nullopt while
// unreaped, the exit info once reaped by ReapExitedChildren() (kept until the
// owner polls). Reaping and signalling both hold the mutex, so kill() never
// reaches a reaped (possibly recycled) pid.
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<pid_t, std::optional<ExitInfo>>& registry() {
  static std::map<pid_t, std::optional<ExitInfo>> pids;
  return pids;
}

ExitInfo decode(int status) {
  ExitInfo info;
  if (WIFSIGNALED(status)) {
    info.signalled = true;
    info.code = WTERMSIG(status);
  } else {
    info.code = WEXITSTATUS(status);
  }
  return info;
}

// Non-blocking reap of one registered, unreaped pid, under the registry lock.
std::optional<ExitInfo> try_reap_locked(pid_t pid) {
  int status = 0;
  pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r == pid) return decode(status);
  if (r < 0 && errno == ECHILD) return ExitInfo{false, -1};  // not ours any more
  return std::nullopt;
}

std::string resolve_in_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

int open_log(const std::string& path) {
  if (path.empty()) return ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

}  // namespace

std::string ExitInfo::ToString() const {
  if (!signalled) return "exit " + std::to_string(code);
  const char* name = ::strsignal(code);
  return "signal " + std::to_string(code) + " (" + (name != nullptr ? name : "?") + ")";
}

Result<ChildProcess> ChildProcess::Spawn(const ProcessSpec& spec) {
  if (spec.argv.empty()) return Status::InvalidArgument("cannot start a process from an empty argv");
  const std::string exe = resolve_in_path(spec.argv[0]);
  if (exe.empty()) return Status::NotFound("'" + spec.argv[0] + "' not found in PATH");

  // Everything the child needs is built before fork(): after fork only
  // async-signal-safe calls are allowed in a multi-threaded parent.
  std::vector<std::string> env_storage;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    if (spec.env.count(name) == 0) env_storage.push_back(entry);
  }
  for (const auto& [name, value] : spec.env) env_storage.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_storage) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = spec.argv;
  std::vector<char*> argv;
  for (auto& s : argv_storage) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_fd = open_log(spec.stdout_path);
  if (out_fd < 0) return Status::IoError("cannot open " + spec.stdout_path + ": " + std::strerror(errno));
  int err_fd = open_log(spec.stderr_path);
  if (err_fd < 0) {
    ::close(out_fd);
    return Status::IoError("cannot open " + spec.stderr_path + ": " + std::strerror(errno));
  }
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(out_fd);
    ::close(err_fd);
    ::close(null_fd);
    return Status(StatusCode::kProcessError, std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  std::unique_lock<std::mutex> lock(registry_mutex());
  pid_t pid = ::fork();
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::dup2(null_fd, 0);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    int err = 0;
    if (cwd != nullptr && ::chdir(cwd) != 0) {
      err = errno;
    } else {
      ::execve(exe.c_str(), argv.data(), envp.data());
      err = errno;
    }
    ssize_t ignored = ::write(exec_pipe[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  int fork_errno = errno;
  if (pid > 0) registry().emplace(pid, std::nullopt);
  lock.unlock();
  ::close(out_fd);
  ::close(err_fd);
  ::close(null_fd);
  ::close(exec_pipe[1]);
  if (pid < 0) {
    ::close(exec_pipe[0]);
    return Status(StatusCode::kProcessError, std::string("fork: ") + std::strerror(fork_errno));
  }
  // The pipe closes on a successful exec; otherwise it carries the errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(exec_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  ChildProcess child(pid);
  if (n == sizeof child_errno) {
    child.Kill();
    std::string what = (cwd != nullptr && ::access(cwd, X_OK) != 0) ? "cannot enter " + spec.cwd
                                                                      : "cannot execute " + exe;
    return Status(StatusCode::kProcessError, what + ": " + std::strerror(child_errno));
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(other.pid_), exit_(std::move(other.exit_)) {
  other.pid_ = -1;
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !exit_) Kill();
    pid_ = other.pid_;
    exit_ = std::move(other.exit_);
    other.pid_ = -1;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_) Kill();
}

std::optional<ExitInfo> ChildProcess::Poll() {
  if (exit_ || pid_ <= 0) return exit_;
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(pid_);
  if (it == registry().end()) {
    exit_ = ExitInfo{false, -1};  // unknown: not in the registry (cannot happen)
    return exit_;
  }
  exit_ = it->second ? it->second : try_reap_locked(pid_);
  if (exit_) registry().erase(it);
  return exit_;
}

std::optional<ExitInfo> ChildProcess::WaitFor(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (auto info = Poll()) return info;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

bool ChildProcess::Signal(int sig) {
  if (exit_ || pid_ <= 0) return false;
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto it = registry().find(pid_);
  if (it == registry().end() || it->second) return false;
  return ::kill(pid_, sig) == 0;
}

ExitInfo ChildProcess::Terminate(std::chrono::milliseconds grace) {
  if (auto info = Poll()) return *info;
  Signal(SIGTERM);
  if (auto info = WaitFor(grace)) return *info;
  return Kill();
}

ExitInfo ChildProcess::Kill() {
  if (auto info = Poll()) return *info;
  Signal(SIGKILL);
  // SIGKILL cannot be caught; the wait is bounded by the kernel tearing the
  // process down, but keep a generous deadline rather than block forever.
  if (auto info = WaitFor(std::chrono::seconds(30))) return *info;
  return ExitInfo{true, SIGKILL};
}

int SignalAllChildren(int sig) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  int n = 0;
  for (const auto& [pid, exit] : registry()) {
    if (!exit && ::kill(pid, sig) == 0) ++n;
  }
  return n;
}

int ReapExitedChildren() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  int running = 0;
  for (auto& [pid, exit] : registry()) {
    if (!exit) exit = try_reap_locked(pid);
    if (!exit) ++running;
  }
  return running;
}

std::vector<pid_t> LiveChildren() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  std::vector<pid_t> pids;
  for (const auto& [pid, exit] : registry()) {
    if (!exit) pids.push_back(pid);
  }
  return pids;
}

}  // namespace idemproof::runtime
