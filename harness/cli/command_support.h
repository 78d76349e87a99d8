// What several subcommands share: the default {{build_dir}} (run, explore),
// loading the scenario files (run, lint), writing the results (run, check,
// merge). Messages go to std::cerr.
//
// Thread-safety: call from one thread.
#pragma once

#include <string>
#include <vector>

#include "model/results.h"
#include "model/scenario.h"
#include "model/target.h"
#include "session/run_directory.h"

namespace idemproof::cli {

// The build folder holding this executable (<build>/harness/cli/idemproof),
// unless $IDEMPROOF_BUILD_DIR names one.
std::string DefaultBuildDir();

struct LoadedSuite {
  std::vector<Scenario> scenarios;
  int errors = 0;
};

// Loads every scenario file under `paths`; prints each error as
// file:line:column: message. With a target, binds each scenario to it (one per
// fitting action) and checks the fit.
LoadedSuite LoadScenarios(const std::vector<std::string>& paths, const TargetDescription* target);

// junit.xml into `dir` (when given), and the JUnit / results JSON files when
// named. False when a named file could not be written.
bool WriteOutputs(const RunResults& results, const std::string& junit_file, const std::string& json_file,
                  const session::RunDirectory* dir);

}  // namespace idemproof::cli
