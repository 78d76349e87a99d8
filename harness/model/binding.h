// The bind stage: a scenario with parameters (`for_each:`) lifted over every
// action and probe of one target that fits them, as Jepsen's `independent`
// lifts a single-key test over many keys. Each fitting assignment yields one
// concrete scenario whose steps and expectations (oracle parameters such as
// `actions:`) name actions and probes literally, so the runtime and the
// oracles never see a parameter.
//
// An assignment fits when every parameter gets a distinct action (or probe)
// with its role; an action parameter's `needs:` are declared by that action
// (`records`: a records probe; `other_payload`); and a parameter `of:` P gets
// an action or probe whose own `of:` is the action bound to P. Assignments
// are enumerated in parameter order, each parameter's candidates by name, so
// the result is deterministic.
//
// Every scenario returned has its `cause:` steps resolved (capabilities.h):
// a variant of the next send's action, else a hook; an unprovided one stays
// unresolved and CheckScenarioAgainstTarget names it as the scenario's need.
//
// A bound scenario is named "NAME[v1,v2,...]" (the bound names in parameter
// order) and keeps NAME in `bound_from`.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/scenario.h"
#include "base/status.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

// Every concrete scenario of `scenario` against `target`. Never empty: a
// scenario without parameters is returned as it is; when nothing fits, one
// copy with `unmet` set ("an action with role create and a records probe"),
// for a not_applicable row.
std::vector<Scenario> BindScenario(const Scenario& scenario, const TargetDescription& target);

// The scenario with `binding` (parameter -> action or probe name) applied, as
// `idemproof check` rebuilds it from results.json. Error kInvalidArgument
// when `binding` does not give exactly the scenario's parameters.
Result<Scenario> ApplyBinding(const Scenario& scenario, const std::map<std::string, std::string>& binding);

// What a parameter asks of a target, for not_applicable reasons: "an action
// with role delete of the create action and ...".
std::string DescribeParameter(const ScenarioParameter& parameter);

}  // namespace idemproof
