// `start`, `stop` (SIGTERM, then SIGKILL after stop_timeout), `kill`
// (SIGKILL), `restart` (stop + start, same store): process control of a
// target instance (`instance:`, main by default). They need the target's
// start command; on another instance than main, a run of their own processes.
// Execution: runtime/process_steps.h (ControlTarget).
#include "runtime/process_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class ProcessControlStepKind final : public InstanceControlStepKind {
 public:
  ProcessControlStepKind(runtime::ProcessOp op) : op_(op) {}
  const char* name() const override { return runtime::ProcessOpName(op_); }
  // Written bare: an `instance:` is not written (explore generates these on main).
  bool WritesBare(const Step&) const override { return true; }
  Status Write(const Step&, YAML::Emitter& out) const override { return WriteTrue(*this, out); }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override {
    if (op_ == runtime::ProcessOp::kStart || op_ == runtime::ProcessOp::kRestart) {
      m.up = true;
      AddPlanTime(m, 500);
    } else {
      m.up = false;
      m.paused = false;
      AddPlanTime(m, 50);
    }
  }
  StepEffect Effect(const Step& step) const override {
    StepEffect e;
    const bool on_main = Controlled(step) == "main";
    const bool up = op_ == runtime::ProcessOp::kStart || op_ == runtime::ProcessOp::kRestart;
    e.brings_main_up = up && on_main;
    e.may_take_main_down = !up && on_main;
    return e;
  }
  Status Execute(const Step& step, int index, runtime::StepContext& ctx) const override {
    return runtime::ControlTarget(ctx.env(), ctx.recorder(), op_, index, Controlled(step));
  }

 private:
  const runtime::ProcessOp op_;
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeStartStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kStart); }
std::unique_ptr<StepKindSpec> MakeStopStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kStop); }
std::unique_ptr<StepKindSpec> MakeKillStep() { return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kKill); }
std::unique_ptr<StepKindSpec> MakeRestartStep() {
  return std::make_unique<ProcessControlStepKind>(runtime::ProcessOp::kRestart);
}

}  // namespace idemproof::steps
