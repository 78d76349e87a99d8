#include "runtime/probe_steps.h"

#include "runtime/cause_steps.h"

#include "model/capabilities.h"

namespace idemproof::runtime {

namespace {

// Fires hook `name`; `cause` (a capability, "" = a literal hook step) is
// recorded with it. A hook that failed (a command ending non-zero, a request
// not answered or answered non-2xx) is recorded, then reported as an error:
// the premise it was to cause may not have happened.
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

Status Hook(StepContext& ctx, const std::string& name, const std::string& biz_name, int index,
            StepContext::CallMode mode, const std::string& cause = "") {
  auto it = ctx.target().hooks.find(name);
  if (it == ctx.target().hooks.end()) return Status(StatusCode::kUnsupported, "the target declares no hook " + name);
  return HookCall(ctx, name, it->second.call, biz_name, index, mode, cause);
}

// An egress probe: the matching entries of the egress record so far, each
// narrowed by `value`; an entry without `value` fails the probe (a silent
// undercount would read as "fewer charges").
Status EgressProbe(StepContext& ctx, const ProbeDescription& probe, HistoryEvent invoke,
                   const std::string& biz_name, int index) {
  const std::int64_t start = monotonic_ns();
  HistoryEvent done = CompletionOf(invoke, EventType::kOk);
  if (!ctx.egress() || !ctx.egress()->Proxy(probe.egress)) {
    done.type = EventType::kFail;
    done.value["error"] = "egress " + probe.egress + " is not running";
  } else {
    const TemplateVars vars = ctx.VarsFor("", biz_name, index);
    nlohmann::json value = nlohmann::json::array();
    for (const auto& entry : ctx.egress()->Records(probe.egress)) {
      auto keep = EgressMatches(probe.match, entry, vars);
      if (!keep.ok()) return keep.status();
      if (!*keep) continue;
      if (!probe.value) {
        value.push_back(entry);
        continue;
      }
      auto v = probe.value->Find(entry);
      if (!v.ok()) {
        done.type = EventType::kFail;
        done.value["error"] = "no " + probe.value->text() + " in egress entry " + entry.dump();
        break;
      }
      value.push_back(*v);
    }
    if (done.type == EventType::kOk) done.value["value"] = value;
    done.value["egress"] = probe.egress;
  }
  ctx.recorder().Append(std::move(invoke), start);
  ctx.recorder().Append(std::move(done), monotonic_ns());
  return Status::Ok();
}

// A from_answer probe: the member its action's first 2xx answer for the
// biz had (captured), parsed as JSON when it parses, as a command's stdout
// is. No such answer yet: not run, a note says so (as a missing capture).
Status FromAnswerProbe(StepContext& ctx, const ProbeDescription& probe, HistoryEvent invoke,
                       const std::string& biz_name, int index) {
  const TemplateVars vars = ctx.VarsFor("", biz_name, index);
  auto it = vars.find(FromAnswerVariable(probe.name));
  if (it == vars.end()) {
    ctx.recorder().Note(index, "probe " + probe.name + " not run: no 2xx answer of " + probe.of + " for this biz gave " +
                                   probe.from_answer->text());
    return Status::Ok();
  }
  const std::int64_t now = monotonic_ns();
  HistoryEvent done = CompletionOf(invoke, EventType::kOk);
  nlohmann::json value = nlohmann::json::parse(it->second, nullptr, false);
  done.value["value"] = value.is_discarded() ? nlohmann::json(it->second) : value;
  done.value["from_answer"] = probe.of + " " + probe.from_answer->text();
  ctx.recorder().Append(std::move(invoke), now);
  ctx.recorder().Append(std::move(done), now);
  return Status::Ok();
}

}  // namespace

Status ProbeStep(StepContext& ctx, const Step& probe_step, int index) {
  const ProbeOptions& step = probe_step.Options<ProbeOptions>();
  const std::string& label = probe_step.label;
  auto it = ctx.target().probes.find(step.name);
  if (it == ctx.target().probes.end())
    return Status(StatusCode::kUnsupported, "the target declares no probe " + step.name);
  const ProbeDescription& probe = it->second;
  HistoryEvent invoke = ProbeInvoke(probe.name, label.empty() ? step.name : label, index);
  if (!probe.egress.empty()) return EgressProbe(ctx, probe, std::move(invoke), step.biz, index);
  if (probe.from_answer) return FromAnswerProbe(ctx, probe, std::move(invoke), step.biz, index);
  const HeaderList headers = ctx.target().HeadersAs(probe.caller);
  auto outcome = ctx.Call(probe.call, ctx.VarsFor("", step.biz, index), StepContext::CallMode::kCancellable, &headers);
  if (!probe.caller.empty()) invoke.value["caller"] = probe.caller;
  if (!outcome.ok()) {
    if (ctx.IsMissingCapture(outcome.status())) {
      ctx.recorder().Note(index, "probe " + probe.name + " not run: " + outcome.status().message());
      return Status::Ok();
    }
    return outcome.status();
  }
  HistoryEvent done = CompletionOf(invoke, outcome->type);
  ctx.recorder().Append(std::move(invoke), outcome->start_ns);
  if (outcome->type == EventType::kOk) {
    nlohmann::json value = outcome->value;
    if (probe.value) {
      auto v = probe.value->Find(outcome->value);
      if (v.ok()) {
        value = *v;
      } else {
        done.type = EventType::kFail;
        done.value["error"] = "no " + probe.value->text() + " in the answer";
      }
    }
    if (done.type == EventType::kOk) done.value["value"] = value;
    if (!outcome->response.is_null()) done.value["response"] = outcome->response;
  } else {
    done.value["error"] = outcome->error;
  }
  if (!outcome->command.is_null()) done.value["command"] = outcome->command;
  ctx.recorder().Append(std::move(done), outcome->end_ns);
  return Status::Ok();
}

Status HookStep(StepContext& ctx, const Step& step, int index) {
  const HookOptions& hook = step.Options<HookOptions>();
  return Hook(ctx, hook.name, hook.biz, index, StepContext::CallMode::kCancellable);
}

Status CauseStep(StepContext& ctx, const Step& cause_step, int index) {
  const CauseOptions& step = cause_step.Options<CauseOptions>();
  CapabilityProvision p;
  if (step.resolved) {
    p.variant = step.variant;
    p.hook = step.hook;
    p.ledger = step.ledger;
    p.action = step.action;
  } else {
    auto resolved = ResolveCapability(step.capability, step.action, ctx.target());
    if (!resolved.ok()) return resolved.status();
    p = *resolved;
  }
  if (step.capability == "heal") {
    const int dropped = ctx.ClearPendingVariants();
    if (dropped > 0) ctx.recorder().Note(index, "cause heal: " + std::to_string(dropped) + " pending variant(s) dropped");
  }
  if (!p.variant.empty()) {
    ctx.SetPendingVariant(p.action, p.variant, step.first_only);
    ctx.recorder().Append(NoteWith(index, {{"note", "cause " + step.capability + ": variant " + p.variant + " of " + p.action +
                                             (step.first_only ? " on its next request only"
                                                                    : " on its next request and every later "
                                                                      "request of that key")},
                                {"cause", step.capability},
                                {"action", p.action},
                                {"variant", p.variant},
                                {"scope", step.first_only ? "first_only" : "attempt"}}),
               monotonic_ns());
  }
  if (!p.hook.empty()) return Hook(ctx, p.hook, step.biz, index, StepContext::CallMode::kCancellable, step.capability);
  if (!p.ledger.empty()) return KillAfterChargeThroughEgress(ctx, ctx.target().probes.at(p.ledger), index);
  return Status::Ok();
}

// No step names the final heal: it binds the default biz.
// The hook with role heal (by default the one named heal).
Status HealHook(StepContext& ctx) {
  const HookDescription* heal = ctx.target().HookFor("heal");
  if (heal == nullptr) return Status::Ok();
  return Hook(ctx, heal->name, kDefaultBiz, -1, StepContext::CallMode::kUncancelled);
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
