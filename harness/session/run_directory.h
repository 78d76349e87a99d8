// RunDirectory: the folder one `idemproof run` leaves behind, so a run can be
// read, re-checked offline (`idemproof check DIR`) and reported on later.
// This class writes it; session/run_contents.h is the one reader.
//
//   <out>/<run-id>/                 run-id: UTC time + seed ("20240501-120000-s1a2b")
//     target.yaml                   copy of the target file used
//     results.json                  verdicts, metrics, exit code (model/results.h)
//     junit.xml                     when JUnit reporting is built in
//     <scenario>/<file>.yaml        copy of the scenario file (same file name)
//     <scenario>/history.jsonl      written BEFORE any oracle runs
//     <scenario>/target.stdout|.stderr, and the target's own files ({{run_dir}})
//   <out>/latest -> <run-id>        symlink to the newest run
//
// Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "model/history.h"
#include "model/results.h"
#include "base/status.h"

namespace idemproof::session {

class RunDirectory {
 public:
  // Creates <out_root>/<run_id> (and out_root), points <out_root>/latest at it.
  // If the name is taken (also by a concurrent run), "-2", "-3"... is
  // appended; creating the folder is the claim. Errors: kIoError.
  static Result<RunDirectory> Create(const std::string& out_root, const std::string& run_id);

  // "<UTC yyyymmdd-hhmmss>-s<seed hex>".
  static std::string NewRunId(std::uint64_t seed);

  // Absolute path of the run folder.
  const std::string& path() const { return path_; }
  std::string id() const;

  // Creates a folder for a scenario named `name` (made unique within this run:
  // "name", "name-2"...) and returns its path relative to the run folder.
  Result<std::string> AddScenarioFolder(const std::string& name);

  // Copies `source` to <run>/<relative>.
  Status CopyIn(const std::string& source, const std::string& relative) const;
  // Writes <run>/<relative> atomically (temp file + rename).
  Status WriteFile(const std::string& relative, const std::string& content) const;
  Status WriteHistory(const std::string& relative, const History& history) const;
  Status WriteResults(const RunResults& results) const;

  std::string Absolute(const std::string& relative) const { return path_ + "/" + relative; }

 private:
  explicit RunDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
  std::set<std::string> scenario_folders_;
};

}  // namespace idemproof::session
