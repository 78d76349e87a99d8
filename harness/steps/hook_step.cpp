// `hook: NAME` fires a target hook (its `biz:` binds {{biz}}). It may end
// any instance and arm something beyond the target's process, so the
// interpreter stops watching the running instances and keeps no process.
// Execution: runtime/hook_calls.h (FireHook).
#include "runtime/hook_calls.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class HookStepKind final : public StepKind {
 public:
  const char* name() const override { return "hook"; }
  std::vector<std::string> options() const override { return {"biz", "after", "label"}; }
  StepOptions NewOptions() const override { return HookOptions{}; }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    HookOptions& o = step.Options<HookOptions>();
    o.name = parser.Symbol(parser.RequiredValue(value, key, what, "a name"), what);
    if (node["biz"]) o.biz = parser.Symbol(node["biz"], what + ".biz");
  }
  void Check(const Step& s, StepFitCheck& fit) const override {
    fit.CheckName(s.Options<HookOptions>().name, s.mark, "hook", NamesOf(fit.target().hooks));
  }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    out << YAML::Key << name() << YAML::Value << s.Options<HookOptions>().name;
    return Status::Ok();
  }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override {
    m.hook_pending = true;
    AddPlanTime(m, 10);
  }
  StepEffect Effect(const Step&) const override {
    StepEffect e;
    e.may_end_any = true;
    e.touches_environment = true;
    return e;
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    const HookOptions& hook = step.Options<HookOptions>();
    return runtime::FireHook(ctx, hook.name, hook.biz, index, runtime::StepContext::CallMode::kCancellable);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeHookStep() { return std::make_unique<HookStepKind>(); }

}  // namespace idemproof::steps
