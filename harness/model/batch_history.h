// Batch history: the batch job runs and result snapshots of a history, as
// typed values (the event shapes are the contract in history.h). A run is an
// invoke/completion pair of f "batch"; a snapshot is the job's result read
// right after one run (f "batch_result").
//
// Thread-safety: views into a const History; the History must outlive them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/history.h"
#include "model/operation.h"

namespace idemproof {

enum class BatchRole { kRun, kRerun, kClean };
const char* BatchRoleName(BatchRole role);  // "run", "rerun", "clean"

struct BatchRun {
  Operation op;
  std::string job;       // concrete
  std::string job_name;  // symbolic ("j1")
  BatchRole role = BatchRole::kRun;
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::optional<std::int64_t> fail_after;
  std::string of;        // clean runs: symbolic job whose range it repeats

  std::int64_t index() const { return op.invoke->index; }
  // The answer, when one arrived.
  std::optional<HttpAnswer> answer() const { return op.answer(); }
  bool answered_2xx() const;
};

struct JobSnapshot {
  std::string job;
  std::string job_name;
  std::int64_t after = -1;  // index of the batch run's invoke it follows
  std::int64_t index = -1;  // index of the snapshot's invoke
  bool ok = false;          // false: the call failed (error says why)
  nlohmann::json result;    // the result call's value
  std::optional<nlohmann::json> markers;  // the separate markers call's value
  std::string error;
};

// Every batch run, in invoke order. Malformed events are skipped.
std::vector<BatchRun> BatchRuns(const History& history);
// Every result snapshot that completed (ok or not), in invoke order.
std::vector<JobSnapshot> JobSnapshots(const History& history);
// The snapshot taken after `run`, if any.
const JobSnapshot* SnapshotAfter(const std::vector<JobSnapshot>& snapshots, const BatchRun& run);

}  // namespace idemproof
