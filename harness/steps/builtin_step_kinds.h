// The built-in step kinds (harness/steps/, one file per kind or family),
// registered into StepKinds() (model/step_kind.h) before main(); the recipe
// for a new kind is in model/step_kind.h and README.md ("add a step kind").
//
// Thread-safety: call before loading scenarios.
#pragma once

#include <memory>

#include "model/step_kind.h"

namespace idemproof::steps {

// Registers every built-in kind into `registry`; kInvalidArgument when one is
// already there.
Status RegisterBuiltinStepKinds(StepKindRegistry& registry);

}  // namespace idemproof::steps
