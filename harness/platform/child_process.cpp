#include "platform/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <csignal>
#include <cstring>
#include <set>
#include <thread>

#include "base/thread_annotations.h"

extern char** environ;

namespace idemproof::runtime {

namespace {

// Pids started and not yet collected by their ChildProcess: nullopt while
// unreaped, the exit info once reaped by ReapExitedChildren() (kept until the
// owner polls). Reaping and signalling both hold the mutex, so kill() never
// reaches a reaped (possibly recycled) pid.
base::Mutex& registry_mutex() {
  static base::Mutex m;
  return m;
}
std::map<pid_t, std::optional<ExitInfo>>& registry() REQUIRES(registry_mutex()) {
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

// Why a watchdog process, and why the harness is a subreaper:
// Every child leads its own process group, and every signal goes to the whole
// group, so a wrapper (`sh -c "python3 server.py"`, npm, gunicorn) takes its
// real server with it. PR_SET_PDEATHSIG covers only the direct child, so it
// cannot end the group when the harness is SIGKILLed. A pipe the children
// watch would need their cooperation, and a reaper that forks every child
// would hide the real pid from waitpid. Instead one small watchdog, forked
// once, holds the other end of a socket the harness never closes: the kernel
// closes it on any death of the harness (SIGKILL included), the watchdog reads
// EOF and SIGKILLs every process group still registered. The harness is also
// a child subreaper, so members orphaned when their leader dies become its
// children and are reaped here (PID 1 in a container may never reap them).
constexpr int kMaxWatched = 4096;

int watchdog_fd = -1;  // the harness's end; -1 until the watchdog is forked

// One past the highest descriptor this process may hold (for loops that
// stand in for close_range where the kernel lacks it).
int max_fd_limit() {
  struct rlimit lim {};
  return ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
             ? static_cast<int>(std::min<rlim_t>(lim.rlim_cur, 1 << 20))
             : 1024;
}

[[noreturn]] void watchdog_main(int fd, int max_fd) {
  // Async-signal-safe calls only: the parent may be multi-threaded. Drop every
  // inherited descriptor so no socket the harness closes stays open here.
  if (fd != 3) {
    ::dup2(fd, 3);
    ::close(fd);
  }
  if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {
    for (int i = 4; i < max_fd; ++i) ::close(i);
  }
  ::setpgid(0, 0);  // a Ctrl-C at the terminal must not end the watchdog first
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  static pid_t groups[kMaxWatched];
  int n = 0;
  while (true) {
    int32_t msg = 0;
    ssize_t r = ::read(3, &msg, sizeof msg);
    if (r < 0 && errno == EINTR) continue;
    if (r != sizeof msg) break;  // EOF: the harness is gone
    if (msg > 0 && n < kMaxWatched) {
      groups[n++] = msg;
    } else if (msg < 0) {
      for (int i = 0; i < n; ++i) {
        if (groups[i] == -msg) groups[i] = groups[--n];
      }
    }
  }
  for (int i = 0; i < n; ++i) ::kill(-groups[i], SIGKILL);
  ::_exit(0);
}

// Under the registry lock. Best effort: without a watchdog children still
// die with the harness's normal exit paths.
void ensure_watchdog_locked() REQUIRES(registry_mutex()) {
  if (watchdog_fd >= 0) return;
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
  const int max_fd = max_fd_limit();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(sv[0]);
    watchdog_main(sv[1], max_fd);
  }
  ::close(sv[1]);
  if (pid < 0) {
    ::close(sv[0]);
    return;
  }
  watchdog_fd = sv[0];
}

void tell_watchdog_locked(int32_t msg) REQUIRES(registry_mutex()) {
  if (watchdog_fd < 0) return;
  ssize_t ignored = ::send(watchdog_fd, &msg, sizeof msg, MSG_NOSIGNAL);
  (void)ignored;
}

// Groups already seen empty. A pid number is not reused while a process
// group of that id has members, so group signals are safe until then — and
// never sent after, when the id may belong to a stranger.
std::set<pid_t>& drained() REQUIRES(registry_mutex()) {
  static std::set<pid_t> groups;
  return groups;
}

// Reaps every exited child of ours in group `pgid` (members orphaned to the
// subreaper, and the leader: its status goes into the registry). Returns true
// once no process of the group is left.
bool reap_group_locked(pid_t pgid) REQUIRES(registry_mutex()) {
  if (drained().count(pgid) != 0) return true;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(-pgid, &status, WNOHANG)) > 0) {
    auto it = registry().find(r);
    if (it != registry().end() && !it->second) it->second = decode(status);
  }
  if (::kill(-pgid, 0) != 0 && errno == ESRCH) {
    drained().insert(pgid);
    tell_watchdog_locked(-pgid);
    return true;
  }
  return false;
}

// After the leader was reaped: SIGKILL what is left of its group (a wrapper's
// server) and reap it, bounded.
void kill_group_locked(pid_t pgid) REQUIRES(registry_mutex()) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!reap_group_locked(pgid) && std::chrono::steady_clock::now() < deadline) {
    ::kill(-pgid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Non-blocking reap of one registered, unreaped pid, under the registry lock.
std::optional<ExitInfo> try_reap_locked(pid_t pid) REQUIRES(registry_mutex()) {
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
  if (null_fd < 0) {
    ::close(out_fd);
    ::close(err_fd);
    return Status::IoError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  }
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  // posix_spawn, not fork: glibc starts the child with clone(CLONE_VM |
  // CLONE_VFORK), so the harness's page tables are not copied and its other
  // threads take no copy-on-write faults and TLB shootdowns afterwards. With
  // 16 explore workers, fork() made the harness itself the busiest process.
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawnattr_init(&attr);
  ::posix_spawn_file_actions_adddup2(&actions, null_fd, 0);
  ::posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  ::posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  if (cwd != nullptr) ::posix_spawn_file_actions_addchdir_np(&actions, cwd);
  // Only 0-2 cross exec: Asio's sockets are not close-on-exec, and a socket
  // the harness closes (a proxy dropping an answer, a client, or another
  // explore worker's) must not stay open in a target.
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  // Its own process group; no signal blocked; the harness's handlers and its
  // ignored SIGPIPE not inherited.
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP}) sigaddset(&defaults, sig);
  ::posix_spawnattr_setpgroup(&attr, 0);
  ::posix_spawnattr_setsigmask(&attr, &none);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  pid_t pid = -1;
  int spawn_errno = 0;
  {
    base::MutexLock lock(registry_mutex());
    ensure_watchdog_locked();
    // Returns once the child has exec'd, or with the errno of the step that failed.
    spawn_errno = ::posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), envp.data());
    if (spawn_errno == 0) {
      // A group signal sent from now on reaches the child's whole group.
      registry().emplace(pid, std::nullopt);
      tell_watchdog_locked(pid);
    }
  }
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  ::close(out_fd);
  ::close(err_fd);
  ::close(null_fd);
  if (spawn_errno != 0) {
    std::string what = (cwd != nullptr && ::access(cwd, X_OK) != 0) ? "cannot enter " + spec.cwd
                                                                      : "cannot execute " + exe;
    return Status(StatusCode::kProcessError, what + ": " + std::strerror(spawn_errno));
  }
  return ChildProcess(pid);
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
  base::MutexLock lock(registry_mutex());
  auto it = registry().find(pid_);
  if (it == registry().end()) {
    exit_ = ExitInfo{false, -1};  // unknown: not in the registry (cannot happen)
    return exit_;
  }
  exit_ = it->second ? it->second : try_reap_locked(pid_);
  if (exit_) {
    kill_group_locked(pid_);
    registry().erase(it);
    drained().erase(pid_);
  }
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
  base::MutexLock lock(registry_mutex());
  auto it = registry().find(pid_);
  if (it == registry().end() || it->second) return false;
  return ::kill(-pid_, sig) == 0;  // the whole group: wrappers take their server along
}

ExitInfo ChildProcess::Terminate(std::chrono::milliseconds grace) {
  if (auto info = Poll()) return *info;
  Signal(SIGTERM);
  // The grace is for the whole group: a wrapper may exit at once while its
  // server is still flushing.
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    {
      base::MutexLock lock(registry_mutex());
      if (reap_group_locked(pid_)) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
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
  base::MutexLock lock(registry_mutex());
  int n = 0;
  for (const auto& [pid, exit] : registry()) {
    if (!exit && ::kill(-pid, sig) == 0) ++n;
  }
  return n;
}

int ReapExitedChildren() {
  base::MutexLock lock(registry_mutex());
  int running = 0;
  for (auto& [pid, exit] : registry()) {
    if (!exit) exit = try_reap_locked(pid);
    if (exit) {
      kill_group_locked(pid);
    } else {
      ++running;
    }
  }
  return running;
}

std::vector<pid_t> LiveChildren() {
  base::MutexLock lock(registry_mutex());
  std::vector<pid_t> pids;
  for (const auto& [pid, exit] : registry()) {
    if (!exit) pids.push_back(pid);
  }
  return pids;
}

}  // namespace idemproof::runtime
