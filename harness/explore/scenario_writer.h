// ScenarioWriter: a Scenario back to scenario-file YAML that the model's
// loader reads into the same scenario (the explore repro format). Every step
// kind the loader knows from the committed model is written (send, burst,
// wait, hook, probe, fault, heal, join, start, stop, kill, restart, run_batch,
// rerun, clean_run) with its non-default options; any other kind is a
// kUnsupported error, never a silently dropped step.
//
// Thread-safety: a pure function.
#pragma once

#include <string>

#include "model/scenario.h"
#include "base/status.h"

namespace idemproof::explore {

// `comment` (may be multi-line) is written first as '# ' lines.
Result<std::string> WriteScenarioYaml(const Scenario& scenario, const std::string& comment);

}  // namespace idemproof::explore
