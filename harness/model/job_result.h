// JobResult: one batch job's result as the target reports it (rows and range
// markers), read through the target's batch declaration, and the
// comparisons the range-continuity oracle and the rerun-diff metric make:
// a rerun's rows against a clean run's, row by row; the rows a rerun
// rewrote; a marker's rows and checksum.
//
// Rows are identified by an integer row id (markers cover id ranges). Two
// rows are "equal" when equal minus the declared volatile paths (write
// stamps); "unchanged" when equal as a whole.
//
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/target/batch.h"

namespace idemproof {

struct ResultRow {
  std::int64_t id = 0;
  nlohmann::json full;    // as reported
  nlohmann::json stable;  // minus the volatile paths
};

struct RangeMarker {
  std::string key;        // the partition's name, or "[from, to)" when none declared
  std::int64_t from = 0;
  std::int64_t to = 0;
  std::int64_t rows_written = 0;
  // As reported, compared as a JSON value (42 == 42, "42" != 42): text or a
  // number; absent when the marker has none or the target declares no
  // checksum algorithm (ReadJobResult refuses any other type).
  std::optional<nlohmann::json> checksum;
  nlohmann::json raw;     // as reported
};

// A totals-form result (BatchDescription::totals()): the row count and the
// target's own sum, as reported.
struct JobTotals {
  std::int64_t rows = 0;
  nlohmann::json sum;  // a number, or numeric text (compared as reported)

  bool operator==(const JobTotals& o) const { return rows == o.rows && sum == o.sum; }
  std::string Text() const;  // "1000 rows, sum 5004870"
};

struct JobResult {
  std::vector<ResultRow> rows;  // sorted by id (stable: copies of one id keep report order); none in totals form
  std::optional<JobTotals> totals;  // the totals form only
  std::optional<std::vector<RangeMarker>> markers;  // absent: the target declares none

  // Rows with from <= id < to, in id order.
  std::vector<const ResultRow*> RowsIn(std::int64_t from, std::int64_t to) const;
};

// Reads `result` (the result call's value) and `markers_doc` (the separate
// markers call's value, when declared) through `batch`. kInvalidArgument
// names what is missing or mistyped (e.g. "row 3: $.id is not an integer",
// "marker 4: $.checksum is an object, not text or a number").
Result<JobResult> ReadJobResult(const BatchDescription& batch, const nlohmann::json& result,
                                const std::optional<nlohmann::json>& markers_doc);

// The checksum `algorithm` gives for `rows` (see ChecksumAlgorithm); "" unless
// kSha256Rows (the other forms are not computed by the tool).
std::string RowsChecksum(ChecksumAlgorithm algorithm, const std::vector<const ResultRow*>& rows);

// A rerun's rows against a clean run's, per row id.
struct RowComparison {
  std::vector<std::int64_t> missing;    // in the clean run, absent from the rerun
  std::vector<std::int64_t> extra;      // in the rerun, absent from the clean run
  std::vector<std::int64_t> doubled;    // more copies in the rerun than in the clean run
  std::vector<std::int64_t> differing;  // same copies, but a row differs (minus volatile)
  std::int64_t extra_copies = 0;        // copies beyond the clean run's, over `doubled`
  std::int64_t max_copies = 0;          // most copies of one id in the rerun

  // Row ids whose rows differ in any way: the "rerun diff rows" metric.
  std::int64_t diff_rows() const;
  bool equal() const { return diff_rows() == 0; }
};
RowComparison CompareRows(const JobResult& rerun, const JobResult& clean);

// Row ids present in `before` whose rows (as a whole, volatile paths
// included) are not the same in `after`: the rows a run in between rewrote.
std::vector<std::int64_t> RewrittenRows(const JobResult& before, const JobResult& after);

// Every change of the markers from `before` to `after`, one phrase ("changed
// the markers of 2 partitions (e.g. 42)"), or "" when none.
std::string MarkerChanges(const JobResult& before, const JobResult& after);

// The ids in [from, to) no marker covers, and those several cover.
struct MarkerCoverage {
  std::vector<std::int64_t> uncovered, overlapped;
};
MarkerCoverage CoverageOf(const std::vector<RangeMarker>& markers, std::int64_t from, std::int64_t to);

// "0–599" / "3, 7–9, 12" (sorted, duplicates removed); at most `max_ranges`
// ranges, then ", …".
std::string FormatIdRanges(std::vector<std::int64_t> ids, std::size_t max_ranges = 4);

// The names of the markers (by `markers`' keys) covering `ids`, as ranges
// when the names are integers: "partitions 60–99"; "" when none covers them.
std::string PartitionsOf(const std::vector<std::int64_t>& ids, const std::vector<RangeMarker>& markers);

}  // namespace idemproof
