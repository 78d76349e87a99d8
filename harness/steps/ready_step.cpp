// `ready` (bare): waits until main answers the target's readiness request
// (start.ready, its timeout the deadline) after a `start` or `restart` with
// `until: accepting`; the requests before it raced the start-up. Nothing to
// wait for after a start that waited itself, or when the target declares no
// readiness request. A target that does not get ready ends the run as a
// failed start would. Needs the target's start command.
// Execution: runtime/process_steps.h (AwaitMainReady).
#include "runtime/process_steps.h"
#include "runtime/step_context.h"
#include "steps/step_kind_support.h"

namespace idemproof::steps {
namespace {

class ReadyStepKind final : public StepKind {
 public:
  const char* name() const override { return "ready"; }
  bool bare() const override { return true; }
  std::vector<std::string> options() const override { return {"after", "label"}; }
  void Parse(StepParser& parser, const YAML::Node&, const YAML::Node& value, const YAML::Node&,
             Step&) const override {
    NoValue(parser, value, *this);
  }
  void Check(const Step&, StepFitCheck& fit) const override {
    if (!fit.target().start) fit.AddNeed(fit.NeedsStart(What(*this)));
  }
  bool WritesBare(const Step&) const override { return true; }
  Status Write(const Step&, YAML::Emitter& out) const override { return WriteTrue(*this, out); }
  void Plan(const Step&, PlanModel& m, const ProvidedVariables&) const override { AddPlanTime(m, 500); }
  Status Execute(const Step&, int index, runtime::StepContext& ctx) const override {
    return runtime::AwaitMainReady(ctx.env(), ctx.recorder(), index);
  }
};

}  // namespace

std::unique_ptr<StepKindSpec> MakeReadyStep() { return std::make_unique<ReadyStepKind>(); }

}  // namespace idemproof::steps
