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
#include "hunt/hunt.h"
#include "model/console_text.h"
#include "session/session.h"

namespace idemproof::cli {

namespace {

// The exit code the run's hunt phase recorded in RUN_DIR/results.json
// ("hunt": {"outcome": ...}); nullopt when the run had no hunt. The hunt's
// workloads are not judged again offline: its verdict is taken as recorded,
// so a run that failed only in its hunt never checks clean.
std::optional<int> RecordedHuntExit(const std::string& run_dir, std::ostream& out) {
  std::ifstream in(std::filesystem::path(run_dir) / "results.json");
  if (!in) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("hunt") || !j["hunt"].is_object()) return std::nullopt;
  const nlohmann::json& h = j["hunt"];
  const std::string outcome = h.value("outcome", std::string("undecided"));
  const int code = outcome == "violation" ? 1 : outcome == "clean" ? kExitOk : kExitUndecided;
  out << "hunt: " << ConsoleSafe(outcome) << " as recorded (its workloads are not judged again offline)";
  if (code == 1 && h.contains("failure") && h["failure"].is_object())
    out << "; replay: " << ConsoleSafe(h["failure"].value("repro_command", std::string("?")));
  out << "\n";
  return code;
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
  const std::optional<int> hunt_exit = RecordedHuntExit(run_dir, std::cout);
  return hunt_exit ? hunt::CombinedExitCode(results->ExitCode(), *hunt_exit) : results->ExitCode();
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
