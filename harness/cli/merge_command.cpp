// `idemproof merge RUN_DIR...`: the run folders of `run --shard K/N` merged into
// one run folder that `check` and `report` read as a run's.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "cli/command.h"
#include "cli/command_support.h"
#include "cli/report_command.h"
#include "cli/summary_table.h"
#include "model/console_text.h"
#include "model/shard_merge.h"
#include "model/results_json.h"

namespace idemproof::cli {

namespace {

namespace fs = std::filesystem;

struct MergeArgs {
  std::vector<std::string> run_dirs;
  std::string out_dir = "idemproof-runs";
  std::string junit_file;
  std::string json_file;
};

// `idemproof merge`: the shards' run folders into one run folder (results,
// JUnit, reports, and each scenario's folder copied, so `check` and `report`
// work on it as on a run's).
int Merge(const MergeArgs& args) {
  std::vector<ShardRun> shards;
  for (const auto& run_dir : args.run_dirs) {
    const fs::path results_file = fs::path(run_dir) / "results.json";
    if (!fs::exists(results_file)) {
      std::cerr << "idemproof merge: " << ConsoleSafe(run_dir) << ": no results.json"
                << (fs::exists(fs::path(run_dir) / "explore.json")
                        ? " (an explore run folder: explore shards are merged by reading their explore.json, "
                          "not by merge)"
                        : " (not a run folder of idemproof run --shard)")
                << "\n";
      return kExitUsage;
    }
    auto results = ReadRunResults(results_file.string());
    if (!results.ok()) {
      std::cerr << "idemproof merge: " << ConsoleSafe(results.status().ToString()) << "\n";
      return kExitUsage;
    }
    shards.push_back({run_dir, std::move(results).value()});
  }
  auto merge = MergeShardResults(shards);
  if (!merge.ok()) {
    std::cerr << "idemproof merge: " << ConsoleSafe(merge.status().message()) << "\n";
    return kExitUsage;
  }
  RunResults& merged = merge->results;
  auto dir = session::RunDirectory::Create(args.out_dir, session::RunDirectory::NewRunId(merged.seed) + "-merged");
  if (!dir.ok()) {
    std::cerr << "idemproof merge: " << ConsoleSafe(dir.status().message()) << "\n";
    return kExitUsage;
  }
  merged.run_id = dir->id();
  for (const auto& shard : shards) {
    const fs::path target_copy = fs::path(shard.dir) / "target.yaml";
    if (fs::exists(target_copy)) {
      dir->CopyIn(target_copy.string(), "target.yaml");
      break;
    }
  }
  for (std::size_t i = 0; i < merged.scenarios.size(); ++i) {
    ScenarioResult& row = merged.scenarios[i];
    if (row.history_file.empty()) continue;
    const fs::path history(row.history_file);
    auto folder = dir->AddScenarioFolder(history.begin()->string());
    std::error_code ec;
    if (folder.ok())
      fs::copy(fs::path(merge->row_dirs[i]) / *history.begin(), dir->Absolute(*folder),
               fs::copy_options::recursive | fs::copy_options::overwrite_existing, ec);
    if (!folder.ok() || ec) {
      std::cerr << "idemproof merge: "
                << ConsoleSafe("cannot copy " + row.name + "'s folder from " + merge->row_dirs[i] + ": " +
                               (ec ? ec.message() : folder.status().message()))
                << "\n";
      return kExitUsage;
    }
    row.history_file = (fs::path(*folder) / history.lexically_relative(*history.begin())).string();
  }
  if (Status written = dir->WriteResults(merged); !written.ok()) {
    std::cerr << "idemproof merge: " << ConsoleSafe(written.message()) << "\n";
    return kExitUsage;
  }
  std::cout << "idemproof merge: " << shards.size() << " shard folder(s) of " << ConsoleSafe(merged.target_name)
            << ", seed "
            << merged.seed << "\n\n";
  cli::PrintSummaryTable(merged, std::cout);
  WriteOutputs(merged, args.junit_file, args.json_file, &*dir);
  std::cout << "\nrun directory: " << dir->path() << " (results.json, junit.xml, histories)\n";
  cli::WriteRunReports(dir->path(), std::cout, std::cerr);
  if (merged.Incomplete()) std::cerr << "idemproof merge: " << ConsoleSafe(merged.ShardNote()) << "\n";
  return merged.ExitCode();
}

}  // namespace

void AddMergeCommand(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* cmd = app.add_subcommand("merge", "merge the run folders of `run --shard K/N` into one run folder");
  cmd->add_option("run_dirs", args->run_dirs, "the shards' run folders")->required();
  cmd->add_option("--out", args->out_dir, "where the merged run folder goes")->capture_default_str();
  cmd->add_option("--junit", args->junit_file, "also write the JUnit XML here");
  cmd->add_option("--json", args->json_file, "also write results.json here");
  table.Add({cmd, [args] { return Merge(*args); }});
}

}  // namespace idemproof::cli
