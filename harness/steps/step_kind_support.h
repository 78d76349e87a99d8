// Helpers the step kinds of this folder share (model/step_kind.h): the
// "step 'NAME'" of their messages, the bare kinds' value check, the names a
// target declares, the plan time of a step, the process-control base.
//
// Thread-safety: stateless.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "model/plan_model.h"
#include "model/scenario.h"
#include "model/step_kind.h"
#include "model/step_parser.h"
#include "runtime/step_execution.h"

namespace idemproof::steps {

// A step kind whole: its model half (parse, check, write, plan, traits) and
// its runtime half (what it needs, Execute).
class StepKind : public StepKindSpec, public runtime::StepExecution {};

// "step 'NAME'": how messages name a step of `kind`.
inline std::string What(const StepKindSpec& kind) { return std::string("step '") + kind.name() + "'"; }

// A kind without a value ("- kill", "kill: true"): anything else is an error.
inline void NoValue(StepParser& parser, const YAML::Node& value, const StepKindSpec& kind) {
  if (value.IsDefined() && !value.IsNull() && !(value.IsScalar() && value.Scalar() == "true"))
    parser.Fail(value, What(kind) + " takes no value (write '- " + kind.name() + "')");
}

// The names of a target's table (actions, probes, hooks, messages).
template <typename Map>
std::vector<std::string> NamesOf(const Map& table) {
  std::vector<std::string> out;
  for (const auto& [name, value] : table) out.push_back(name);
  return out;
}

// Explore's estimate of the step's wall time.
inline void AddPlanTime(PlanModel& model, std::int64_t ms) { model.elapsed_ms += ms; }

// The kinds that write nothing but `NAME: true` (bare kinds with options).
inline Status WriteTrue(const StepKindSpec& kind, YAML::Emitter& out) {
  out << YAML::Key << kind.name() << YAML::Value << true;
  return Status::Ok();
}

// The kinds that act on one target instance's process (`instance:`, main by
// default) and take no value: start, stop, kill, restart, pause, resume. They
// need the target's start command; on another instance than main, a run of
// their own processes.
class InstanceControlStepKind : public StepKind {
 public:
  bool bare() const override { return true; }
  std::vector<std::string> options() const override { return {"instance", "after", "label"}; }
  StepOptions NewOptions() const override { return InstanceOptions{}; }
  void Parse(StepParser& parser, const YAML::Node& node, const YAML::Node& value, const YAML::Node&,
             Step& step) const override {
    NoValue(parser, value, *this);
    if (node.IsMap() && node["instance"])
      step.Options<InstanceOptions>().instance = parser.Instance(node["instance"], What(*this), false);
  }
  void Check(const Step&, StepFitCheck& fit) const override {
    if (!fit.target().start) fit.AddNeed(fit.NeedsStart(What(*this)));
  }
  bool NeedsOwnProcesses(const Step& step) const override { return Controlled(step) != "main"; }
  // The instance it acts on: main unless `instance:` names another.
  static const std::string& Controlled(const Step& step) {
    return step.Options<InstanceOptions>().ControlledInstance();
  }
};

}  // namespace idemproof::steps
