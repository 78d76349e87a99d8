#include "runtime/hook_calls.h"

namespace idemproof::runtime {

namespace {

// A hook's call, recorded as hook `name`; a failed call or a non-2xx answer
// is an error (what it causes may not have happened).
Status HookCall(StepContext& ctx, const std::string& name, const TargetCall& call, const std::string& biz_name,
                int index, StepContext::CallMode mode, const std::string& cause = "") {
  HistoryEvent invoke = HookInvoke(name, index);
  if (!cause.empty()) invoke.value["cause"] = cause;
  auto outcome = ctx.Call(call, ctx.VarsFor("", biz_name, index), mode);
  if (!outcome.ok()) return outcome.status();
  HistoryEvent done = CompletionOf(invoke, outcome->type);
  ctx.recorder().Append(std::move(invoke), outcome->start_ns);
  if (!outcome->command.is_null()) done.value["command"] = outcome->command;
  std::string failed;
  if (outcome->type == EventType::kOk) {
    if (outcome->command.is_null()) {
      done.value["response"] = outcome->response;
      const int status = outcome->response.value("status", 0);
      if (status < 200 || status > 299) failed = "answered " + std::to_string(status);
    }
  } else {
    done.value["error"] = outcome->error;
    failed = outcome->error;
  }
  if (!failed.empty()) done.value["failed"] = true;
  ctx.recorder().Append(std::move(done), outcome->end_ns);
  if (!failed.empty())
    return Status(StatusCode::kProcessError, "hook " + name + " failed (" + failed +
                                                "): what it causes may not have happened");
  return Status::Ok();
}

}  // namespace

Status FireHook(StepContext& ctx, const std::string& name, const std::string& biz_name, int index,
                StepContext::CallMode mode, const std::string& cause) {
  auto it = ctx.target().hooks.find(name);
  if (it == ctx.target().hooks.end()) return Status(StatusCode::kUnsupported, "the target declares no hook " + name);
  return HookCall(ctx, name, it->second.call, biz_name, index, mode, cause);
}

// No step names the final heal: it binds the default biz.
// The hook with role heal (by default the one named heal).
Status HealHook(StepContext& ctx) {
  const HookDescription* heal = ctx.target().HookFor("heal");
  if (heal == nullptr) return Status::Ok();
  return FireHook(ctx, heal->name, kDefaultBiz, -1, StepContext::CallMode::kUncancelled);
}

Status ResetCall(StepContext& ctx) {
  if (!ctx.target().reset) return Status::Ok();
  return HookCall(ctx, "reset", *ctx.target().reset, kDefaultBiz, -1, StepContext::CallMode::kCancellable);
}

void RecordsProbes(StepContext& ctx) {
  for (const auto& [action_name, biz_name] : ctx.Sent()) {
    const ActionDescription* action = ctx.target().FindAction(action_name);
    if (action == nullptr || !action->records) continue;
    HistoryEvent invoke = RecordsProbeInvoke(action_name, ctx.recorder().naming().Biz(biz_name), biz_name);
    auto outcome = ctx.Call(action->records->call, ctx.VarsFor("", biz_name, -1));
    if (!outcome.ok()) {
      HistoryEvent done = CompletionOf(invoke, EventType::kFail);
      done.value["error"] = outcome.status().message();
      ctx.recorder().Append(std::move(invoke), monotonic_ns());
      ctx.recorder().Append(std::move(done), monotonic_ns());
      continue;
    }
    HistoryEvent done = CompletionOf(invoke, outcome->type);
    ctx.recorder().Append(std::move(invoke), outcome->start_ns);
    if (outcome->type == EventType::kOk) {
      auto count = action->records->CountIn(outcome->value);
      if (count.ok()) {
        done.value["value"] = outcome->value;
        done.value["count"] = *count;
      } else {
        done.type = EventType::kFail;
        done.value["error"] = count.status().message();
        done.value["response"] = outcome->response;
      }
    } else {
      done.value["error"] = outcome->error;
    }
    ctx.recorder().Append(std::move(done), outcome->end_ns);
  }
}

}  // namespace idemproof::runtime
