// `pause` (SIGSTOP) and `resume` (SIGCONT) of a target instance (`instance:`,
// main by default); every paused instance is resumed at the end of a run
// anyway. They need the target's start command.
// Execution: runtime/process_steps.h (PauseOrResume).
#include "runtime/process_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class PauseOrResumeStepKind final : public InstanceControlStepKind {
 public:
  explicit PauseOrResumeStepKind(bool pause) : pause_(pause) {}
  const char* name() const override { return pause_ ? "pause" : "resume"; }
  bool WritesBare(const Step& s) const override { return Controlled(s) == "main"; }
  Status Write(const Step& s, YAML::Emitter& out) const override {
    out << YAML::Key << name() << YAML::Value << true;
    if (Controlled(s) != "main") out << YAML::Key << "instance" << YAML::Value << Controlled(s);
    return Status::Ok();
  }
  void Plan(const Step& step, PlanModel& m, const ProvidedVariables&) const override {
    if (Controlled(step) == "main") m.paused = pause_;
    AddPlanTime(m, 10);
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::PauseOrResume(ctx.env(), ctx.recorder(), pause_, Controlled(step), index);
  }

 private:
  const bool pause_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakePauseStep() { return std::make_unique<PauseOrResumeStepKind>(true); }
std::unique_ptr<StepKindSpec> MakeResumeStep() { return std::make_unique<PauseOrResumeStepKind>(false); }

}  // namespace idemproof::steps
