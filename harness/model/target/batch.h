// `batch:` of the target file: how to run a batch job and read its result
// rows and range markers.
//
// Thread-safety: plain values; load once, then share read-only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/json_path.h"
#include "model/target/request.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;  // model/target/load_context.h

// Where the range markers of a job are and what their fields mean. A marker
// covers the half-open row-id range [from, to) of one job; rows_written and
// checksum describe the rows in that range.
struct MarkerFields {
  std::optional<JsonPath> key;   // the partition's name (reports), optional
  JsonPath from;                 // integer: first row id covered
  JsonPath to;                   // integer: one past the last row id covered
  JsonPath rows_written;         // integer: rows the marker says were written
  std::optional<JsonPath> checksum;  // string, checked when `checksum` names an algorithm
};

// How a marker's checksum is computed from the rows it covers.
//  kNone        not checked
//  kSha256Rows  lowercase hex SHA-256 of, for every row in [from, to) in
//               ascending row-id order, the row minus the declared volatile
//               paths as compact JSON with members sorted by name, each
//               followed by "\n"
//  kSameAsClean the target's own form, opaque: a marker's checksum equals
//               the clean run's marker's over the same [from, to)
enum class ChecksumAlgorithm { kNone, kSha256Rows, kSameAsClean };
// "none", "sha256-rows", "same-as-clean"
const char* ChecksumAlgorithmName(ChecksumAlgorithm algorithm);

// Batch jobs (the "batch re-run" layer): how to run a job over a data range,
// make a run fail after K rows, and read back its result rows and range
// markers. Templates in `run`/`failing_run` may use {{job}}, {{from}},
// {{to}} (integers as decimal text) and, in failing_run, {{fail_after}}; the
// result and markers calls may use {{job}}.
struct BatchDescription {
  RequestTemplate run;                        // a (re)run of rows [from, to)
  std::optional<RequestTemplate> failing_run; // the same run, failing after {{fail_after}} rows
  TargetCall result;        // one job's result (request, or command printing JSON)
  JsonPath rows;            // in the result: the array of result rows (totals form: the row count)
  JsonPath row_id;          // in a row: its identity (the data-range key); an integer
  std::vector<JsonPath> volatile_paths;  // in a row: fields a rerun may change (write stamps)
  // The totals form (no row_id): the result gives no rows, only their count
  // at `rows` and the target's own total at `sum` (a number or numeric text).
  std::optional<JsonPath> sum;
  std::optional<JsonPath> markers;       // in the result: the array of markers
  std::optional<TargetCall> markers_call;  // or a separate call for the markers...
  JsonPath markers_items;                  // ...and the array in its value ("$")
  MarkerFields marker;
  ChecksumAlgorithm checksum = ChecksumAlgorithm::kNone;
  // The marker granularity the target promises: after a failed run, a rerun
  // redoes at most this many rows already written. Absent: not checked.
  std::optional<std::int64_t> partition_rows;
  // Named changes to one run request (`variants:`, as an action's), asked
  // for by a `run_batch` step's `variant:` (a slow run a kill can cut).
  std::map<std::string, RequestVariant> variants;
  SourceMark mark;

  bool declares_markers() const { return markers.has_value() || markers_call.has_value(); }
  bool totals() const { return sum.has_value(); }
};

// Reads `batch:`.
BatchDescription ParseBatch(TargetLoadContext& cx, const YAML::Node& node);

}  // namespace idemproof
