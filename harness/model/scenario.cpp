#include "model/scenario.h"

#include <algorithm>

#include "model/capabilities.h"
#include "model/yaml_reader.h"

namespace idemproof {

const char* LayerName(Layer layer) {
  switch (layer) {
    case Layer::kClient: return "client";
    case Layer::kGateway: return "gateway";
    case Layer::kQueue: return "queue";
    case Layer::kSideEffect: return "side-effect";
    case Layer::kConcurrency: return "concurrency";
    case Layer::kBatch: return "batch";
    case Layer::kCluster: return "cluster";
  }
  return "?";
}

Result<Layer> ParseLayer(const std::string& text) {
  for (Layer l : {Layer::kClient, Layer::kGateway, Layer::kQueue, Layer::kSideEffect, Layer::kConcurrency,
                  Layer::kBatch, Layer::kCluster}) {
    if (text == LayerName(l)) return l;
  }
  return Status::InvalidArgument("unknown layer '" + text + "'" +
                                 yaml::DidYouMean(text, {"client", "gateway", "queue", "side-effect",
                                                         "concurrency", "batch", "cluster"}) +
                                 " (client, gateway, queue, side-effect, concurrency, batch, cluster)");
}

bool ControlsProcess(StepKind kind) {
  switch (kind) {
    case StepKind::kStart:
    case StepKind::kStop:
    case StepKind::kKill:
    case StepKind::kRestart:
    case StepKind::kPause:
    case StepKind::kResume:
    case StepKind::kSpawn: return true;
    default: return false;
  }
}

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kSend: return "send";
    case StepKind::kBurst: return "burst";
    case StepKind::kWait: return "wait";
    case StepKind::kHook: return "hook";
    case StepKind::kProbe: return "probe";
    case StepKind::kFault: return "fault";
    case StepKind::kHeal: return "heal";
    case StepKind::kJoin: return "join";
    case StepKind::kStart: return "start";
    case StepKind::kStop: return "stop";
    case StepKind::kKill: return "kill";
    case StepKind::kRestart: return "restart";
    case StepKind::kRunBatch: return "run_batch";
    case StepKind::kRerun: return "rerun";
    case StepKind::kCleanRun: return "clean_run";
    case StepKind::kPause: return "pause";
    case StepKind::kResume: return "resume";
    case StepKind::kSpawn: return "spawn";
    case StepKind::kDeliver: return "deliver";
    case StepKind::kPublish: return "publish";
    case StepKind::kCause: return "cause";
  }
  return "?";
}

std::vector<std::string> Scenario::ActionsUsed() const {
  std::vector<std::string> out;
  for (const auto& s : steps) {
    if ((s.kind == StepKind::kSend || s.kind == StepKind::kBurst) &&
        std::find(out.begin(), out.end(), s.action) == out.end())
      out.push_back(s.action);
  }
  return out;
}

bool Scenario::UsesBatch() const {
  for (const auto& s : steps)
    if (s.kind == StepKind::kRunBatch || s.kind == StepKind::kRerun || s.kind == StepKind::kCleanRun) return true;
  return false;
}

namespace {

bool JsonReferences(const nlohmann::json& value, const std::string& ref) {
  if (value.is_string()) return value.get<std::string>() == ref;
  if (value.is_array() || value.is_object()) {
    for (const auto& item : value)
      if (JsonReferences(item, ref)) return true;
  }
  return false;
}

}  // namespace

bool Scenario::ReferencesParameter(const std::string& name) const {
  const std::string ref = kParameterSigil + name;
  for (const auto& s : steps) {
    if (s.action == ref || (s.kind == StepKind::kProbe && s.name == ref)) return true;
  }
  for (const auto& spec : expect)
    if (JsonReferences(spec.params, ref)) return true;
  return false;
}



std::optional<Duration> PastWindowWait(const IdempotencyContract& contract) {
  if (!contract.window || *contract.window > kLongestPastWindow) return std::nullopt;
  const Duration margin = std::max<Duration>(std::chrono::milliseconds(200), *contract.window / 10);
  return *contract.window + margin;
}

Duration WaitDuration(const Step& step, const IdempotencyContract& contract) {
  if (!step.past_window) return step.duration;
  return PastWindowWait(contract).value_or(Duration::zero());
}

int Scenario::InstancesNeeded() const {
  int needed = min_instances;
  auto named = [&](const std::string& name) {
    if (name == kOtherInstance) needed = std::max(needed, 2);
    if (auto i = TargetInstanceIndex(name)) needed = std::max(needed, *i + 1);
  };
  for (const Step& s : steps) {
    named(s.instance);
    for (const auto& c : s.consumers) named(c);
  }
  return needed;
}

ScenarioFit CheckScenarioAgainstTarget(const Scenario& scenario, const TargetDescription& target) {
  ScenarioFit fit;
  auto add_need = [&](const std::string& need) {
    if (std::find(fit.needs.begin(), fit.needs.end(), need) == fit.needs.end()) fit.needs.push_back(need);
  };
  if (const int needed = scenario.InstancesNeeded(); target.instance_count < needed)
    add_need("a target with at least " + std::to_string(needed) + " instances (target 'instances'; '" + target.name +
             "' has " + std::to_string(target.instance_count) + ")");
  if (scenario.max_instances > 0 && target.instance_count > scenario.max_instances)
    add_need("a target with at most " + std::to_string(scenario.max_instances) + " instance(s) (scenario " +
             "'max_instances'; '" + target.name + "' has " + std::to_string(target.instance_count) + ")");
  for (const auto& [name, fault] : scenario.faults) {
    const std::string prefix = "egress.";
    if (fault.on.rfind(prefix, 0) == 0 && !target.egress.count(fault.on.substr(prefix.size())))
      add_need("egress '" + fault.on.substr(prefix.size()) + "' (target 'egress') for fault " + name);
  }
  std::vector<std::string> actions, probes, hooks;
  for (const auto& [n, a] : target.actions) actions.push_back(n);
  for (const auto& [n, p] : target.probes) probes.push_back(n);
  for (const auto& [n, h] : target.hooks) hooks.push_back(n);

  // A name missing from the target is a typo when a declared name is close,
  // otherwise a capability this target lacks.
  auto check_name = [&](const std::string& name, const SourceMark& mark, const std::string& what,
                        const std::vector<std::string>& known) {
    if (std::find(known.begin(), known.end(), name) != known.end()) return;
    std::string close = yaml::ClosestWord(name, known);
    if (!close.empty()) {
      fit.errors.push_back(Status::InvalidConfig(
          what + " '" + name + "' is not declared by target '" + target.name + "' (did you mean '" + close + "'?)",
          mark));
    } else {
      add_need(what + " '" + name + "'");
    }
  };

  // Unbound (nothing of the target fits its parameters): what it lacks for
  // them, then for the names it uses literally; its "$PARAM" names are no typos.
  const bool unbound = !scenario.parameters.empty() && scenario.binding.empty();
  if (unbound) {
    for (const auto& need : scenario.unmet) add_need(need);
    if (fit.needs.empty()) add_need("to be bound to the target first (its for_each parameters)");
  }
  auto is_reference = [](const std::string& name) { return !name.empty() && name[0] == kParameterSigil; };
  // `what`: "step 'kill'".
  auto needs_start = [&](const std::string& what) {
    return "a start command (target 'start') for " + what +
           (target.instance_urls.empty() ? ""
                                         : ": the harness did not start the listed instances (instances: [URL, ...]), "
                                           "so it cannot control their processes");
  };
  for (const auto& s : scenario.steps) {
    if (unbound && (is_reference(s.action) || (s.kind == StepKind::kProbe && is_reference(s.name)))) continue;
    switch (s.kind) {
      case StepKind::kSend:
      case StepKind::kBurst: {
        const ActionDescription* a = target.FindAction(s.action);
        if (a == nullptr) {
          // As for hooks: a near miss is a typo; an action the target lacks
          // entirely (a shop without payments) is a capability it lacks.
          check_name(s.action, s.mark, "action", actions);
        } else {
          for (PayloadVariant p : s.AllPayloads()) {
            if (p == PayloadVariant::kOther && !a->other_payload)
              add_need("other_payload for action '" + s.action + "'");
            if (NeedsJsonBody(p) && !a->request.json)
              add_need("a JSON body for action '" + s.action + "' (payload " + PayloadName(p) + ")");
            if (p == PayloadVariant::kIgnoredChanged && a->fingerprint_ignores.empty())
              add_need("fingerprint_ignores for action '" + s.action + "' (payload ignored_changed)");
          }
        }
        if (s.kill_after_answer && !target.start) add_need(needs_start("step 'send' with then: kill"));
        if (!s.caller.empty() && target.callers.size() <= CallerIndex(s.caller))
          add_need(std::string(s.caller == "second" ? "two callers" : "a caller") + " (target 'callers') for caller: " +
                   s.caller);
        break;
      }
      case StepKind::kHook: check_name(s.name, s.mark, "hook", hooks); break;
      case StepKind::kWait:
        if (!s.past_window) break;
        if (!target.idempotency.window)
          add_need("a retry window (idempotency.window) for 'wait: past_window'");
        else if (*target.idempotency.window > kLongestPastWindow)
          add_need("a retry window of at most " + FormatDuration(kLongestPastWindow) +
                   " for 'wait: past_window' (idempotency.window is " + FormatDuration(*target.idempotency.window) +
                   ")");
        break;
      case StepKind::kCause: {
        auto provision = ResolveCapability(s.name, s.action, target);
        if (!provision.ok()) add_need(provision.status().message());
        break;
      }
      case StepKind::kProbe: check_name(s.name, s.mark, "probe", probes); break;
      case StepKind::kStart:
      case StepKind::kStop:
      case StepKind::kKill:
      case StepKind::kRestart:
      case StepKind::kPause:
      case StepKind::kResume:
      case StepKind::kSpawn:
        if (!target.start) add_need(needs_start("step '" + std::string(StepKindName(s.kind)) + "'"));
        break;
      case StepKind::kRunBatch:
      case StepKind::kRerun:
      case StepKind::kCleanRun:
        if (!target.batch) {
          add_need("a batch section (target 'batch') for step '" + std::string(StepKindName(s.kind)) + "'");
        } else if (s.fail_after && !target.batch->failing_run) {
          add_need("batch.failing_run for 'fail_after'");
        }
        break;
      case StepKind::kDeliver:
      case StepKind::kPublish: {
        auto m = target.messages.find(s.name);
        const bool deliver = s.kind == StepKind::kDeliver;
        if (m == target.messages.end()) {
          std::vector<std::string> messages;
          for (const auto& [n, msg] : target.messages) messages.push_back(n);
          const std::string close = yaml::ClosestWord(s.name, messages);
          if (!close.empty()) {
            fit.errors.push_back(Status::InvalidConfig("message '" + s.name + "' is not declared by target '" +
                                                           target.name + "' (did you mean '" + close + "'?)",
                                                       s.mark));
          } else {
            add_need("message '" + s.name + "' (target 'messages')");
          }
        } else if (deliver && !m->second.push) {
          add_need("a push request for message '" + s.name + "' (messages." + s.name + ".push)");
        } else if (!deliver && m->second.fields.empty()) {
          add_need("broker fields for message '" + s.name + "' (messages." + s.name + ".fields)");
        }
        if (!deliver && !target.broker) add_need("a broker (target 'broker') for step 'publish'");
        if (deliver) {
          for (const auto& instance : s.consumers)
            if (!TargetInstanceIndex(instance) && !target.start)
              add_need("a start command (target 'start') for consumer instance '" + instance + "'");
        }
        break;
      }
      default: break;
    }
    // A spawned instance is started by the harness; the target's own are declared.
    if ((s.kind == StepKind::kSend || s.kind == StepKind::kBurst) && !s.instance.empty() &&
        s.instance != kOtherInstance && !TargetInstanceIndex(s.instance) && !target.start)
      add_need("a start command (target 'start') for instance '" + s.instance + "'");
  }
  return fit;
}

}  // namespace idemproof
