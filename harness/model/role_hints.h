// Role hints: when a scenario parameter finds nothing of the target with the
// role it asks for (binding.h), an undeclared action or probe of the file —
// one with no `role:` — may still be the very thing it wants, named or shaped
// as the suite used to ask for it (files written before roles). A hint says
// which, and the line to add:
//   probe 'inbox_applied' looks like role applied of credit: add `role: applied, of: credit`
// A guess from the name's words and the request's shape (method, path), never
// a binding: the file decides.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "model/scenario.h"
#include "model/target/actions.h"

namespace idemproof {

struct TargetDescription;  // model/target/description.h

// Hints for `parameter` of `scenario` against `target`: one per undeclared
// action (or probe, for a probe parameter) that looks like its role, with the
// `of:` it would need when the parameter has one. Empty when none does.
std::vector<std::string> RoleHints(const Scenario& scenario, const ScenarioParameter& parameter,
                                   const TargetDescription& target);

// What an action with no role looks like, for the loader's error: "looks
// like role delete of create_order: add `role: delete, of: create_order`"
// (the `of:` when one create action fits it), or "" when nothing does.
std::string ActionRoleGuess(const ActionDescription& action, const TargetDescription& target);

}  // namespace idemproof
