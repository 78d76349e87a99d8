// `cause: CAPABILITY` (model/capabilities.h) causes a capability the target
// provides: by a variant of the next request of `action` (default: the next
// send's or burst's), by a hook, or through an egress ledger (a
// kill-after-answer); a message capability (die_before_ack) by a variant
// of the next publish's message or a hook. A variant belongs to the attempt: every later request
// of that key repeats it, as a client's retry repeats its request byte for
// byte, unless `variant: first_only` says the later ones differ on purpose. The bind stage resolves how (Resolve); a capability
// that changes a request needs a later send or burst of its action.
// Execution: runtime/probe_steps.h (CauseStep).
#include "model/capabilities.h"
#include "runtime/probe_steps.h"
#include "runtime/run_types.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class CauseStepKind final : public StepKindSpec {
 public:
  const char* name() const override { return "cause"; }
  std::vector<std::string> options() const override { return {"action", "biz", "variant", "after", "label"}; }

  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& st) const override {
    const std::string what = What(*this);
    st.name = parser.Symbol(parser.RequiredValue(value, key, what, "a capability"), what);
    if (FindCapability(st.name) == nullptr) {
      const auto names = CapabilityNames();
      std::string known;
      for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
      parser.Fail(value, what + ": unknown capability '" + st.name + "'" + yaml::DidYouMean(st.name, names) +
                             "; known: " + known);
    }
    if (node["action"]) st.action = parser.NameOrReference(node["action"], what + ".action", false);
    if (node["variant"]) {
      const std::string v = parser.reader().String(node["variant"], what + ".variant");
      if (v != "attempt" && v != "first_only")
        parser.Fail(node["variant"], what + ".variant must be 'attempt' or 'first_only', found '" + v + "'");
      st.cause_first_only = v == "first_only";
    }
  }

  // A cause acts on the next send or burst: its action (a variant is that
  // action's); a capability that changes a request needs one to follow.
  // A message capability acts on the next publish: its message.
  void AfterLoad(StepParser& parser, Scenario& s, std::size_t i, const YAML::Node& steps) const override {
    Step& st = s.steps[i];
    const bool message = FindCapability(st.name)->message;
    bool follows = false;
    for (std::size_t j = i + 1; j < s.steps.size() && !follows; ++j) {
      const Step& next = s.steps[j];
      const std::string& on = message ? next.name : next.action;
      if (message ? std::string(next.kind->name()) != "publish" : !next.kind->sends_request()) continue;
      if (st.action.empty()) st.action = on;
      follows = on == st.action;
    }
    if (!follows && !FindCapability(st.name)->always)
      parser.Fail(steps[i], std::string("step 'cause': no ") + (message ? "publish step" : "send or burst step") +
                                (st.action.empty() ? std::string() : " of " + st.action) + " follows for " + st.name +
                                " to act on");
  }

  void Check(const Step& s, StepFitCheck& fit) const override {
    auto provision = ResolveCapability(s.name, s.action, fit.target());
    if (!provision.ok()) fit.AddNeed(provision.status().message());
  }

  void Resolve(Step& step, const TargetDescription& target) const override {
    auto p = ResolveCapability(step.name, step.action, target);
    if (!p.ok()) return;
    step.cause_resolved = true;
    step.cause_variant = p->variant;
    step.cause_hook = p->hook;
    step.cause_ledger = p->ledger;
  }

  std::string UnprovidedByAny(const Step& step, const TargetDescription& target) const override {
    auto unprovided = ResolveCapability(step.name, step.action, target);
    bool any = unprovided.ok();
    for (const auto& [name, action] : target.actions) any = any || ResolveCapability(step.name, name, target).ok();
    for (const auto& [name, message] : target.messages) any = any || ResolveCapability(step.name, name, target).ok();
    return any ? std::string() : unprovided.status().message();
  }

  bool NeedsLaterRequest(const Step& step) const override { return step.name != "heal"; }

  Status Write(const Step& s, YAML::Emitter& out) const override {
    out << YAML::Key << name() << YAML::Value << s.name;
    if (!s.action.empty()) out << YAML::Key << "action" << YAML::Value << s.action;
    if (s.cause_first_only) out << YAML::Key << "variant" << YAML::Value << "first_only";
    return Status::Ok();
  }

  void Plan(const Step& step, explore::PlanModel& m, const ProvidedVariables&) const override {
    if (step.name == "heal") {
      m.variant_pending.clear();
      m.hook_pending = false;
    } else if (!step.cause_variant.empty()) {
      m.variant_pending.insert(step.action);
    } else if (!step.cause_hook.empty()) {
      m.hook_pending = true;
    }
    AddPlanTime(m, 10);
  }

  void RuntimeNeeds(const Step& step, const Scenario&, const TargetDescription& target,
                    const runtime::InterpreterOptions& options, std::vector<std::string>& needs) const override {
    auto route = ResolveCapability(step.name, step.action, target);
    if (route.ok() && !route->ledger.empty() &&
        (options.faults == nullptr || !options.faults->Supports("kill-after-answer")))
      needs.push_back("an injector for fault kind kill-after-answer (cause " + step.name + ")");
  }

  bool NeedsOwnProcesses(const Step& step) const override { return EndsTarget(step); }
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    e.may_end_any = EndsTarget(step);
    return e;
  }

  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::CauseStep(ctx, step, index);
  }

 private:
  static bool EndsTarget(const Step& step) {
    const CapabilityInfo* cause = FindCapability(step.name);
    return cause != nullptr && cause->ends_target;
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeCauseStep() { return std::make_unique<CauseStepKind>(); }

}  // namespace idemproof::steps
