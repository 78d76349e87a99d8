// `probe: NAME` reads a target probe into the history under a label (`as:`,
// default its name). NAME may be a "$PARAM" probe parameter, bound with the
// label. Execution: runtime/probe_steps.h (ProbeStep).
#include "runtime/probe_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class ProbeStepKind final : public StepKindSpec {
 public:
  const char* name() const override { return "probe"; }
  std::vector<std::string> options() const override { return {"as", "biz", "after"}; }
  bool owns_label() const override { return true; }
  StepOptions NewOptions() const override { return ProbeOptions{}; }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    ProbeOptions& o = step.Options<ProbeOptions>();
    o.name = parser.NameOrReference(parser.RequiredValue(value, key, what, "a name"), what, true);
    step.label = o.name;  // a "$PARAM" label becomes the bound probe's name
    if (node["biz"]) o.biz = parser.Symbol(node["biz"], what + ".biz");
  }
  std::vector<std::string> ParameterNames(const Step& step) const override {
    return {step.Options<ProbeOptions>().name};
  }
  void Bind(Step& step, const std::map<std::string, std::string>& binding) const override {
    ProbeOptions& o = step.Options<ProbeOptions>();
    o.name = BoundName(o.name, binding);
    step.label = BoundName(step.label, binding);
  }
  void Check(const Step& s, StepFitCheck& fit) const override {
    fit.CheckName(s.Options<ProbeOptions>().name, s.mark, "probe", NamesOf(fit.target().probes));
  }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    const std::string& probe = s.Options<ProbeOptions>().name;
    out << YAML::Key << name() << YAML::Value << probe;
    if (!s.label.empty() && s.label != probe) out << YAML::Key << "as" << YAML::Value << s.label;
    return Status::Ok();
  }
  void Plan(const Step&, explore::PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 10); }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::ProbeStep(ctx, step, index);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeProbeStep() { return std::make_unique<ProbeStepKind>(); }

}  // namespace idemproof::steps
