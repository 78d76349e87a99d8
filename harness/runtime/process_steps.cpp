#include "runtime/process_steps.h"

#include <csignal>

#include "model/history_events.h"

namespace idemproof::runtime {

namespace {

const char* ControlEvent(ProcessOp kind) {
  switch (kind) {
    case ProcessOp::kStart: return event_f::kStart;
    case ProcessOp::kStop: return event_f::kStop;
    case ProcessOp::kKill: return event_f::kKill;
    default: return event_f::kRestart;
  }
}

}  // namespace

namespace {

// Start, stop, kill or restart of an instance other than main.
Status ControlOther(RunEnvironment& env, RunRecorder& recorder, ProcessOp kind, int index, const std::string& instance) {
  HistoryEvent invoke = ProcessInvoke(ControlEvent(kind), index, {{"instance", instance}});
  const std::int64_t start = monotonic_ns();
  TargetInstances::ControlOutcome outcome = env.instances().Control(instance, kind);
  HistoryEvent done = CompletionOf(invoke, outcome.status.ok() ? EventType::kOk : EventType::kFail);
  recorder.Append(std::move(invoke), start);
  done.value["pid"] = outcome.pid;
  if (outcome.exit) done.value["exit"] = outcome.exit->ToString();
  if (!outcome.port.empty()) done.value["port"] = outcome.port;
  if (!outcome.status.ok()) done.value["error"] = outcome.status.message();
  recorder.Append(std::move(done), monotonic_ns());
  const bool down = kind == ProcessOp::kStop || kind == ProcessOp::kKill;
  if (outcome.status.ok() && outcome.pid > 0 && !down) recorder.out().target_pids.push_back(outcome.pid);
  return outcome.status;
}

}  // namespace

Status StartDeclaredInstances(RunEnvironment& env, RunRecorder& recorder) {
  for (const auto& name : env.instances().declared()) {
    if (name == "main") continue;
    Status s = ControlOther(env, recorder, ProcessOp::kStart, -1, name);
    if (!s.ok()) return Status(StatusCode::kUnavailable, "target instance " + name + ": " + s.message());
  }
  return Status::Ok();
}

Status ControlTarget(RunEnvironment& env, RunRecorder& recorder, ProcessOp kind, int index, const std::string& instance,
                     StartUntil until) {
  if (instance != "main") {
    if (until != StartUntil::kReady)
      return Status(StatusCode::kUnsupported, "'until: accepting' acts on main only, not on " + instance);
    return ControlOther(env, recorder, kind, index, instance);
  }
  TargetProcess& proc = env.instances().main();
  const char* f = ControlEvent(kind);
  const pid_t invoke_pid = proc.pid();
  HistoryEvent invoke = ProcessInvoke(f, index, {{"pid", invoke_pid}});
  const std::int64_t start = monotonic_ns();
  Status status;
  nlohmann::json result = nlohmann::json::object();
  if (kind == ProcessOp::kStart) {
    status = proc.Start(until);
  } else if (kind == ProcessOp::kRestart) {
    status = proc.Restart(until);
  } else {
    auto exit = kind == ProcessOp::kKill ? proc.Kill() : proc.Stop();
    if (exit.ok()) {
      result["exit"] = exit->ToString();
    } else {
      status = exit.status();
    }
  }
  // Background sends read the target's variables (the port) concurrently.
  env.instances().RefreshMain();
  if (!proc.Managed() && kind == ProcessOp::kStart) {
    // Nothing was started: no event, only the reachability check.
    return status;
  }
  HistoryEvent done = CompletionOf(invoke, status.ok() ? EventType::kOk : EventType::kFail);
  recorder.Append(std::move(invoke), start);
  done.value = result;
  const bool down = kind == ProcessOp::kStop || kind == ProcessOp::kKill;
  // The pid acted on: the old one for stop/kill, the new one for (re)start.
  done.value["pid"] = down ? invoke_pid : proc.pid();
  if (proc.vars().count("port")) done.value["port"] = proc.vars().at("port");
  if (!status.ok()) done.value["error"] = status.message();
  if (until == StartUntil::kAccepting) done.value["until"] = "accepting";
  recorder.Append(std::move(done), monotonic_ns());
  if (status.ok() && proc.pid() > 0 && !down) recorder.out().target_pids.push_back(proc.pid());
  return status;
}

Status AwaitMainReady(RunEnvironment& env, RunRecorder& recorder, int index) {
  TargetProcess& proc = env.instances().main();
  if (!proc.ReadyPending()) return Status::Ok();
  HistoryEvent invoke = ProcessInvoke(event_f::kReady, index, {{"pid", proc.pid()}});
  const std::int64_t start = monotonic_ns();
  const pid_t pid = proc.pid();
  Status status = proc.AwaitReady();
  env.instances().RefreshMain();
  HistoryEvent done = CompletionOf(invoke, status.ok() ? EventType::kOk : EventType::kFail);
  recorder.Append(std::move(invoke), start);
  done.value["pid"] = pid;
  if (!status.ok()) done.value["error"] = status.message();
  recorder.Append(std::move(done), monotonic_ns());
  return status;
}

Status PauseOrResume(RunEnvironment& env, RunRecorder& recorder, bool pause, const std::string& name, int index) {
  std::optional<pid_t> pid = env.instances().Pid(name);
  if (!pid)
    return Status(StatusCode::kUnsupported,
                  "no target instance '" + name + "' to " + (pause ? "pause" : "resume"));
  HistoryEvent invoke =
      ProcessInvoke(pause ? event_f::kPause : event_f::kResume, index, {{"instance", name}, {"pid", *pid}});
  HistoryEvent done = invoke;
  recorder.Append(std::move(invoke), monotonic_ns());
  const bool sent = env.instances().Signal(name, pause ? SIGSTOP : SIGCONT);
  if (pause && sent) env.paused().insert(name);
  if (!pause) env.paused().erase(name);
  done.type = sent ? EventType::kOk : EventType::kFail;
  if (!sent) done.value["error"] = "the instance is not running";
  recorder.Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

}  // namespace idemproof::runtime
