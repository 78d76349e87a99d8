// The interpreter's target instances under concurrency: a scenario spawns
// instances while background sends look instances up on their own threads.
// scripts/tsan.sh runs this case in a -fsanitize=thread build: a lookup
// without the instances' lock is a data race ThreadSanitizer reports.
// And the environment part of a run (run_environment.h) on its own: the
// process control starts, pauses and stops the target with an environment
// and a recorder, no step context.
#include <catch2/catch.hpp>

#include <atomic>
#include <map>
#include <set>
#include <thread>

#include "model/history_events.h"
#include "model/scenario.h"
#include "model/target.h"
#include "oracles/oracle.h"
#include "runtime/interpreter.h"
#include "runtime/process_steps.h"
#include "runtime/run_environment.h"
#include "runtime/run_recorder.h"
#include "runtime/target_instances.h"
#include "test_support.h"

using namespace idemproof;
using namespace idemproof::runtime;
using namespace idemproof::testing;

namespace {

// The reference as a target that spawn steps can start again (its port from
// stdout, its store in the run directory).
Result<TargetDescription> SpawnableReference() {
  return ParseTarget(R"(
name: ref
base_url: "http://127.0.0.1:{{port}}"
start:
  argv: [")" + ReferenceExe() + R"(", "--port", "0", "--db", "{{run_dir}}/ref.db"]
  port_from_stdout: 'listening on 127\.0\.0\.1:(\d+)'
  ready: {request: {method: GET, path: /healthz}, status: 200, timeout: 10s}
  start_timeout: 10s
request_timeout: 5s
actions:
  health: {role: create, request: {method: GET, path: /healthz}}
)",
                     "ref.yaml");
}

}  // namespace

TEST_CASE("instances spawn while background sends look instances up", "[interpreter][slow][tsan]") {
  const std::string dir = ScratchDir("spawn-race");
  auto target = SpawnableReference();
  INFO(target.status().ToString());
  REQUIRE(target.ok());
  // Two background senders to spawned instances and one to main, running
  // while three more instances spawn.
  auto scenario = ParseScenario(R"(
layer: concurrency
hunts: a spawn racing background sends
steps:
  - spawn: a
  - send: health
    instance: a
    background: true
    repeat: 40
    every: 5ms
  - send: health
    background: true
    repeat: 40
    every: 5ms
  - spawn: b
  - send: health
    instance: b
    background: true
    repeat: 20
    every: 5ms
  - spawn: c
  - spawn: d
  - join
expect: [one_record]
)",
                                "spawn-race.yaml", BuiltinOracles().Vocabulary());
  REQUIRE(scenario.ok());
  InterpreterOptions options;
  options.seed = 7;
  options.run_namespace = "tsan";
  Interpreter interpreter(*target, options);
  ScenarioRun run = interpreter.Run(*scenario, dir, 0);
  INFO(run.history.ToJsonl());
  REQUIRE(run.error.ok());

  std::set<std::string> spawned;
  std::map<std::string, int> answered;  // process -> 200 answers
  for (const auto& e : run.history.events()) {
    if (e.f == event_f::kSpawn && e.type == EventType::kOk) spawned.insert(e.value.at("instance").get<std::string>());
    if (e.f == event_f::kSend && e.type == EventType::kOk && e.value.at("response").at("status") == 200)
      ++answered[e.process];
  }
  CHECK(spawned == std::set<std::string>{"a", "b", "c", "d"});
  // Every background request reached its instance: none was lost to the race.
  CHECK(answered[event_process::Client(1)] == 40);
  CHECK(answered[event_process::Client(2)] == 40);
  CHECK(answered[event_process::Client(3)] == 20);
  // Main and four spawned instances, each started once and stopped at the end.
  CHECK(run.target_pids.size() == 5);
  for (pid_t pid : run.target_pids) CHECK_FALSE(ProcessExists(pid));
}

// The same race without HTTP in between: lookups in a tight loop on two
// threads while the interpreter's thread spawns. A scenario's sends take
// other locks (the history's) between lookups, which can order them before
// a spawn's insert and hide a missing lock from ThreadSanitizer; here the
// lookups keep running while every insert happens.
TEST_CASE("instances lookups in a tight loop while instances spawn", "[interpreter][slow][tsan]") {
  const std::string dir = ScratchDir("spawn-lookup-race");
  auto target = SpawnableReference();
  INFO(target.status().ToString());
  REQUIRE(target.ok());
  std::atomic<bool> cancel{false};
  TargetInstances instances(*target, TemplateVars{{"run_dir", dir}}, dir + "/main", std::nullopt, &cancel);
  pid_t pid = 0;
  REQUIRE(instances.Spawn("a", &pid).ok());
  std::atomic<bool> done{false};
  std::atomic<int> found_a{0};
  auto look_up = [&] {
    // Bounded: at most 2,000,000 lookups, whatever the spawns do.
    for (int i = 0; i < 2'000'000 && !done.load(); ++i) {
      if (instances.Url("a").ok()) found_a.fetch_add(1, std::memory_order_relaxed);
      (void)instances.Pid("b");
      (void)instances.Url("d");
    }
  };
  std::thread t1(look_up), t2(look_up);
  Status spawned = Status::Ok();
  for (const char* name : {"b", "c", "d", "e"}) {
    Status s = instances.Spawn(name, &pid);
    if (!s.ok()) spawned = s;
  }
  done = true;
  t1.join();
  t2.join();
  REQUIRE(spawned.ok());
  CHECK(found_a.load() > 0);
  CHECK(instances.Url("e").ok());
  instances.StopAll();
  CHECK_FALSE(instances.Url("a").ok());
}

TEST_CASE("the run environment starts, pauses and stops the target with a recorder and no step context",
          "[interpreter][environment]") {
  const std::string dir = ScratchDir("run-environment");
  auto target = SpawnableReference();
  INFO(target.status().ToString());
  REQUIRE(target.ok());
  InterpreterOptions options;
  RunRecorder recorder(7, "envtest", "environment", 0);
  RunEnvironment env(*target, options, recorder, dir);
  CHECK(env.base_vars().at("run_dir") == dir);
  CHECK(env.base_vars().at("run") == recorder.naming().run());
  CHECK_FALSE(env.HasInstances());
  // No services: nothing started, nothing recorded.
  REQUIRE(env.StartServices().ok());
  CHECK(env.services() != nullptr);
  auto url = env.ServiceUrl("payments");
  REQUIRE_FALSE(url.ok());
  CHECK(url.status().message() == "no running service 'payments'");

  env.StartInstances();
  REQUIRE(env.HasInstances());
  Status started = ControlTarget(env, recorder, ProcessOp::kStart, -1);
  INFO(started.ToString());
  REQUIRE(started.ok());
  const pid_t pid = env.instances().main().pid();
  CHECK(pid > 0);
  CHECK(recorder.out().target_pids == std::vector<pid_t>{pid});
  REQUIRE(PauseOrResume(env, recorder, true, "main", 0).ok());
  CHECK(env.paused() == std::set<std::string>{"main"});
  REQUIRE(PauseOrResume(env, recorder, false, "main", 1).ok());
  CHECK(env.paused().empty());
  CHECK(PauseOrResume(env, recorder, true, "nowhere", 2).code() == StatusCode::kUnsupported);
  REQUIRE(ControlTarget(env, recorder, ProcessOp::kStop, 3).ok());
  CHECK_FALSE(env.instances().main().Running());

  // Every control went into the recorder's history, in order, with its pid.
  std::vector<std::string> ops;
  for (const auto& e : recorder.out().history.events()) {
    if (e.type != EventType::kOk) continue;
    ops.push_back(e.f);
    CHECK(e.value.value("pid", 0) == pid);
  }
  CHECK(ops == std::vector<std::string>{event_f::kStart, event_f::kPause, event_f::kResume, event_f::kStop});

  // Handed back (namespace isolation keeps it so), it runs where it ran.
  TargetEnvironment kept = env.Release();
  CHECK_FALSE(env.HasInstances());
  CHECK(kept.dir == dir);
  REQUIRE(kept.instances != nullptr);
  kept.Stop();
}
