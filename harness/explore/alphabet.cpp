#include "explore/alphabet.h"

#include <algorithm>

#include "explore/ops/builtin_ops.h"
#include "model/template.h"

namespace idemproof::explore {

namespace {

void CollectVariables(const std::string& text, std::set<std::string>& out) {
  auto vars = TemplateVariables(text);
  if (vars.ok()) out.insert(vars->begin(), vars->end());
}

void CollectVariables(const nlohmann::json& doc, std::set<std::string>& out) {
  if (doc.is_string()) {
    CollectVariables(doc.get<std::string>(), out);
  } else if (doc.is_structured()) {
    for (const auto& item : doc) CollectVariables(item, out);
  }
}

std::set<std::string> RequestVariables(const RequestTemplate& r) {
  std::set<std::string> out;
  CollectVariables(r.path, out);
  for (const auto& [name, value] : r.headers) CollectVariables(value, out);
  if (r.body) CollectVariables(*r.body, out);
  if (r.json) CollectVariables(*r.json, out);
  return out;
}

// Which variables each action captures (rules.provides) and which of those
// each action's request uses (rules.needs_captured).
void ResolveCaptures(const TargetDescription& target, PlanRules& rules) {
  std::set<std::string> capturable;
  for (const auto& [name, action] : target.actions) {
    for (const auto& [var, path] : action.capture) {
      capturable.insert(var);
      rules.provides[name].insert(var);
    }
  }
  for (const auto& [name, action] : target.actions) {
    for (const auto& var : RequestVariables(action.request)) {
      if (capturable.count(var)) rules.needs_captured[name].insert(var);
    }
  }
}

// Whether the interpreter (and the target) can run `op`; the reason when not.
std::string Unrunnable(const Op& op, const OpContext& ctx, const runtime::Interpreter& interpreter) {
  Scenario probe = ctx.spec.scenario;
  probe.steps = op.Steps();
  std::vector<std::string> needs = interpreter.NeedsOf(probe);
  ScenarioFit fit = CheckScenarioAgainstTarget(probe, ctx.target);
  needs.insert(needs.end(), fit.needs.begin(), fit.needs.end());
  for (const auto& e : fit.errors) needs.push_back(e.message());
  std::string out;
  for (const auto& n : needs) out += (out.empty() ? "" : "; ") + n;
  return out;
}

}  // namespace

Result<OpContext> Alphabet::Resolve(const ExploreSpec& spec, const TargetDescription& target, PlanRules& rules) {
  const ExploreBlock& b = spec.explore;
  OpContext ctx(spec, target);
  ResolveCaptures(target, rules);
  ctx.actions = b.actions;
  if (ctx.actions.empty()) {
    for (const auto& [name, action] : target.actions) {
      if (rules.needs_captured[name].empty()) ctx.actions.push_back(name);
    }
  }
  for (const auto& name : ctx.actions) {
    if (!target.actions.count(name))
      return ctx.ConfigError("action " + name, "the target declares no action '" + name + "'");
  }
  if (b.hooks) {
    ctx.hooks = *b.hooks;
    for (const auto& h : ctx.hooks) {
      if (!target.hooks.count(h)) return ctx.ConfigError("hook " + h, "the target declares no hook '" + h + "'");
    }
  } else {
    for (const auto& [name, hook] : target.hooks) {
      if (hook.role != "heal") ctx.hooks.push_back(name);
    }
  }
  if (b.bound_pairing) {
    for (std::size_t i = 0; i < b.keys.size(); ++i) ctx.pairs.emplace_back(b.keys[i], b.biz[i]);
  } else {
    for (const auto& k : b.keys) {
      for (const auto& z : b.biz) ctx.pairs.emplace_back(k, z);
    }
  }
  // The callers sends go as: each listed one the target declares, else none.
  if (!b.callers.empty()) ctx.callers = b.callers;
  for (const auto& caller : b.callers) {
    if (target.callers.size() <= CallerIndex(caller))
      return ctx.ConfigError("callers", "explore.callers names '" + caller + "', but the target declares " +
                                            std::to_string(target.callers.size()) + " caller(s) (target 'callers')");
  }
  // Instances the fixed steps before the generated ops spawned: sends go to them too.
  for (std::size_t i = 0; i < spec.insert_at(); ++i) {
    if (const auto* spawn = spec.scenario.steps[i].Find<SpawnOptions>()) ctx.instances.push_back(spawn->name);
  }
  return ctx;
}

Status Alphabet::AddKind(const OpSpec& kind, const OpContext& ctx, const runtime::Interpreter& interpreter) {
  Result<OpCandidates> candidates = kind.Candidates(ctx);
  if (!candidates.ok()) return candidates.status();
  auto weight = ctx.block.weights.find(kind.name());
  const int w = weight != ctx.block.weights.end() ? weight->second : kind.default_weight();
  if (w == 0) {
    excluded_.push_back({kind.name(), "weight 0 in explore.ops"});
    return Status::Ok();
  }
  if (candidates->ops.empty()) {
    excluded_.push_back({kind.name(), candidates->absent});
    return Status::Ok();
  }
  std::vector<Op> runnable;
  std::string reason;
  for (auto& op : candidates->ops) {
    std::string why = Unrunnable(op, ctx, interpreter);
    if (why.empty()) {
      runnable.push_back(std::move(op));
    } else if (reason.empty()) {
      reason = why;
    }
  }
  if (runnable.empty()) {
    excluded_.push_back({kind.name(), reason});
  } else {
    groups_.emplace_back(w, std::move(runnable));
  }
  return Status::Ok();
}

bool Alphabet::Has(const std::string& kind) const {
  return std::any_of(groups_.begin(), groups_.end(), [&](const auto& g) { return kind == g.second.front().kind->name(); });
}

void Alphabet::DropUnsupported() {
  for (const OpSpec* kind : Ops().Kinds()) {
    const auto required = kind->Requires();
    if (!required || !Has(kind->name()) || Has(required->first)) continue;
    std::erase_if(groups_, [kind](const auto& g) { return g.second.front().kind == kind; });
    excluded_.push_back({kind->name(), required->first + " is not in the alphabet (" + required->second + ")"});
  }
}

Status Alphabet::CheckReachesLogic(const OpContext& ctx) const {
  // A plan must be able to reach the target's business logic somehow.
  if (std::any_of(groups_.begin(), groups_.end(), [](const auto& g) { return g.second.front().kind->reaches_logic(); }))
    return Status::Ok();
  std::vector<std::string> names;
  std::string why;
  for (const OpSpec* kind : Ops().Kinds()) {
    if (kind->reaches_logic()) names.emplace_back(kind->name());
  }
  for (const auto& e : excluded_) {
    if (std::find(names.begin(), names.end(), e.op) != names.end()) why += (why.empty() ? "" : "; ") + e.op + ": " + e.reason;
  }
  std::string listed;  // "send, deliver or run_batch"
  for (std::size_t i = 0; i < names.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return ctx.ConfigError("", "no " + listed + " op can run (" + why + ")");
}

Result<Alphabet> Alphabet::Build(const ExploreSpec& spec, const TargetDescription& target,
                                 const runtime::Interpreter& interpreter) {
  Alphabet a;
  Result<OpContext> ctx = Resolve(spec, target, a.rules_);
  if (!ctx.ok()) return ctx.status();
  for (const OpSpec* kind : Ops().Kinds()) {
    Status added = a.AddKind(*kind, *ctx, interpreter);
    if (!added.ok()) return added;
  }
  a.DropUnsupported();
  Status reaches = a.CheckReachesLogic(*ctx);
  if (!reaches.ok()) return reaches;
  a.initial_.managed = target.start.has_value();
  a.rules_.lease_declared = target.idempotency.lease.has_value();
  if (target.idempotency.window) {
    a.initial_.budget_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(*target.idempotency.window).count() - 1000;
  }
  for (std::size_t i = 0; i < spec.insert_at(); ++i) a.rules_.ApplyStep(spec.scenario.steps[i], a.initial_);
  return a;
}

bool Alphabet::Allowed(const Op& op, const PlanModel& m) const {
  // Time-consuming ops stay inside the budget.
  if (op.kind->Timed(op, m) && m.budget_ms >= 0 && m.elapsed_ms + op.kind->EstimateMs(op) > m.budget_ms) return false;
  // A paused target answers nothing: only resume, waits and kill make sense.
  // A spawned instance answers whatever main's state.
  if (m.paused && op.instance == "main" && !op.kind->runs_while_paused()) return false;
  return op.kind->Allowed(op, m, rules_);
}

void Alphabet::Apply(const Op& op, PlanModel& m) const {
  const PlanModel before = m;
  for (const Step& s : op.Steps()) rules_.ApplyStep(s, m);
  op.kind->AfterSteps(op, before, m, rules_);
}

std::vector<std::pair<int, std::vector<Op>>> Alphabet::Choices(const PlanModel& m) const {
  std::vector<std::pair<int, std::vector<Op>>> out;
  for (const auto& [w, ops] : groups_) {
    std::vector<Op> allowed;
    for (const auto& op : ops) {
      if (Allowed(op, m)) allowed.push_back(op);
    }
    if (!allowed.empty()) out.emplace_back(w, std::move(allowed));
  }
  return out;
}

}  // namespace idemproof::explore
