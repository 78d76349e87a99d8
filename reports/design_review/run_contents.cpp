#include "reports/design_review/run_contents.h"

#include <filesystem>

namespace idemproof {

namespace fs = std::filesystem;

const History* RunDirectoryContents::HistoryOf(std::size_t scenario_index) const {
  auto it = histories.find(scenario_index);
  return it == histories.end() ? nullptr : &it->second;
}

Result<RunDirectoryContents> ReadRunDirectory(const std::string& run_dir) {
  const fs::path dir(run_dir);
  const fs::path results_file = dir / "results.json";
  std::error_code ec;
  if (!fs::exists(results_file, ec)) {
    return Status::NotFound(run_dir + " is not a run directory: no results.json");
  }
  auto results = ReadRunResults(results_file.string());
  if (!results.ok()) return results.status();

  RunDirectoryContents contents;
  contents.path = run_dir;
  contents.results = std::move(results).value();

  // The copy in the run directory is what the run used; the original may
  // have changed since.
  std::string target_file = (dir / "target.yaml").string();
  if (!fs::exists(target_file, ec)) target_file = contents.results.target_file;
  if (target_file.empty()) {
    contents.gaps.push_back("no target file: store and window columns are not filled");
  } else {
    auto target = LoadTargetFile(target_file);
    if (target.ok()) {
      contents.target = std::move(target).value();
    } else {
      contents.gaps.push_back("target file not read: " + target.status().ToString());
    }
  }

  for (std::size_t i = 0; i < contents.results.scenarios.size(); ++i) {
    const ScenarioResult& s = contents.results.scenarios[i];
    if (s.history_file.empty()) continue;
    auto history = History::ReadJsonl((dir / s.history_file).string());
    if (history.ok()) {
      contents.histories.emplace(i, std::move(history).value());
    } else {
      contents.gaps.push_back("history of " + s.name + " not read: " + history.status().ToString());
    }
  }
  return contents;
}

}  // namespace idemproof
