// `fault: NAME` starts a fault the scenario declares under `faults:`, `heal:
// NAME` heals it; both need an injector for the fault's kind. A fault may end
// any instance and act beyond the target's process (a proxy, an egress).
// Execution: the declared fault through runtime/fault_steps.h (StartOrHealFault).
#include "runtime/fault_steps.h"
#include "runtime/run_types.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class FaultOrHealStepKind final : public StepKind {
 public:
  explicit FaultOrHealStepKind(bool start) : start_(start) {}
  const char* name() const override { return start_ ? "fault" : "heal"; }
  std::vector<std::string> options() const override { return {"after", "label"}; }
  StepOptions NewOptions() const override { return FaultOptions{}; }
  void Parse(StepParser& parser, const YAML::Node&, const YAML::Node& value, const YAML::Node& key,
             Step& step) const override {
    const std::string what = What(*this);
    FaultOptions& o = step.Options<FaultOptions>();
    o.name = parser.Symbol(parser.RequiredValue(value, key, what, "a fault name"), what);
    if (!parser.scenario().faults.count(o.name)) {
      std::vector<std::string> declared = NamesOf(parser.scenario().faults);
      parser.Fail(value, what + ": fault '" + o.name + "' is not declared under 'faults'" +
                             yaml::DidYouMean(o.name, declared));
    }
  }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    out << YAML::Key << name() << YAML::Value << s.Options<FaultOptions>().name;
    return Status::Ok();
  }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 10); }
  void RuntimeNeeds(const Step& step, const Scenario& scenario, const TargetDescription&,
                    const runtime::InterpreterOptions& options, std::vector<std::string>& needs) const override {
    const std::string& fault = step.Options<FaultOptions>().name;
    auto it = scenario.faults.find(fault);
    const std::string kind = it == scenario.faults.end() ? fault : it->second.kind;
    if (options.faults == nullptr || !options.faults->Supports(kind)) needs.push_back("an injector for fault kind " + kind);
  }
  StepEffect Effect(const Step&) const override {
    StepEffect e;
    e.may_end_any = start_;
    e.touches_environment = start_;
    return e;
  }
  // kInvalidConfig: no such declared fault; kUnsupported: no injector for its kind.
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    const std::string& fault_name = step.Options<FaultOptions>().name;
    const FaultDeclaration* fault = runtime::FindFault(ctx, fault_name);
    if (fault == nullptr) return Status(StatusCode::kInvalidConfig, "no fault named " + fault_name);
    return runtime::StartOrHealFault(ctx, *fault, start_, index, nlohmann::json());
  }

 private:
  const bool start_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeFaultStep() { return std::make_unique<FaultOrHealStepKind>(true); }
std::unique_ptr<StepKindSpec> MakeHealStep() { return std::make_unique<FaultOrHealStepKind>(false); }

}  // namespace idemproof::steps
