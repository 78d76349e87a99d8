// `cause: CAPABILITY` (model/capabilities.h) causes a capability the target
// provides: by a variant of the next request of `action` (default: the next
// send's or burst's), by a hook, or through an egress ledger (a
// kill-after-answer); a message capability (die_before_ack) by a variant
// of the next publish's message or a hook. A variant belongs to the attempt: every later request
// of that key repeats it, as a client's retry repeats its request byte for
// byte, unless `variant: first_only` says the later ones differ on purpose. The bind stage resolves how (Resolve); a capability
// that changes a request needs a later send or burst of its action.
#include "model/capabilities.h"
#include "runtime/fault_steps.h"
#include "runtime/hook_calls.h"
#include "runtime/run_types.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

// The runtime this file drives (the step context, hooks, faults).
using namespace runtime;

// The egress route of kill_after_charge, when the target declares no
// kill_after_charge hook but a ledger probe with `egress:` of the action:
// arms a kill-after-answer on `ledger`'s egress downstream for the next
// request its `match` picks (method and path: a charge), killing the
// target's main instance once the downstream answered; recorded as the fault
// "kill_after_charge" with {"cause": "kill_after_charge"}, healed at the end
// of the run, judged by faults_fired (a kill that never fired is unknown).
// REQUIRES: !ledger.egress.empty().
Status KillAfterChargeThroughEgress(StepContext& ctx, const ProbeDescription& ledger, int index) {
  const std::string name = "kill_after_charge";
  FaultDeclaration fault;
  fault.name = name;
  fault.kind = "kill-after-answer";
  fault.on = EgressHop(ledger.egress);
  fault.mark = ledger.mark;
  fault.params = {{"match", ledger.match.AsFaultMatch()}, {"first", 1}};
  ctx.caused_faults()[name] = fault;
  return StartOrHealFault(ctx, fault, true, index, {{"cause", name}, {"ledger", ledger.name}});
}

// One cause step: a variant left pending for the action's next request (a
// note {"cause", "action", "variant"} records it), a hook fired (its events
// carry "cause"), or a kill armed on an egress; heal also drops every
// pending variant.
Status CauseNow(StepContext& ctx, const Step& cause_step, int index) {
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
  if (!p.hook.empty()) return FireHook(ctx, p.hook, step.biz, index, StepContext::CallMode::kCancellable, step.capability);
  if (!p.ledger.empty()) return KillAfterChargeThroughEgress(ctx, ctx.target().probes.at(p.ledger), index);
  return Status::Ok();
}


class CauseStepKind final : public StepKind {
 public:
  const char* name() const override { return "cause"; }
  std::vector<std::string> options() const override { return {"action", "biz", "variant", "after", "label"}; }
  StepOptions NewOptions() const override { return CauseOptions{}; }

  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    CauseOptions& st = step.Options<CauseOptions>();
    st.capability = parser.Symbol(parser.RequiredValue(value, key, what, "a capability"), what);
    if (FindCapability(st.capability) == nullptr) {
      const auto names = CapabilityNames();
      std::string known;
      for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
      parser.Fail(value, what + ": unknown capability '" + st.capability + "'" + yaml::DidYouMean(st.capability, names) +
                             "; known: " + known);
    }
    if (node["action"]) st.action = parser.NameOrReference(node["action"], what + ".action", false);
    if (node["variant"]) {
      const std::string v = parser.reader().String(node["variant"], what + ".variant");
      if (v != "attempt" && v != "first_only")
        parser.Fail(node["variant"], what + ".variant must be 'attempt' or 'first_only', found '" + v + "'");
      st.first_only = v == "first_only";
    }
    if (node["biz"]) st.biz = parser.Symbol(node["biz"], what + ".biz");
  }

  // A cause acts on the next send or burst: its action (a variant is that
  // action's); a capability that changes a request needs one to follow.
  // A message capability acts on the next publish: its message.
  void AfterLoad(StepParser& parser, Scenario& s, std::size_t i, const YAML::Node& steps) const override {
    CauseOptions& st = s.steps[i].Options<CauseOptions>();
    const bool message = FindCapability(st.capability)->message;
    bool follows = false;
    for (std::size_t j = i + 1; j < s.steps.size() && !follows; ++j) {
      const Step& next = s.steps[j];
      const QueueOptions* queue = next.Find<QueueOptions>();
      const SendOptions* send = next.Find<SendOptions>();
      if (message ? std::string(next.kind->name()) != "publish" || queue == nullptr
                  : !next.kind->sends_request() || send == nullptr)
        continue;
      const std::string& on = message ? queue->name : send->action;
      if (st.action.empty()) st.action = on;
      follows = on == st.action;
    }
    if (!follows && !FindCapability(st.capability)->always)
      parser.Fail(steps[i], std::string("step 'cause': no ") + (message ? "publish step" : "send or burst step") +
                                (st.action.empty() ? std::string() : " of " + st.action) + " follows for " + st.capability +
                                " to act on");
  }

  void Check(const Step& step, StepFitCheck& fit) const override {
    const CauseOptions& s = step.Options<CauseOptions>();
    auto provision = ResolveCapability(s.capability, s.action, fit.target());
    if (!provision.ok()) fit.AddNeed(provision.status().message());
  }

  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<CauseOptions>().action};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    CauseOptions& o = step.Options<CauseOptions>();
    o.action = BoundName(o.action, binding);
  }

  void Resolve(Step& step, const TargetDescription& target) const override {
    CauseOptions& o = step.Options<CauseOptions>();
    auto p = ResolveCapability(o.capability, o.action, target);
    if (!p.ok()) return;
    o.resolved = true;
    o.variant = p->variant;
    o.hook = p->hook;
    o.ledger = p->ledger;
  }

  std::string UnprovidedByAny(const Step& step, const TargetDescription& target) const override {
    const CauseOptions& o = step.Options<CauseOptions>();
    auto unprovided = ResolveCapability(o.capability, o.action, target);
    bool any = unprovided.ok();
    for (const auto& [name, action] : target.actions) any = any || ResolveCapability(o.capability, name, target).ok();
    for (const auto& [name, message] : target.messages) any = any || ResolveCapability(o.capability, name, target).ok();
    return any ? std::string() : unprovided.status().message();
  }

  bool NeedsLaterRequest(const Step& step) const override { return step.Options<CauseOptions>().capability != "heal"; }

  Status Write(const Step& step, YAML::Emitter& out) const override {
    const CauseOptions& s = step.Options<CauseOptions>();
    out << YAML::Key << name() << YAML::Value << s.capability;
    if (!s.action.empty()) out << YAML::Key << "action" << YAML::Value << s.action;
    if (s.first_only) out << YAML::Key << "variant" << YAML::Value << "first_only";
    return Status::Ok();
  }

  void Plan(const Step& s, PlanModel& m, const ProvidedVariables&) const override {
    const CauseOptions& step = s.Options<CauseOptions>();
    if (step.capability == "heal") {
      m.variant_pending.clear();
      m.hook_pending = false;
    } else if (!step.variant.empty()) {
      m.variant_pending.insert(step.action);
    } else if (!step.hook.empty()) {
      m.hook_pending = true;
    }
    AddPlanTime(m, 10);
  }

  void RuntimeNeeds(const Step& step, const Scenario&, const TargetDescription& target,
                    const runtime::InterpreterOptions& options, std::vector<std::string>& needs) const override {
    const CauseOptions& o = step.Options<CauseOptions>();
    auto route = ResolveCapability(o.capability, o.action, target);
    if (route.ok() && !route->ledger.empty() &&
        (options.faults == nullptr || !options.faults->Supports("kill-after-answer")))
      needs.push_back("an injector for fault kind kill-after-answer (cause " + o.capability + ")");
  }

  bool NeedsOwnProcesses(const Step& step) const override { return EndsTarget(step); }
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    e.may_end_any = EndsTarget(step);
    return e;
  }

  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return CauseNow(ctx, step, index);
  }

 private:
  static bool EndsTarget(const Step& step) {
    const CapabilityInfo* cause = FindCapability(step.Options<CauseOptions>().capability);
    return cause != nullptr && cause->ends_target;
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeCauseStep() { return std::make_unique<CauseStepKind>(); }

}  // namespace idemproof::steps
