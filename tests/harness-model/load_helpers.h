// Loading target and scenario text in the model tests: what loads, and the
// located error of what must not (always an invalid-config error).
#pragma once

#include <string>

#include "model/scenario.h"

namespace idemproof::testing {

// REQUIRES (checked): `text` loads as a scenario (s.yaml).
Scenario ScenarioOf(const std::string& text);
// REQUIRES (checked): `text` is refused as a scenario, as invalid config; its message.
std::string ScenarioError(const std::string& text);
// REQUIRES (checked): `text` is refused as a target file, as invalid config; its message.
std::string TargetError(const std::string& text);

// double-submit, bound to a create with records: the binding tests' scenario.
extern const std::string kDoubleSubmit;

}  // namespace idemproof::testing
