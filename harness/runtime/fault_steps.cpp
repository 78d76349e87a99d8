#include "runtime/fault_steps.h"

namespace idemproof::runtime {

namespace {

// An injector event on the proxy lane; times of the swallowed answers also
// relative to the run's start (at_ns).
void RecordInjectorEvent(StepContext& ctx, nlohmann::json event, std::int64_t steady_ns) {
  if (event.contains("upstream") && event["upstream"].is_array()) {
    for (auto& a : event["upstream"]) {
      if (a.contains("time_ns") && a["time_ns"].is_number_integer())
        a["at_ns"] = a["time_ns"].get<std::int64_t>() - ctx.start_ns();
    }
  }
  ctx.Append(InjectorEvent(std::move(event)), steady_ns);
}

}  // namespace

Status FaultStep(StepContext& ctx, const Step& step, int index) {
  auto it = ctx.scenario().faults.find(step.name);
  if (it == ctx.scenario().faults.end()) return Status(StatusCode::kInvalidConfig, "no fault named " + step.name);
  FaultRunner* faults = ctx.options().faults;
  if (faults == nullptr || !faults->Supports(it->second.kind))
    return Status(StatusCode::kUnsupported, "no injector for fault kind " + it->second.kind);
  const bool start = step.kind == StepKind::kFault;
  HistoryEvent invoke = FaultInvoke(step.name, start, index);
  HistoryEvent done = invoke;
  ctx.Append(std::move(invoke), monotonic_ns());
  if (start) {
    FaultScope scope;
    scope.target_base_url = ctx.BaseUrl();
    scope.max_body = static_cast<std::size_t>(ctx.target().max_body);
    scope.on_event = [&ctx](const nlohmann::json& event, std::int64_t steady_ns) {
      RecordInjectorEvent(ctx, event, steady_ns);
    };
    auto r = faults->Start(it->second, scope);
    ctx.UpdateClientRoute();
    ctx.started_faults().insert(step.name);
    done.type = r.ok() ? EventType::kOk : EventType::kFail;
    if (r.ok()) {
      done.value["injector"] = *r;
    } else {
      done.value["error"] = r.status().message();
    }
  } else {
    auto r = faults->Heal(it->second);
    ctx.UpdateClientRoute();
    ctx.started_faults().erase(step.name);
    done.type = r.ok() ? EventType::kOk : EventType::kFail;
    if (r.ok()) {
      done.value["injected"] = *r;
      ctx.out().fault_counts[step.name] += *r;
    } else {
      done.value["error"] = r.status().message();
    }
  }
  ctx.Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

void HealFaults(StepContext& ctx) {
  for (const auto& name : std::set<std::string>(ctx.started_faults())) {
    Step heal;
    heal.kind = StepKind::kHeal;
    heal.name = name;
    FaultStep(ctx, heal, -1);
  }
  if (ctx.options().faults != nullptr) {
    ctx.options().faults->HealAll();
    ctx.UpdateClientRoute();
  }
}

}  // namespace idemproof::runtime
