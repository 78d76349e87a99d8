// RunDirectoryContents: the one reader of a run directory (the layout is
// harness/session/run_directory.h), used by `idemproof check`, `idemproof
// report` and the report writer. It reads:
//
//   results.json             required; the run's scenarios, verdicts, metrics
//   target.yaml              the copy of the target file the run used; when the
//                            run kept none, the file results.json names
//   <folder>/history.jsonl   each scenario's history_file (relative to the
//                            run directory), when it names one
//
// and says where each scenario's copy of its scenario file is
// (ScenarioCopyOf), which only `check` loads (it needs the oracles'
// vocabulary).
//
// What is missing or corrupt is a value, never a crash and never a silently
// empty run: results.json missing or malformed fails the whole read
// (ReadRunDirectory's error names the file, and line:column for bad JSON);
// a target or history that cannot be read is recorded in `target_error` /
// `history_errors`, each Status naming its file (a corrupt history line as
// file:line). A reader that can work around gaps (the reports) lists them
// with Gaps(); one that cannot (`check`) turns them into its own error.
//
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/history.h"
#include "model/results.h"
#include "base/status.h"
#include "model/target.h"

namespace idemproof {

struct RunDirectoryContents {
  std::string path;  // the run directory, as given
  RunResults results;

  // The target file that was read, or tried: <path>/target.yaml, else
  // results.target_file; empty when there is neither.
  std::string target_file;
  bool target_copied = false;               // target_file is the run directory's copy
  std::optional<TargetDescription> target;  // absent: see target_error
  Status target_error;                      // why `target` is absent; ok when it was read

  // Scenario index (into results.scenarios) -> its history, when read.
  std::map<std::size_t, History> histories;
  // Scenario index -> why its history_file could not be read (names the file).
  // A scenario without a history_file is in neither map.
  std::map<std::size_t, Status> history_errors;

  // The history of scenario `scenario_index`; nullptr when it has none or it
  // could not be read.
  const History* HistoryOf(std::size_t scenario_index) const;
  // Where the run directory keeps scenario `scenario_index`'s copy of its
  // scenario file: beside its history, under the same file name as
  // results.scenarios[i].file. Empty when the scenario recorded no history.
  // REQUIRES: scenario_index < results.scenarios.size().
  std::string ScenarioCopyOf(std::size_t scenario_index) const;
  // What could not be read, one line each, target first, then histories in
  // scenario order. Empty for a complete run directory.
  std::vector<std::string> Gaps() const;
};

// Reads <run_dir>/results.json (required: kNotFound when it is missing,
// kIoError when unreadable, kInvalidArgument when it is not JSON or not a
// results document), then the target file and every scenario's history.
Result<RunDirectoryContents> ReadRunDirectory(const std::string& run_dir);

}  // namespace idemproof
