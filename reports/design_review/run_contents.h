// RunDirectoryContents: everything a design-review report is rendered from,
// read from one run directory (see harness/runtime/run_directory.h):
// results.json, the target file copied beside it (target.yaml) and every
// scenario's history (ScenarioResult::history_file, relative to the run
// directory).
//
// Reading is forgiving past results.json: a run interrupted half-way, a
// history that cannot be read or a target file that no longer loads still
// gives a report; each such gap is one line in `gaps` and the report says so.
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
  std::string path;                        // the run directory, as given
  RunResults results;
  std::optional<TargetDescription> target; // absent: target.yaml missing or unreadable
  // Scenario index (into results.scenarios) -> its history; absent when the
  // scenario has no history file or it could not be read.
  std::map<std::size_t, History> histories;
  std::vector<std::string> gaps;           // what could not be read, one line each

  const History* HistoryOf(std::size_t scenario_index) const;
};

// Reads <run_dir>/results.json (required: kNotFound / kIoError /
// kInvalidArgument when missing or malformed), then the target file
// (<run_dir>/target.yaml, else results.target_file) and the histories.
Result<RunDirectoryContents> ReadRunDirectory(const std::string& run_dir);

}  // namespace idemproof
