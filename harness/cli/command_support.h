// What several subcommands share: the default {{build_dir}} (run, explore),
// loading the scenario files (run, lint), writing the results (run, check,
// merge). Messages go to std::cerr.
//
// Thread-safety: call from one thread.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "model/results.h"
#include "model/scenario.h"
#include "model/target.h"
#include "session/run_directory.h"

namespace idemproof::cli {

// {{build_dir}} by default: $IDEMPROOF_BUILD_DIR when set; else, installed,
// <prefix>/lib/idemproof (links laid out as in a build folder:
// reference-impl/idemproof-ref, payment-stub/idemproof-stub); else the build
// folder holding this executable (<build>/harness/cli/idemproof).
std::string DefaultBuildDir();

// Where the suite (scenarios/, its targets/), schemas/ and the files the
// example targets start live, and {{source_dir}}: installed
// (<prefix>/bin/idemproof beside <prefix>/share/idemproof/scenarios),
// <prefix>/share/idemproof; else the source tree this executable was built from.
std::string DataDir();

// The suite `idemproof run` and `lint` take when given no path: DataDir()/scenarios.
std::string SuiteDir();

// `paths`, or the suite when there is none.
std::vector<std::string> PathsOrSuite(const std::vector<std::string>& paths);

struct LoadedSuite {
  std::vector<Scenario> scenarios;
  int errors = 0;
};

// Loads every scenario file under `paths`; prints each error as
// file:line:column: message. With a target, binds each scenario to it (one per
// fitting action) and checks the fit.
LoadedSuite LoadScenarios(const std::vector<std::string>& paths, const TargetDescription* target);

// The rows (scenario x binding) a run of `scenarios` against `target` would
// run, with what each parameter is bound to, and those it could not, with
// what the target lacks: what lint and run --dry-run print, without a request.
struct RowPlan {
  std::vector<std::string> runs;   // "  layer/name  (param=action, ...)"
  std::vector<std::string> skips;  // "  layer/name"
  std::vector<std::vector<std::string>> skip_needs;  // what each skipped row lacks
  RunResults foreseen;             // a row per scenario: valid "runnable", or not_applicable
};
RowPlan PlanRows(const std::vector<Scenario>& scenarios, const TargetDescription& target);
// "will run N row(s):", the rows, "not applicable N row(s):", the rows (each
// naming its causes by number) and the table of causes, each said once;
// every line terminal-safe.
void PrintRowPlan(const RowPlan& plan, std::ostream& out);

// junit.xml into `dir` (when given), and the JUnit / results JSON files when
// named. False when a named file could not be written.
bool WriteOutputs(const RunResults& results, const std::string& junit_file, const std::string& json_file,
                  const session::RunDirectory* dir);

}  // namespace idemproof::cli
