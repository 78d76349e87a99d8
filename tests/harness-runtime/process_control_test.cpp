// ChildProcess and TargetProcess with real processes: output to files, exit
// codes, SIGTERM-then-SIGKILL, reaping (no zombie, nothing left registered),
// exec failures as values, the port read from stdout by regex under a
// deadline, and a target that dies before it is ready.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <thread>
#include <vector>

#include "clients/http_client.h"
#include "model/target.h"
#include "platform/child_process.h"
#include "runtime/service_processes.h"
#include "runtime/target_process.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::runtime;
using namespace idemproof::testing;

namespace {

ProcessSpec Shell(const std::string& script, const std::string& dir) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", script};
  spec.stdout_path = dir + "/out.txt";
  spec.stderr_path = dir + "/err.txt";
  return spec;
}

TargetDescription FakeTarget(const std::string& script, const std::string& extra_start = "") {
  std::string yaml =
      "name: fake\n"
      "base_url: \"http://127.0.0.1:{{port}}\"\n"
      "start:\n"
      "  argv: [sh, -c, '" + script + "']\n"
      "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
      "  start_timeout: 500ms\n"
      "  stop_timeout: 300ms\n" + extra_start +
      "actions:\n"
      "  a: {role: create, request: {method: POST, path: /a}}\n";
  auto t = ParseTarget(yaml, "fake.yaml");
  if (!t.ok()) FAIL(t.status().ToString());
  return std::move(t).value();
}

}  // namespace

TEST_CASE("a child's output goes to its files and its exit code is reaped", "[process]") {
  const std::string dir = ScratchDir("child-output");
  auto child = ChildProcess::Spawn(Shell("echo out; echo err >&2; exit 3", dir));
  REQUIRE(child.ok());
  auto exit = child->WaitFor(std::chrono::seconds(10));
  REQUIRE(exit.has_value());
  CHECK_FALSE(exit->signalled);
  CHECK(exit->code == 3);
  CHECK(ReadFile(dir + "/out.txt") == "out\n");
  CHECK(ReadFile(dir + "/err.txt") == "err\n");
  CHECK_FALSE(ProcessExists(child->pid()));  // reaped: not even a zombie
  CHECK(LiveChildren().empty());
}

TEST_CASE("a child inherits no descriptor of the harness but stdin, stdout and stderr", "[process]") {
  // A socket opened without close-on-exec, as Asio opens every socket: were
  // it inherited, a connection the harness closes would stay open in a target.
  const int leaky = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(leaky > 2);
  const std::string dir = ScratchDir("child-fds");
  auto child = ChildProcess::Spawn(
      Shell("if [ -e /proc/self/fd/" + std::to_string(leaky) + " ]; then echo inherited; else echo closed; fi", dir));
  REQUIRE(child.ok());
  REQUIRE(child->WaitFor(std::chrono::seconds(10)).has_value());
  ::close(leaky);
  CHECK(ReadFile(dir + "/out.txt") == "closed\n");
}

TEST_CASE("terminate escalates to SIGKILL for a child that ignores SIGTERM", "[process][slow]") {
  const std::string dir = ScratchDir("child-term");
  // The marker line tells the trap is installed before SIGTERM is sent.
  auto child = ChildProcess::Spawn(Shell("trap '' TERM; echo armed; while :; do sleep 1; done", dir));
  REQUIRE(child.ok());
  for (int i = 0; i < 1000 && ReadFile(dir + "/out.txt").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  REQUIRE(ReadFile(dir + "/out.txt") == "armed\n");
  ExitInfo exit = child->Terminate(std::chrono::milliseconds(200));
  CHECK(exit.signalled);
  CHECK(exit.code == SIGKILL);
  CHECK_FALSE(ProcessExists(child->pid()));
}

TEST_CASE("a child that honours SIGTERM stops with it", "[process]") {
  const std::string dir = ScratchDir("child-term-ok");
  auto child = ChildProcess::Spawn(Shell("exec sleep 30", dir));
  REQUIRE(child.ok());
  ExitInfo exit = child->Terminate(std::chrono::seconds(10));
  CHECK(exit.signalled);
  CHECK(exit.code == SIGTERM);
}

TEST_CASE("exec failures are values, not crashes", "[process]") {
  const std::string dir = ScratchDir("child-exec");
  ProcessSpec spec;
  spec.argv = {"idemproof-no-such-program"};
  auto missing = ChildProcess::Spawn(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);

  spec.argv = {dir + "/not-there"};
  auto bad_path = ChildProcess::Spawn(spec);
  REQUIRE_FALSE(bad_path.ok());
  CHECK(bad_path.status().code() == StatusCode::kProcessError);
  CHECK(bad_path.status().message().find("No such file") != std::string::npos);

  spec.argv = {"true"};
  spec.cwd = dir + "/no-such-dir";
  auto bad_cwd = ChildProcess::Spawn(spec);
  REQUIRE_FALSE(bad_cwd.ok());
  CHECK(bad_cwd.status().message().find("cannot enter") != std::string::npos);
  CHECK(LiveChildren().empty());
}

TEST_CASE("SignalAllChildren reaches every registered child, destructors reap", "[process]") {
  const std::string dir = ScratchDir("child-all");
  std::vector<pid_t> pids;
  {
    auto a = ChildProcess::Spawn(Shell("exec sleep 30", dir));
    auto b = ChildProcess::Spawn(Shell("exec sleep 30", dir));
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    pids = {a->pid(), b->pid()};
    CHECK(LiveChildren().size() == 2);
    CHECK(SignalAllChildren(SIGKILL) == 2);
    // Both die of SIGKILL; reaping them leaves none running (bounded wait:
    // the kernel tears them down asynchronously).
    int running = 2;
    for (int i = 0; i < 2000 && (running = ReapExitedChildren()) > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    CHECK(running == 0);
    CHECK(LiveChildren().empty());
    auto ea = a->WaitFor(std::chrono::seconds(10));
    REQUIRE(ea.has_value());
    CHECK(ea->code == SIGKILL);
    // b is left to its destructor.
  }
  CHECK(LiveChildren().empty());
  for (pid_t pid : pids) CHECK_FALSE(ProcessExists(pid));
}

TEST_CASE("ReapExitedChildren reaps the child that exited and counts the one still running", "[process]") {
  const std::string dir = ScratchDir("child-reap");
  auto done = ChildProcess::Spawn(Shell("exit 7", dir));
  auto sleeper = ChildProcess::Spawn(Shell("exec sleep 30", dir));
  REQUIRE(done.ok());
  REQUIRE(sleeper.ok());
  // Until the first child has exited both count as running; bounded wait.
  int running = 2;
  for (int i = 0; i < 2000 && (running = ReapExitedChildren()) != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(running == 1);
  CHECK(LiveChildren() == std::vector<pid_t>{sleeper->pid()});
  CHECK_FALSE(ProcessExists(done->pid()));  // reaped by the sweep, not by its owner
  // The owner still learns the exit code the sweep collected.
  auto exit = done->Poll();
  REQUIRE(exit.has_value());
  CHECK_FALSE(exit->signalled);
  CHECK(exit->code == 7);
  CHECK(sleeper->Running());
  sleeper->Kill();
  CHECK(ReapExitedChildren() == 0);
}

TEST_CASE("the environment overlay and working directory reach the child", "[process]") {
  const std::string dir = ScratchDir("child-env");
  ProcessSpec spec = Shell("echo \"$IDEMPROOF_TEST_VAR $(pwd)\"", dir);
  spec.env["IDEMPROOF_TEST_VAR"] = "hello";
  spec.cwd = dir;
  auto child = ChildProcess::Spawn(spec);
  REQUIRE(child.ok());
  REQUIRE(child->WaitFor(std::chrono::seconds(10)).has_value());
  CHECK(ReadFile(dir + "/out.txt") == "hello " + dir + "\n");
}

TEST_CASE("a target's port is read from its stdout by the declared regex", "[process]") {
  const std::string dir = ScratchDir("target-port");
  TargetDescription t = FakeTarget("echo starting; echo listening on 127.0.0.1:45678; exec sleep 30");
  TargetProcess target(t, {}, dir + "/target", std::nullopt, nullptr);
  REQUIRE(target.Start().ok());
  CHECK(target.vars().at("port") == "45678");
  CHECK(target.base_url() == "http://127.0.0.1:45678");
  CHECK(target.Running());
  pid_t pid = target.pid();
  auto stopped = target.Stop();
  REQUIRE(stopped.ok());
  CHECK_FALSE(ProcessExists(pid));
  CHECK(ReadFile(dir + "/target.stdout").find("listening on") != std::string::npos);
}

TEST_CASE("a target that never prints its port fails after start_timeout and is reaped", "[process][slow]") {
  const std::string dir = ScratchDir("target-silent");
  TargetDescription t = FakeTarget("echo nothing useful; exec sleep 30");
  TargetProcess target(t, {}, dir + "/target", std::nullopt, nullptr);
  Status s = target.Start();
  CHECK(s.code() == StatusCode::kTimeout);
  CHECK(s.message().find("no line matching") != std::string::npos);
  CHECK_FALSE(target.Running());
  CHECK(LiveChildren().empty());
}

TEST_CASE("a target that dies at start is reported with its stderr", "[process]") {
  const std::string dir = ScratchDir("target-dies");
  TargetDescription t = FakeTarget("echo cannot open database >&2; exit 4");
  TargetProcess target(t, {}, dir + "/target", std::nullopt, nullptr);
  Status s = target.Start();
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message().find("exit 4") != std::string::npos);
  CHECK(s.message().find("cannot open database") != std::string::npos);
}

TEST_CASE("flaw_args are appended with {{flaw}} expanded", "[process]") {
  const std::string dir = ScratchDir("target-flaw");
  // The script prints its own arguments ($0 $1) after the port line.
  std::string yaml =
      "name: fake\n"
      "base_url: \"http://127.0.0.1:{{port}}\"\n"
      "start:\n"
      "  argv: [sh, -c, 'echo listening on 127.0.0.1:1234; echo \"args $0 $1\"; exec sleep 30']\n"
      "  port_from_stdout: 'listening on 127\\.0\\.0\\.1:(\\d+)'\n"
      "  flaw_args: [\"--flaw\", \"{{flaw}}\"]\n"
      "actions:\n"
      "  a: {role: create, request: {method: POST, path: /a}}\n";
  auto t = ParseTarget(yaml, "fake.yaml");
  REQUIRE(t.ok());
  TargetProcess target(*t, {}, dir + "/target", std::string("short-ttl"), nullptr);
  REQUIRE(target.Start().ok());
  for (int i = 0; i < 1000 && ReadFile(dir + "/target.stdout").find("args") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(ReadFile(dir + "/target.stdout").find("args --flaw short-ttl") != std::string::npos);
  REQUIRE(target.Kill().ok());
}

TEST_CASE("the reference service starts, answers its readiness probe and restarts", "[process][reference][slow]") {
  const std::string dir = ScratchDir("target-ref");
  auto t = LoadTargetFile(SourceDir() + "/scenarios/targets/reference.yaml");
  REQUIRE(t.ok());
  TemplateVars vars{{"build_dir", BuildDir()}, {"source_dir", SourceDir()}, {"run_dir", dir}};
  // The target file's argv names its services (payment stub, redis): start them first.
  ServiceProcesses services(t->services, vars, dir, nullptr);
  REQUIRE(services.Start().ok());
  for (const auto& [name, value] : services.Vars()) vars[name] = value;
  TargetProcess target(*t, vars, dir + "/target", std::nullopt, nullptr);
  REQUIRE(target.Start().ok());
  pid_t first = target.pid();
  REQUIRE(target.Restart().ok());
  CHECK(target.pid() != first);
  CHECK_FALSE(ProcessExists(first));
  CHECK(target.Running());
  auto exit = target.Stop();
  REQUIRE(exit.ok());
  CHECK(exit->ToString() == "exit 0");  // SIGTERM: a clean stop
}

// `until: accepting` (scenarios' start / restart): the start ends when the
// port accepts, so requests race the start-up; AwaitReady waits for the
// readiness request. The reference under serve-before-recovery listens 2 s
// before its readiness request answers 200; the correct one is ready at once.
TEST_CASE("a start until accepting returns before the readiness request answers, AwaitReady waits for it",
          "[process][reference][slow]") {
  auto t = LoadTargetFile(SourceDir() + "/scenarios/targets/reference.yaml");
  REQUIRE(t.ok());
  for (const bool flawed : {false, true}) {
    const std::string dir = ScratchDir(flawed ? "target-accepting-flaw" : "target-accepting");
    TemplateVars vars{{"build_dir", BuildDir()}, {"source_dir", SourceDir()}, {"run_dir", dir}};
    ServiceProcesses services(t->services, vars, dir, nullptr);
    REQUIRE(services.Start().ok());
    for (const auto& [name, value] : services.Vars()) vars[name] = value;
    TargetProcess target(*t, vars, dir + "/target",
                         flawed ? std::optional<std::string>("serve-before-recovery") : std::nullopt, nullptr);
    auto healthz = [&] {
      HttpClient http;
      OutgoingRequest probe;
      probe.set_url(target.base_url() + "/healthz");
      probe.timeout = std::chrono::seconds(2);
      return http.send(probe).status;
    };
    INFO((flawed ? "serve-before-recovery" : "correct"));
    REQUIRE(target.Start(StartUntil::kAccepting).ok());
    CHECK(target.ReadyPending());
    CHECK(healthz() == (flawed ? 503 : 200));  // answered: the port accepts
    REQUIRE(target.AwaitReady().ok());
    CHECK_FALSE(target.ReadyPending());
    CHECK(healthz() == 200);
    // A restart waits for readiness again unless told otherwise.
    REQUIRE(target.Restart().ok());
    CHECK_FALSE(target.ReadyPending());
    CHECK(healthz() == 200);
    REQUIRE(target.Stop().ok());
  }
}

TEST_CASE("a helper whose free port another process took before it bound it is started again on a new port",
          "[process][slow]") {
  // What 16 explore workers met: redis-server on a port the harness had just
  // found free, taken meanwhile by a payment stub listening on port 0. Here
  // the first start leaves a listener of its own session on the picked port
  // (another process group, as the stub) and exits as redis does.
  const std::string dir = ScratchDir("service-port-race");
  const std::string script =
      "if [ ! -e \"$2/first\" ]; then touch \"$2/first\"; "
      "setsid python3 -c \"import os, socket, sys, time; s = socket.socket(); s.bind((\\\"127.0.0.1\\\", "
      "int(sys.argv[1]))); s.listen(); open(sys.argv[2] + \\\"/stray.tmp\\\", \\\"w\\\").write(str(os.getpid())); "
      "os.rename(sys.argv[2] + \\\"/stray.tmp\\\", sys.argv[2] + \\\"/stray.pid\\\"); time.sleep(20)\" \"$1\" \"$2\" & "
      "i=0; while [ ! -e \"$2/stray.pid\" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; "
      "echo \"port $1 is taken\" >&2; exit 1; fi; echo \"ready on $1\"; exec sleep 30";
  auto t = ParseTarget("name: fake\nbase_url: \"http://127.0.0.1:1\"\nservices:\n  helper:\n"
                       "    argv: [sh, -c, '" + script + "', sh, \"{{port}}\", \"" + dir + "\"]\n"
                       "    free_port: true\n    ready_stdout: 'ready on'\n"
                       "actions:\n  a: {role: create, request: {method: POST, path: /a}}\n",
                       "fake.yaml");
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  ServiceProcesses services(t->services, {}, dir, nullptr);
  Status started = services.Start();
  const std::string stray = ReadFile(dir + "/stray.pid");
  INFO(started.ToString());
  CHECK(started.ok());
  REQUIRE_FALSE(stray.empty());
  const pid_t stray_pid = std::stoi(stray);
  CHECK(ReadFile(dir + "/service-helper.stdout").find("ready on") != std::string::npos);
  CHECK(ReadFile(dir + "/service-helper.stderr").find("is taken") != std::string::npos);  // the first start
  services.Stop();
  ::kill(stray_pid, SIGKILL);
  CHECK(LiveChildren().empty());
}
