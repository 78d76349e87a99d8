// CheckScenarioAgainstTarget (model/scenario.h): the scenario-wide needs,
// then each step's kind's Check through a StepFitCheck (model/step_parser.h).
#include <algorithm>

#include "model/scenario.h"
#include "model/step_kind.h"
#include "model/step_parser.h"
#include "model/target/description.h"
#include "model/yaml_reader.h"

namespace idemproof {

void StepFitCheck::AddNeed(const std::string& need) {
  if (std::find(fit_.needs.begin(), fit_.needs.end(), need) == fit_.needs.end()) fit_.needs.push_back(need);
}

// A name missing from the target is a typo when a declared name is close,
// otherwise a capability this target lacks.
void StepFitCheck::CheckName(const std::string& name, const SourceMark& mark, const std::string& what,
                             const std::vector<std::string>& known) {
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string close = yaml::ClosestWord(name, known);
  if (!close.empty()) {
    AddError(Status::InvalidConfig(
        what + " '" + name + "' is not declared by target '" + target_.name + "' (did you mean '" + close + "'?)",
        mark));
  } else {
    AddNeed(what + " '" + name + "'");
  }
}

// `what`: "step 'kill'".
std::string StepFitCheck::NeedsStart(const std::string& what) const {
  return "a start command (target 'start') for " + what +
         (target_.instance_urls.empty() ? ""
                                        : ": the harness did not start the listed instances (instances: [URL, ...]), "
                                          "so it cannot control their processes");
}

ScenarioFit CheckScenarioAgainstTarget(const Scenario& scenario, const TargetDescription& target) {
  ScenarioFit fit;
  StepFitCheck check(target, fit);
  if (const int needed = scenario.InstancesNeeded(); target.instance_count < needed)
    check.AddNeed("a target with at least " + std::to_string(needed) + " instances (target 'instances'; '" +
                  target.name + "' has " + std::to_string(target.instance_count) + ")");
  if (scenario.max_instances > 0 && target.instance_count > scenario.max_instances)
    check.AddNeed("a target with at most " + std::to_string(scenario.max_instances) + " instance(s) (scenario " +
                  "'max_instances'; '" + target.name + "' has " + std::to_string(target.instance_count) + ")");
  // Its premise is another instance seeing the same key: a target whose
  // instances share no store cannot give it (a violation there is unearned).
  const bool crosses = scenario.InstancesNeeded() >= 2 ||
                       std::any_of(scenario.steps.begin(), scenario.steps.end(),
                                   [](const Step& s) { return s.kind->spawns_instance(); });
  if (crosses && !target.shared_store)
    check.AddNeed("instances that share one store: it sends a key to a second instance, and '" + target.name +
                  "' says its instances share none (target 'shared_store: false')");
  const bool unbound = !scenario.parameters.empty() && scenario.binding.empty();
  for (const auto& [name, fault] : scenario.faults) {
    if (const std::string egress = EgressOfHop(fault.on); !egress.empty() && !target.egress.count(egress))
      check.AddNeed("egress '" + egress + "' (target 'egress') for fault " + name);
    // Left unbound: no action the scenario sends calls an http egress.
    if (fault.on == kDownstreamHop && !unbound)
      check.AddNeed("an http egress downstream an action it sends calls (target 'egress', named by the action's "
                    "'calls:' or a ledger probe with egress: of it) for fault " + name);
    // Left unbound by BindScenario: the target has no tcp egress.
    if (fault.on == kStoreHop)
      check.AddNeed("a tcp egress (target 'egress' with protocol: tcp: the service's own store behind the "
                    "harness's proxy) for fault " + name);
  }
  // Unbound (nothing of the target fits its parameters): what it lacks for
  // them, then for the names it uses literally; its "$PARAM" names are no typos.
  if (unbound) {
    for (const auto& need : scenario.unmet) check.AddNeed(need);
    if (fit.needs.empty()) check.AddNeed("to be bound to the target first (its for_each parameters)");
  }
  auto is_reference = [](const std::string& name) { return !name.empty() && name[0] == kParameterSigil; };
  for (const auto& s : scenario.steps) {
    if (unbound) {
      const auto names = s.kind->ParameterNames(s);
      if (std::any_of(names.begin(), names.end(), is_reference)) continue;
    }
    s.kind->Check(s, check);
  }
  return fit;
}

}  // namespace idemproof
