// `batch:` (batch.h).
#include <string>
#include <vector>

#include "model/target/batch.h"
#include "model/target/parse/load_context.h"

namespace idemproof {
namespace {

const std::vector<std::string> kBatchRunVars = {"job", "from", "to"};

const std::vector<std::string> kBatchFailVars = {"job", "from", "to", "fail_after"};

const std::vector<std::string> kBatchResultVars = {"job"};

}  // namespace

// The `batch` section (see BatchDescription).
BatchDescription ParseBatch(TargetLoadContext& cx, const YAML::Node& node) {
  const std::string what = "batch";
  cx.r.CheckKeys(node,
               {"run", "failing_run", "result", "markers", "marker", "checksum", "partition_rows", "variants"},
               what);
  BatchDescription b;
  b.mark = cx.r.MarkOf(node);
  cx.section_variables = kBatchRunVars;
  b.run = cx.Request(cx.r.Required(node, "run", what), "batch.run");
  if (node["variants"]) b.variants = cx.Variants(node["variants"], what, b.run, std::nullopt);
  if (node["failing_run"]) {
    cx.section_variables = kBatchFailVars;
    b.failing_run = cx.Request(node["failing_run"], "batch.failing_run");
  }
  cx.section_variables = kBatchResultVars;
  YAML::Node result = cx.r.Required(node, "result", what);
  b.result = cx.Call(result, "batch.result", {"rows", "row_id", "volatile", "markers", "sum"});
  b.rows = cx.r.Path(cx.r.Required(result, "rows", "batch.result"), "batch.result.rows");
  // Per-row (row_id) or totals (sum): one form, said outright.
  if (result["sum"]) {
    if (result["row_id"])
      cx.r.Fail(result["sum"], "batch.result.sum: a totals result has no row_id; give row_id (rows is the array of "
                             "rows) or sum (rows is the row count)");
    if (result["volatile"])
      cx.r.Fail(result["volatile"], "batch.result.volatile: a totals result has no rows to leave fields out of");
    b.sum = cx.r.Path(result["sum"], "batch.result.sum");
  } else if (result["row_id"]) {
    b.row_id = cx.r.Path(result["row_id"], "batch.result.row_id");
  } else {
    cx.r.Fail(result, "batch.result needs row_id (rows is the array of rows) or sum (rows is the row count, sum the "
                    "target's own total of them)");
  }
  if (result["volatile"]) b.volatile_paths = cx.Paths(result["volatile"], "batch.result.volatile");
  if (result["markers"]) b.markers = cx.r.Path(result["markers"], "batch.result.markers");
  if (node["markers"]) {
    if (b.markers) cx.r.Fail(node["markers"], "batch.markers: the markers are already read from batch.result.markers; give one");
    b.markers_call = cx.Call(node["markers"], "batch.markers", {"items"});
    if (node["markers"]["items"]) b.markers_items = cx.r.Path(node["markers"]["items"], "batch.markers.items");
  }
  cx.section_variables.clear();
  if (node["marker"]) {
    YAML::Node m = node["marker"];
    cx.r.CheckKeys(m, {"key", "from", "to", "rows_written", "checksum"}, "batch.marker");
    if (m["key"]) b.marker.key = cx.r.Path(m["key"], "batch.marker.key");
    b.marker.from = cx.r.Path(cx.r.Required(m, "from", "batch.marker"), "batch.marker.from");
    b.marker.to = cx.r.Path(cx.r.Required(m, "to", "batch.marker"), "batch.marker.to");
    b.marker.rows_written = cx.r.Path(cx.r.Required(m, "rows_written", "batch.marker"), "batch.marker.rows_written");
    if (m["checksum"]) b.marker.checksum = cx.r.Path(m["checksum"], "batch.marker.checksum");
  } else if (b.declares_markers()) {
    cx.r.Fail(node, "batch: markers are declared but not their fields: add 'marker: {from, to, rows_written}'");
  }
  if (node["checksum"]) {
    std::string c = cx.r.String(node["checksum"], "batch.checksum");
    if (c == "none") b.checksum = ChecksumAlgorithm::kNone;
    else if (c == "sha256-rows") b.checksum = ChecksumAlgorithm::kSha256Rows;
    else if (c == "same-as-clean") b.checksum = ChecksumAlgorithm::kSameAsClean;
    else cx.r.Fail(node["checksum"], "batch.checksum: unknown algorithm '" + c + "'" +
                                       yaml::DidYouMean(c, {"none", "sha256-rows", "same-as-clean"}) +
                                       " (none, sha256-rows, same-as-clean)");
    if (b.checksum == ChecksumAlgorithm::kSha256Rows && b.totals())
      cx.r.Fail(node["checksum"], "batch.checksum sha256-rows hashes rows: a totals result has none (same-as-clean "
                                "compares the target's own checksums with the clean run's, none skips them)");
    if (b.checksum != ChecksumAlgorithm::kNone && !b.marker.checksum)
      cx.r.Fail(node["checksum"], "batch.checksum needs batch.marker.checksum (where a marker holds it)");
  }
  if (node["partition_rows"]) {
    long long n = cx.r.Int(node["partition_rows"], "batch.partition_rows");
    if (n < 1) cx.r.Fail(node["partition_rows"], "batch.partition_rows must be at least 1");
    b.partition_rows = n;
  }
  return b;
}

}  // namespace idemproof
