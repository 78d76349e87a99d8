#include "runtime/process_steps.h"

#include <csignal>

#include "runtime/fault_steps.h"

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
Status ControlOther(StepContext& ctx, ProcessOp kind, int index, const std::string& instance) {
  HistoryEvent invoke = ProcessInvoke(ControlEvent(kind), index, {{"instance", instance}});
  const std::int64_t start = monotonic_ns();
  TargetInstances::ControlOutcome outcome = ctx.instances().Control(instance, kind);
  HistoryEvent done = CompletionOf(invoke, outcome.status.ok() ? EventType::kOk : EventType::kFail);
  ctx.recorder().Append(std::move(invoke), start);
  done.value["pid"] = outcome.pid;
  if (outcome.exit) done.value["exit"] = outcome.exit->ToString();
  if (!outcome.port.empty()) done.value["port"] = outcome.port;
  if (!outcome.status.ok()) done.value["error"] = outcome.status.message();
  ctx.recorder().Append(std::move(done), monotonic_ns());
  const bool down = kind == ProcessOp::kStop || kind == ProcessOp::kKill;
  if (outcome.status.ok() && outcome.pid > 0 && !down) ctx.recorder().out().target_pids.push_back(outcome.pid);
  return outcome.status;
}

}  // namespace

Status StartDeclaredInstances(StepContext& ctx) {
  for (const auto& name : ctx.instances().declared()) {
    if (name == "main") continue;
    Status s = ControlOther(ctx, ProcessOp::kStart, -1, name);
    if (!s.ok()) return Status(StatusCode::kUnavailable, "target instance " + name + ": " + s.message());
  }
  return Status::Ok();
}

Status ControlTarget(StepContext& ctx, ProcessOp kind, int index, const std::string& instance) {
  if (instance != "main") return ControlOther(ctx, kind, index, instance);
  TargetProcess& proc = ctx.instances().main();
  const char* f = ControlEvent(kind);
  const pid_t invoke_pid = proc.pid();
  HistoryEvent invoke = ProcessInvoke(f, index, {{"pid", invoke_pid}});
  const std::int64_t start = monotonic_ns();
  Status status;
  nlohmann::json result = nlohmann::json::object();
  if (kind == ProcessOp::kStart) {
    status = proc.Start();
  } else if (kind == ProcessOp::kRestart) {
    status = proc.Restart();
  } else {
    auto exit = kind == ProcessOp::kKill ? proc.Kill() : proc.Stop();
    if (exit.ok()) {
      result["exit"] = exit->ToString();
    } else {
      status = exit.status();
    }
  }
  // Background sends read the target's variables (the port) concurrently.
  ctx.instances().RefreshMain();
  if (!proc.Managed() && kind == ProcessOp::kStart) {
    // Nothing was started: no event, only the reachability check.
    return status;
  }
  HistoryEvent done = CompletionOf(invoke, status.ok() ? EventType::kOk : EventType::kFail);
  ctx.recorder().Append(std::move(invoke), start);
  done.value = result;
  const bool down = kind == ProcessOp::kStop || kind == ProcessOp::kKill;
  // The pid acted on: the old one for stop/kill, the new one for (re)start.
  done.value["pid"] = down ? invoke_pid : proc.pid();
  if (proc.vars().count("port")) done.value["port"] = proc.vars().at("port");
  if (!status.ok()) done.value["error"] = status.message();
  ctx.recorder().Append(std::move(done), monotonic_ns());
  if (status.ok() && proc.pid() > 0 && !down) ctx.recorder().out().target_pids.push_back(proc.pid());
  return status;
}

Status PauseOrResume(StepContext& ctx, bool pause, const std::string& name, int index) {
  std::optional<pid_t> pid = ctx.instances().Pid(name);
  if (!pid)
    return Status(StatusCode::kUnsupported,
                  "no target instance '" + name + "' to " + (pause ? "pause" : "resume"));
  HistoryEvent invoke =
      ProcessInvoke(pause ? event_f::kPause : event_f::kResume, index, {{"instance", name}, {"pid", *pid}});
  HistoryEvent done = invoke;
  ctx.recorder().Append(std::move(invoke), monotonic_ns());
  const bool sent = ctx.instances().Signal(name, pause ? SIGSTOP : SIGCONT);
  if (pause && sent) ctx.paused().insert(name);
  if (!pause) ctx.paused().erase(name);
  done.type = sent ? EventType::kOk : EventType::kFail;
  if (!sent) done.value["error"] = "the instance is not running";
  ctx.recorder().Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

Status StartServices(StepContext& ctx) {
  auto& services = ctx.services();
  services = std::make_unique<ServiceProcesses>(ctx.target().services, ctx.base_vars(), ctx.environment_dir(),
                                                ctx.options().cancel);
  if (ctx.target().services.empty()) return Status::Ok();
  HistoryEvent invoke = ProcessInvoke(event_f::kServices, -1, nlohmann::json::object());
  HistoryEvent done = invoke;
  ctx.recorder().Append(std::move(invoke), monotonic_ns());
  Status s = services->Start();
  done.type = s.ok() ? EventType::kOk : EventType::kFail;
  done.value = {{"services", services->Vars()}};
  if (!s.ok()) done.value["error"] = s.message();
  ctx.recorder().Append(std::move(done), monotonic_ns());
  for (const auto& [k, v] : services->Vars()) ctx.base_vars()[k] = v;
  // A service whose handshake failed is a configuration error (exit 2), as the target's.
  if (!s.ok()) return Status(IsTlsRefusal(s) ? s.code() : StatusCode::kUnavailable, s.message());
  return StartEgress(ctx);
}

Status StartEgress(StepContext& ctx) {
  auto& egress = ctx.egress();
  // Through the route: the proxies may outlive this run (namespace isolation).
  ctx.route()->Bind(&ctx.recorder());
  egress = std::make_unique<EgressProxies>(
      ctx.target().egress,
      [route = ctx.route()](const nlohmann::json& entry, std::int64_t steady_ns) {
        route->Record(EgressEvent(entry), steady_ns);
      },
      [route = ctx.route()](const nlohmann::json& event, std::int64_t steady_ns) { route->Injector(event, steady_ns); });
  if (ctx.target().egress.empty()) return Status::Ok();
  HistoryEvent invoke = ProcessInvoke(event_f::kEgress, -1, nlohmann::json::object());
  HistoryEvent done = invoke;
  ctx.recorder().Append(std::move(invoke), monotonic_ns());
  Status s = egress->Start(ctx.base_vars());
  done.type = s.ok() ? EventType::kOk : EventType::kFail;
  done.value = {{"egress", egress->Vars()}};
  if (!s.ok()) done.value["error"] = s.message();
  ctx.recorder().Append(std::move(done), monotonic_ns());
  for (const auto& [k, v] : egress->Vars()) ctx.base_vars()[k] = v;
  if (!s.ok()) return Status(s.code() == StatusCode::kInvalidConfig ? s.code() : StatusCode::kUnavailable, s.message());
  return s;
}

}  // namespace idemproof::runtime
