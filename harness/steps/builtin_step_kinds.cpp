// RegisterBuiltinStepKinds: the one place that names the built-in step kinds
// (model/step_kind.h has the recipe for a new one: a file in this folder and
// one line here). Registration order is the order `lint` and the loader's
// "a step is one of: ..." list them.
#include <cstdio>
#include <cstdlib>

#include "steps/builtin_step_kinds.h"

namespace idemproof::steps {

std::unique_ptr<StepKindSpec> MakeSendStep();
std::unique_ptr<StepKindSpec> MakeBurstStep();
std::unique_ptr<StepKindSpec> MakeWaitStep();
std::unique_ptr<StepKindSpec> MakeHookStep();
std::unique_ptr<StepKindSpec> MakeProbeStep();
std::unique_ptr<StepKindSpec> MakeFaultStep();
std::unique_ptr<StepKindSpec> MakeHealStep();
std::unique_ptr<StepKindSpec> MakeJoinStep();
std::unique_ptr<StepKindSpec> MakeStartStep();
std::unique_ptr<StepKindSpec> MakeStopStep();
std::unique_ptr<StepKindSpec> MakeKillStep();
std::unique_ptr<StepKindSpec> MakeRestartStep();
std::unique_ptr<StepKindSpec> MakeReadyStep();
std::unique_ptr<StepKindSpec> MakeRunBatchStep();
std::unique_ptr<StepKindSpec> MakeRerunStep();
std::unique_ptr<StepKindSpec> MakeCleanRunStep();
std::unique_ptr<StepKindSpec> MakePauseStep();
std::unique_ptr<StepKindSpec> MakeResumeStep();
std::unique_ptr<StepKindSpec> MakeSpawnStep();
std::unique_ptr<StepKindSpec> MakeDeliverStep();
std::unique_ptr<StepKindSpec> MakePublishStep();
std::unique_ptr<StepKindSpec> MakeCauseStep();

Status RegisterBuiltinStepKinds(StepKindRegistry& registry) {
  for (auto make : {MakeSendStep, MakeBurstStep, MakeWaitStep, MakeHookStep, MakeProbeStep, MakeFaultStep,
                    MakeHealStep, MakeJoinStep, MakeStartStep, MakeStopStep, MakeKillStep, MakeRestartStep, MakeReadyStep,
                    MakeRunBatchStep, MakeRerunStep, MakeCleanRunStep, MakePauseStep, MakeResumeStep, MakeSpawnStep,
                    MakeDeliverStep, MakePublishStep, MakeCauseStep}) {
    if (Status s = registry.Register(make()); !s.ok()) return s;
  }
  return Status::Ok();
}

namespace {
// Before main(): every scenario load finds the built-ins in StepKinds(). The
// library is linked whole (harness/steps/CMakeLists.txt), so this runs.
const bool kRegistered = [] {
  if (Status s = RegisterBuiltinStepKinds(StepKinds()); !s.ok()) {
    std::fprintf(stderr, "idemproof: %s\n", s.ToString().c_str());
    std::abort();
  }
  return true;
}();
}  // namespace

}  // namespace idemproof::steps
