// StepExecution: the runtime half of a step kind (model/step_kind.h): what
// running a step needs and the running itself. The model's StepKindSpec names
// nothing of the runtime; every kind (harness/steps/, a test's) derives from
// both (steps::StepKind, steps/step_kind_support.h), and the interpreter
// finds a kind's execution through ExecutionOf.
//
// Thread-safety: a kind is immutable (model/step_kind.h).
#pragma once

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/step_kind.h"

namespace idemproof {
struct Step;
struct Scenario;
struct TargetDescription;
}  // namespace idemproof

namespace idemproof::runtime {

class StepContext;          // runtime/step_context.h
struct InterpreterOptions;  // runtime/run_types.h

class StepExecution {
 public:
  virtual ~StepExecution() = default;
  // What running the step needs that `options` lacks (a last-byte sender, an
  // injector), appended to `needs`. Default: nothing.
  virtual void RuntimeNeeds(const Step& /*step*/, const Scenario& /*scenario*/, const TargetDescription& /*target*/,
                            const InterpreterOptions& /*options*/, std::vector<std::string>& /*needs*/) const {}
  // Runs the step (its `after` already slept). Defined in the kind's file.
  virtual Status Execute(const Step& step, int index, StepContext& ctx) const = 0;
};

// The execution of `kind`. REQUIRES: the kind derives from StepExecution (a
// programming error otherwise: aborts with a message).
inline const StepExecution& ExecutionOf(const StepKindSpec& kind) {
  const auto* execution = dynamic_cast<const StepExecution*>(&kind);
  if (execution == nullptr) {
    std::cerr << "idemproof: internal error: step kind '" << kind.name() << "' has no execution (runtime::StepExecution)\n";
    std::abort();
  }
  return *execution;
}

}  // namespace idemproof::runtime
