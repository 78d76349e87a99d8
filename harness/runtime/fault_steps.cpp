#include "runtime/fault_steps.h"

namespace idemproof::runtime {

const FaultDeclaration* FindFault(StepContext& ctx, const std::string& name) {
  auto it = ctx.scenario().faults.find(name);
  if (it != ctx.scenario().faults.end()) return &it->second;
  auto caused = ctx.caused_faults().find(name);
  return caused == ctx.caused_faults().end() ? nullptr : &caused->second;
}

Status StartOrHealFault(StepContext& ctx, const FaultDeclaration& fault, bool start, int index,
                        const nlohmann::json& extra) {
  FaultRunner* faults = ctx.options().faults;
  if (faults == nullptr || !faults->Supports(fault.kind))
    return Status(StatusCode::kUnsupported, "no injector for fault kind " + fault.kind);
  HistoryEvent invoke = FaultInvoke(fault.name, start, index);
  if (extra.is_object()) invoke.value.update(extra);
  HistoryEvent done = invoke;
  ctx.recorder().Append(std::move(invoke), monotonic_ns());
  if (start) {
    FaultScope scope;
    scope.target_base_url = ctx.routing().BaseUrl();
    scope.max_body = static_cast<std::size_t>(ctx.target().max_body);
    scope.target_tls = ctx.target().tls;
    scope.target_http2 = ctx.target().http.version == 2;
    scope.on_event = [&ctx](const nlohmann::json& event, std::int64_t steady_ns) {
      RecordInjectorEvent(ctx.recorder(), event, steady_ns);
    };
    if (const std::string name = EgressOfHop(fault.on); !name.empty() && ctx.env().egress()) {
      scope.egress_proxy = ctx.env().egress()->Proxy(name);
      scope.egress_tcp_proxy = ctx.env().egress()->TcpProxy(name);
      scope.egress_log = ctx.env().egress()->Log(name);
    }
    if (auto pid = ctx.env().instances().Pid("main"); pid && *pid > 0) scope.target_pid = std::to_string(*pid);
    auto r = faults->Start(fault, scope);
    ctx.routing().UpdateClientRoute();
    ctx.started_faults().insert(fault.name);
    done.type = r.ok() ? EventType::kOk : EventType::kFail;
    if (r.ok()) {
      done.value["injector"] = *r;
    } else {
      done.value["error"] = r.status().message();
    }
  } else {
    auto r = faults->Heal(fault);
    ctx.routing().UpdateClientRoute();
    ctx.started_faults().erase(fault.name);
    done.type = r.ok() ? EventType::kOk : EventType::kFail;
    if (r.ok()) {
      done.value["injected"] = *r;
      ctx.recorder().out().fault_counts[fault.name] += *r;
    } else {
      done.value["error"] = r.status().message();
    }
  }
  ctx.recorder().Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

void HealFaults(StepContext& ctx) {
  for (const auto& name : std::set<std::string>(ctx.started_faults())) {
    if (const FaultDeclaration* fault = FindFault(ctx, name)) {
      const bool caused = ctx.caused_faults().count(name) > 0;
      StartOrHealFault(ctx, *fault, false, -1, caused ? nlohmann::json{{"cause", name}} : nlohmann::json());
    }
  }
  if (ctx.options().faults != nullptr) {
    ctx.options().faults->HealAll();
    ctx.routing().UpdateClientRoute();
  }
}

}  // namespace idemproof::runtime
