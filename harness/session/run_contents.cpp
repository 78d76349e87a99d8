#include "session/run_contents.h"
#include "model/results_json.h"

#include <filesystem>

namespace idemproof {

namespace fs = std::filesystem;

const History* RunDirectoryContents::HistoryOf(std::size_t scenario_index) const {
  auto it = histories.find(scenario_index);
  return it == histories.end() ? nullptr : &it->second;
}

std::string RunDirectoryContents::ScenarioCopyOf(std::size_t scenario_index) const {
  const ScenarioResult& s = results.scenarios.at(scenario_index);
  if (s.history_file.empty()) return "";
  return (fs::path(path) / fs::path(s.history_file).parent_path() / fs::path(s.file).filename()).string();
}

std::vector<std::string> RunDirectoryContents::Gaps() const {
  std::vector<std::string> out;
  if (!target_error.ok()) out.push_back("target file not read: " + target_error.ToString());
  for (const auto& [i, error] : history_errors) {
    out.push_back("history of " + results.scenarios[i].name + " not read: " + error.ToString());
  }
  return out;
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

  // The copy is what the run used; the original may have changed since.
  const std::string copy = (dir / "target.yaml").string();
  contents.target_copied = fs::exists(copy, ec);
  contents.target_file = contents.target_copied ? copy : contents.results.target_file;
  if (contents.target_file.empty()) {
    contents.target_error = Status::NotFound(copy + ": no copy of the target file, and results.json names none");
  } else {
    auto target = LoadTargetFile(contents.target_file);
    if (target.ok()) {
      contents.target = std::move(target).value();
    } else {
      contents.target_error = target.status();
    }
  }

  for (std::size_t i = 0; i < contents.results.scenarios.size(); ++i) {
    const ScenarioResult& s = contents.results.scenarios[i];
    if (s.history_file.empty()) continue;
    // A format-1 history (results.json without "format") is converted as it is read.
    auto history = History::ReadJsonl((dir / s.history_file).string(), contents.results.format);
    if (history.ok()) {
      contents.histories.emplace(i, std::move(history).value());
    } else {
      contents.history_errors.emplace(i, history.status());
    }
  }
  return contents;
}

}  // namespace idemproof
