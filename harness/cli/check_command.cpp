// `idemproof check RUN_DIR`: the oracles again over a recorded run, offline
// (session::RecheckRunDirectory).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/command_support.h"
#include "cli/summary_table.h"
#include "model/console_text.h"
#include "session/session.h"

namespace idemproof::cli {

namespace {

// The run's hunt phase as recorded in results.json: its workloads are not
// judged again offline, so its verdict is taken as recorded (RunResults::
// ExitCode combines it) and a run that failed only in its hunt never checks
// clean.
void PrintRecordedHunt(const RunResults& results, std::ostream& out) {
  if (!results.hunt) return;
  out << "hunt: " << ConsoleSafe(results.hunt->outcome) << " as recorded (its workloads are not judged again offline)";
  if (results.hunt->failure) out << "; replay: " << ConsoleSafe(results.hunt->failure->repro_command);
  out << "\n";
}

int Check(const std::string& run_dir, const std::string& junit_file, const std::string& json_file, bool strict) {
  auto results = session::RecheckRunDirectory(run_dir);
  if (!results.ok()) {
    std::cerr << ConsoleSafe(results.status().ToString()) << "\n";
    return kExitUsage;
  }
  results->strict = strict;
  cli::PrintSummaryTable(*results, std::cout);
  WriteOutputs(*results, junit_file, json_file, nullptr);
  if (!results->complete)
    std::cerr << "idemproof: " << ConsoleSafe(run_dir) << " is from a run that never finished (results.json says "
              << "\"finished\": false): what it holds is partial\n";
  PrintRecordedHunt(*results, std::cout);
  return results->ExitCode();
}

}  // namespace

void AddCheckCommand(CLI::App& app, CommandTable& table) {
  struct CheckArgs {
    std::string run_dir, junit_file, json_file;
    bool strict = false;
  };
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "re-run the oracles over a run directory, offline");
  cmd->add_option("run_dir", args->run_dir, "a run directory (e.g. idemproof-runs/latest)")->required();
  cmd->add_option("--junit", args->junit_file, "write the JUnit XML here");
  cmd->add_option("--json", args->json_file, "write the results JSON here");
  cmd->add_flag("--strict", args->strict, "a deviation (a SHOULD missed) fails like a violation (exit 1)");
  table.Add({cmd, [args] { return Check(args->run_dir, args->junit_file, args->json_file, args->strict); }});
}

}  // namespace idemproof::cli
