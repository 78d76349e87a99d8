// StepKindSpec: everything about one kind of scenario step (`send`, `kill`,
// `run_batch`, ...) in one object: its YAML name and option keys, the part of
// its parse that is its own, its check against the bound target (needs ->
// not_applicable, near-miss names -> errors), its YAML writer (explore's repro
// files), how it changes the plan model (model/plan_model.h), what it needs
// of the runtime, and its execution. A Step (scenario.h) points at its kind;
// nothing outside the kinds' own files asks which kind a step is: callers ask
// the kind (the traits below) or let it act.
//
// The kinds live in harness/steps/, one file per kind (or per family of kinds
// that share options), registered in harness/steps/builtin_step_kinds.cpp;
// the registry (StepKinds()) is the one name table. Running a step is the
// kind's other half, runtime::StepExecution (runtime/step_execution.h): the
// kinds' files sit above the runtime and derive from both (steps::StepKind);
// this header names nothing of the runtime or of explore.
//
// Add a step kind ("add a step kind" in README.md):
//  1. its options struct in model/step_options.h (or an existing family's),
//     one alternative of StepOptions;
//  2. harness/steps/NAME_step.cpp: a class deriving from steps::StepKind (name,
//     options, NewOptions, Parse filling only its struct, and whatever of
//     Check / Write / Plan / RuntimeNeeds / the traits it needs, each reading
//     step.Options<ITS_STRUCT>(); Execute through the runtime's StepContext), and
//     a factory `std::unique_ptr<StepKindSpec> MakeNAMEStep()`;
//  3. one line in harness/steps/builtin_step_kinds.cpp registering it, and the
//     file in harness/steps/CMakeLists.txt;
//  4. its keys in docs/scenario-reference.md.
// A kind registered from outside the tree (a test's) keeps its options in
// CustomOptions (a std::any) instead of step 1.
// tests/harness-runtime/step_kind_registry_test.cpp registers a test-only kind
// the same way and runs a scenario using it.
//
// Thread-safety: a spec is immutable; register every kind before loading
// scenarios (the built-ins are registered at static initialisation), then
// the registry is read-only.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/step_options.h"

namespace YAML {
class Node;
class Emitter;
}  // namespace YAML

namespace idemproof {

struct Step;
struct Scenario;
struct TargetDescription;
class StepParser;    // model/step_parser.h
class StepFitCheck;  // model/step_parser.h
struct PlanModel;    // model/plan_model.h

// What a step may have done to the target's processes, for the interpreter's
// watch (interpreter.cpp): an instance that ends though no step could have
// ended it is a target_exited event.
struct StepEffect {
  bool brings_main_up = false;       // start / restart of main
  bool may_take_main_down = false;   // kill / stop of main
  bool may_end_any = false;          // may end any instance (a hook, a fault, a cause that ends the target)
  bool touches_environment = false;  // may have armed something beyond the target's process (hook, fault)
};

// Which variables each action's answers provide (action -> variables), for
// a kind's Plan.
using ProvidedVariables = std::map<std::string, std::set<std::string>>;

class StepKindSpec {
 public:
  virtual ~StepKindSpec() = default;

  // Its YAML key ("send"), unique in the registry.
  virtual const char* name() const = 0;
  // True when it may be written as a bare word ("- kill").
  virtual bool bare() const { return false; }
  // The keys a step of this kind may have besides its name.
  virtual std::vector<std::string> options() const = 0;

  // A step's options at their defaults: the alternative of StepOptions its
  // Parse fills and its readers ask for (join: std::monostate).
  virtual StepOptions NewOptions() const { return std::monostate{}; }
  // Reads the step's value (`value`, under the key `key`) and its own keys
  // (`node`'s) into its options (step.options holds NewOptions()); the header
  // every kind has (after, label; a probe's `as`) is read by the loader
  // afterwards. Errors through `parser` (they throw, with file:line:column).
  // A bare kind gets an undefined `value` and `key` when written bare.
  virtual void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node& key,
                     Step& step) const = 0;
  // Once every step is read: checks that need the steps around it (a cause
  // needs a later request). `index` is the step's, `steps` the scenario's
  // steps node.
  virtual void AfterLoad(StepParser& parser, Scenario& scenario, std::size_t index, const YAML::Node& steps) const;

  // What the step needs of `fit.target()` (fit.AddNeed) and its near-miss
  // names (fit.CheckName). Default: nothing.
  virtual void Check(const Step& step, StepFitCheck& fit) const;

  // Writes the step's own keys into the open map (its name first);
  // kUnsupported when the kind has no YAML writer.
  virtual Status Write(const Step& step, YAML::Emitter& out) const = 0;
  // True when the step is written as its bare name (nothing but defaults).
  virtual bool WritesBare(const Step& step) const;
  // True when the step's label is its own key (a probe's `as`), written by
  // Write; otherwise the writer adds `label:`.
  virtual bool owns_label() const { return false; }

  // How the step changes the plan model (model/plan_model.h: what explore's
  // preconditions read); the step's `after` is already counted (most kinds:
  // 10ms of plan time). Explore's op kinds make their steps themselves: a
  // step kind knows nothing of explore.
  virtual void Plan(const Step& step, PlanModel& model, const ProvidedVariables& provides) const = 0;

  // Running the step (what it needs of the runtime, Execute) is the kind's
  // other half, runtime::StepExecution (runtime/step_execution.h): the model
  // names nothing of the runtime.

  // Traits.
  // Sends requests of its SendOptions' action (send, burst): a cause acts on it.
  virtual bool sends_request() const { return false; }
  // Runs a batch job.
  virtual bool runs_batch() const { return false; }
  // Starts another instance, named by its SpawnOptions.
  virtual bool spawns_instance() const { return false; }
  // The step's names that may be "$PARAM" references (an action, a probe).
  // Default: none.
  virtual std::vector<std::string> ParameterNames(const Step& step) const;
  // Replaces the step's "$PARAM" names by `binding`'s values (bind stage).
  // Default: nothing to replace.
  virtual void Bind(Step& step, const std::map<std::string, std::string>& binding) const;
  // Fills what the bind stage resolves against the target (a cause's provision).
  virtual void Resolve(Step& step, const TargetDescription& target) const;
  // Unbound scenario: what no action of the target could ever provide this step ("" = nothing).
  virtual std::string UnprovidedByAny(const Step& step, const TargetDescription& target) const;
  // True when a run of the step leaves the environment other than it found
  // it (runtime/run_types.h, Isolation): it needs processes of its own.
  virtual bool NeedsOwnProcesses(const Step& step) const;
  // True when a plan may drop the step: it changes nothing unless a later
  // request of its action follows (a cause), and none does.
  virtual bool NeedsLaterRequest(const Step& step) const;
  virtual StepEffect Effect(const Step& step) const;
};

// The step kinds by name.
class StepKindRegistry {
 public:
  // kInvalidArgument when the name is taken.
  Status Register(std::unique_ptr<StepKindSpec> kind);
  // nullptr when unknown.
  const StepKindSpec* Find(const std::string& name) const;
  // Registration order.
  std::vector<std::string> Names() const;

 private:
  std::vector<std::unique_ptr<StepKindSpec>> kinds_;
};

// The process's registry: the built-ins (harness/steps/) register into it at
// static initialisation; a test may add its own kinds.
StepKindRegistry& StepKinds();
// The registered kind `name`. REQUIRES: registered (a programming error
// otherwise: aborts with a message).
const StepKindSpec& StepKindNamed(const std::string& name);

}  // namespace idemproof
