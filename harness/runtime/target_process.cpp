#include "runtime/target_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "clients/http_client.h"
#include "clients/tcp_connect.h"
#include "model/pattern.h"
#include "platform/port_owner.h"
#include "runtime/request_render.h"

namespace idemproof::runtime {

namespace {

using Clock = std::chrono::steady_clock;

std::chrono::milliseconds ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

std::string read_from(const std::string& path, std::size_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(static_cast<std::streamoff>(offset));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t file_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return 0;
  return static_cast<std::size_t>(in.tellg());
}

std::string strip_trailing_slash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

Status unavailable(std::string msg) { return Status(StatusCode::kUnavailable, std::move(msg)); }

}  // namespace

Result<int> FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(StatusCode::kIoError, std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(StatusCode::kIoError, std::string("cannot pick a free port: ") + std::strerror(err));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

TargetProcess::TargetProcess(const TargetDescription& target, TemplateVars vars,
                             std::string log_prefix, std::optional<std::string> flaw,
                             const std::atomic<bool>* cancel)
    : target_(target),
      vars_(std::move(vars)),
      log_prefix_(std::move(log_prefix)),
      flaw_(std::move(flaw)),
      cancel_(cancel) {
  if (flaw_) vars_["flaw"] = *flaw_;
}

TargetProcess::~TargetProcess() {
  if (child_) child_->Kill();
}

std::string TargetProcess::stdout_path() const { return Managed() ? log_prefix_ + ".stdout" : ""; }
std::string TargetProcess::stderr_path() const { return Managed() ? log_prefix_ + ".stderr" : ""; }

bool TargetProcess::Running() { return child_ && child_->Running(); }

bool TargetProcess::Signal(int sig) { return child_ && child_->Signal(sig); }

pid_t TargetProcess::pid() const {
  if (!child_) return 0;
  return child_->pid();
}

std::string OutputTail(const std::string& stderr_path, const std::string& stdout_path) {
  auto last = [](const std::string& path) {
    std::string all = path.empty() ? "" : read_from(path, 0);
    if (all.size() > 600) all = "..." + all.substr(all.size() - 600);
    while (!all.empty() && (all.back() == '\n' || all.back() == '\r')) all.pop_back();
    return all;
  };
  const std::string err = last(stderr_path), out = last(stdout_path);
  if (err.empty() && out.empty()) return "(stderr and stdout empty)";
  std::string text = err.empty() ? "" : "stderr: " + err;
  if (!out.empty()) text += (text.empty() ? "" : "; ") + std::string("stdout: ") + out;
  return text;
}

std::string TargetProcess::StderrTail() const { return OutputTail(stderr_path(), stdout_path()); }

Status TargetProcess::Start(StartUntil until) {
  if (!Managed()) {
    auto url = ExpandTemplate(target_.base_url, vars_);
    if (!url.ok()) return url.status();
    base_url_ = strip_trailing_slash(*url);
    return CheckAnswers();
  }
  if (Running()) return Status(StatusCode::kProcessError, "the target is already running");
  Status started = StartOnce(until);
  for (int tries = 1; !started.ok() && tries < kFreePortTries && LostPortRace(); ++tries) started = StartOnce(until);
  return started;
}

bool TargetProcess::LostPortRace() {
  if (!Managed() || !target_.start->free_port || !child_ || child_->Running()) return false;
  auto port = vars_.find("port");
  if (port == vars_.end()) return false;
  for (const PortHolder& h : ListenersOn(std::stoi(port->second)))
    if (h.pgid != child_->pid()) return true;
  return false;
}

Status TargetProcess::StartOnce(StartUntil until) {
  const StartCommand& start = *target_.start;
  ready_pending_ = false;
  if (start.free_port) {
    // A fresh one each start: the old one may have been taken meanwhile.
    auto port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    vars_["port"] = std::to_string(*port);
  }
  ProcessSpec spec;
  std::vector<std::string> argv = start.argv;
  if (flaw_) argv.insert(argv.end(), start.flaw_args.begin(), start.flaw_args.end());
  for (const auto& arg : argv) {
    auto a = ExpandTemplate(arg, vars_);
    if (!a.ok()) return a.status();
    spec.argv.push_back(*a);
  }
  for (const auto& [name, value] : start.env) {
    auto v = ExpandTemplate(value, vars_);
    if (!v.ok()) return v.status();
    spec.env[name] = *v;
  }
  auto cwd = ExpandTemplate(start.cwd, vars_);
  if (!cwd.ok()) return cwd.status();
  spec.cwd = cwd->empty() && vars_.count("run_dir") ? vars_.at("run_dir") : *cwd;
  spec.stdout_path = stdout_path();
  spec.stderr_path = stderr_path();
  const std::size_t offset = file_size(spec.stdout_path);

  // A port known before start (fixed in base_url) must be free: else a stale
  // server would answer in the target's place.
  if (auto known = ExpandTemplate(target_.base_url, vars_); known.ok() && start.port_from_stdout.empty()) {
    if (int port = LoopbackPort(*known); port > 0) {
      auto holders = ListenersOn(port);
      if (!holders.empty())
        return unavailable("port " + std::to_string(port) + " of " + *known + " is already held by " +
                           holders.front().Describe() +
                           " before the target was started: stop that process (a stale target?) or let the "
                           "target pick its port (port_from_stdout)");
    }
  }

  auto child = ChildProcess::Spawn(spec);
  if (!child.ok()) return unavailable("cannot start the target: " + child.status().message());
  child_.emplace(std::move(child).value());

  if (!start.port_from_stdout.empty()) {
    Status s = WaitForPort(offset);
    if (!s.ok()) {
      child_->Kill();
      return s;
    }
  }
  auto url = ExpandTemplate(target_.base_url, vars_);
  if (!url.ok()) {
    child_->Kill();
    return url.status();
  }
  base_url_ = strip_trailing_slash(*url);
  if (until == StartUntil::kAccepting) {
    Status accepting = WaitUntilAccepting();
    if (accepting.ok()) accepting = CheckAnswering();
    if (!accepting.ok()) {
      child_->Kill();
      return accepting;
    }
    ready_pending_ = start.ready.has_value();
    return Status::Ok();
  }
  Status ready = start.ready ? WaitUntilReady() : Status::Ok();
  // No readiness request went through TLS: one request checks the handshake
  // now, so a wrong CA stops the run here rather than as N unanswered sends.
  if (ready.ok() && !start.ready && base_url_.rfind("https://", 0) == 0) {
    Status tls = CheckAnswers();
    if (IsTlsRefusal(tls)) ready = tls;
  }
  if (ready.ok()) ready = CheckAnswering();
  if (!ready.ok()) child_->Kill();
  return ready;
}

Status TargetProcess::CheckAnswering() {
  const int port = LoopbackPort(base_url_);
  if (port == 0) return Status::Ok();  // not local: nothing to check here
  for (const PortHolder& h : ListenersOn(port, child_->pid())) {
    if (h.pgid == child_->pid()) continue;
    return unavailable("the process listening on port " + std::to_string(port) + " is " + h.Describe() +
                       ", not the target the harness started (pid " + std::to_string(child_->pid()) + ", " +
                       (child_->Running() ? "running" : "exited") + "): a stale server would be tested; " +
                       StderrTail());
  }
  return Status::Ok();
}

std::optional<ExitInfo> TargetProcess::Exited() {
  if (!child_) return std::nullopt;
  return child_->Poll();
}

Status TargetProcess::WaitForPort(std::size_t offset) {
  const StartCommand& start = *target_.start;
  auto pattern = Pattern::Compile(start.port_from_stdout);
  if (!pattern.ok()) return Status::InvalidArgument("port_from_stdout: " + pattern.status().message());
  const auto deadline = Clock::now() + start.start_timeout;
  while (true) {
    std::string out = read_from(stdout_path(), offset);
    if (auto port = pattern->FirstGroup(out)) {
      vars_["port"] = *port;
      return Status::Ok();
    }
    if (auto exit = child_->Poll()) {
      return unavailable("the target exited (" + exit->ToString() +
                         ") before printing a line matching '" + start.port_from_stdout +
                         "'; " + StderrTail());
    }
    if (cancel_ != nullptr && cancel_->load()) return unavailable("interrupted while starting the target");
    if (Clock::now() >= deadline) {
      return Status(StatusCode::kTimeout,
                    "the target printed no line matching '" + start.port_from_stdout + "' within " +
                        FormatDuration(start.start_timeout) + " (see " + stdout_path() + "); " +
                        StderrTail());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Status TargetProcess::WaitUntilReady() {
  const ReadinessCheck& ready = *target_.start->ready;
  const auto deadline = Clock::now() + ready.timeout;
  HttpClient client(cancel_);
  std::string last = "no answer yet";
  while (true) {
    auto remaining = ms(deadline - Clock::now());
    auto req = RenderRequest(ready.request, base_url_, vars_, target_.headers, {},
                             std::min<Duration>(std::chrono::seconds(2),
                                                std::max<Duration>(remaining, std::chrono::milliseconds(50))));
    if (!req.ok()) return req.status();
    req->tls = target_.tls;
    req->http_version = target_.http.version;
    HttpExchange e = client.send(*req);
    if (e.outcome == HttpOutcome::kAnswered && e.status == ready.status) return Status::Ok();
    if (e.tls_refused) return TlsRefused(e.error, base_url_, target_.file);
    last = e.outcome == HttpOutcome::kAnswered ? "status " + std::to_string(e.status) : e.error;
    if (auto exit = child_->Poll()) {
      return unavailable("the target exited (" + exit->ToString() + ") before it was ready; " +
                         StderrTail());
    }
    if (cancel_ != nullptr && cancel_->load()) return unavailable("interrupted while waiting for the target");
    if (Clock::now() >= deadline) {
      return unavailable("the target did not answer " + ready.request.method + " " +
                         req->url() + " with " + std::to_string(ready.status) + " within " +
                         FormatDuration(ready.timeout) + " (last: " + last + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status TargetProcess::WaitUntilAccepting() {
  const StartCommand& start = *target_.start;
  OriginParts origin;
  if (!SplitOrigin(base_url_, &origin))
    return Status::InvalidArgument("'until: accepting' needs an http:// or https:// base URL, not " + base_url_);
  const std::string& host = origin.host;
  const std::string& port = origin.port;
  const Duration timeout = start.ready ? start.ready->timeout : start.start_timeout;
  const auto deadline = Clock::now() + timeout;
  std::string last = "no attempt yet";
  while (true) {
    const auto left = std::max<std::chrono::milliseconds>(ms(deadline - Clock::now()), std::chrono::milliseconds(1));
    if (const int fd = ConnectTcp(host, port, std::min<std::chrono::milliseconds>(left, std::chrono::milliseconds(200)),
                                  &last);
        fd >= 0) {
      ::close(fd);  // the port accepts: that is all this start waits for
      return Status::Ok();
    }
    if (auto exit = child_->Poll())
      return unavailable("the target exited (" + exit->ToString() + ") before its port accepted a connection; " +
                         StderrTail());
    if (cancel_ != nullptr && cancel_->load()) return unavailable("interrupted while starting the target");
    if (Clock::now() >= deadline)
      return unavailable("no connection to " + host + ":" + port + " was accepted within " +
                         FormatDuration(timeout) + " (last: " + last + "); " + StderrTail());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

Status TargetProcess::AwaitReady() {
  if (!ready_pending_) return Status::Ok();
  if (!child_) return Status(StatusCode::kProcessError, "the target is not running");
  ready_pending_ = false;
  Status ready = WaitUntilReady();
  if (!ready.ok()) child_->Kill();
  return ready;
}

Status TargetProcess::CheckAnswers() {
  HttpClient client(cancel_);
  OutgoingRequest probe;
  probe.set_url(base_url_ + "/");
  probe.timeout = ms(std::min<Duration>(target_.request_timeout, std::chrono::seconds(5)));
  probe.tls = target_.tls;
  probe.http_version = target_.http.version;
  HttpExchange e = client.send(probe);
  if (e.outcome == HttpOutcome::kAnswered) return Status::Ok();
  if (e.tls_refused) return TlsRefused(e.error, base_url_, target_.file);
  return unavailable("nothing answers HTTP at " + base_url_ + " (" + e.error +
                     "); start the target or declare how to start it (start:) in " + target_.file);
}

Result<ExitInfo> TargetProcess::Stop() {
  if (!Managed()) return Status(StatusCode::kUnsupported, "the target file declares no start: command");
  if (!child_) return Status(StatusCode::kProcessError, "the target is not running");
  ExitInfo info = child_->Terminate(ms(target_.start->stop_timeout));
  child_.reset();
  ready_pending_ = false;
  return info;
}

Result<ExitInfo> TargetProcess::Kill() {
  if (!Managed()) return Status(StatusCode::kUnsupported, "the target file declares no start: command");
  if (!child_) return Status(StatusCode::kProcessError, "the target is not running");
  ExitInfo info = child_->Kill();
  child_.reset();
  ready_pending_ = false;
  return info;
}

Status TargetProcess::Restart(StartUntil until) {
  if (!Managed()) return Status(StatusCode::kUnsupported, "the target file declares no start: command");
  if (child_) {
    auto stopped = Stop();
    if (!stopped.ok()) return stopped.status();
  }
  return Start(until);
}

}  // namespace idemproof::runtime
