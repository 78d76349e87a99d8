// Batch rows: the source data a batch job reads, the result row it writes
// for each source row, the range marker of a completed range, and the
// checksum that ties a marker to its rows. Pure functions and plain values.
//
// Source row `id` (any id >= 0) is synthetic and deterministic:
// account "acct-<id mod 97>", amount ((id * 7919) mod 10007) + 1. Its result
// row adds fee = amount * 3 / 100 and the number of the run that wrote it:
// everything but `run` depends on the id alone, so a redone row equals the
// first (upsert) and a clean run gives the same rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace idemproof::ref {

struct BatchRow {
  std::int64_t id = 0;
  std::string account;
  std::int64_t amount = 0;
  std::int64_t fee = 0;
  std::int64_t run = 0;  // the run that (last) wrote it: a write stamp
};

// The result row of source row `id`, written by run `run`.
BatchRow transform_source_row(std::int64_t id, std::int64_t run);

// {"id", "account", "amount", "fee", "run"}
nlohmann::json batch_row_to_json(const BatchRow& row);

// Lowercase hex SHA-256 of, for each row in the given order, its JSON
// without "run" (members sorted, no white space) followed by "\n". The
// target file declares this as `checksum: sha256-rows` with `run` volatile.
std::string rows_checksum(const std::vector<BatchRow>& rows);

struct RangeMarker {
  std::string part;            // "60" (a partition), "0-1000" (coarse), "job" (whole batch)
  std::int64_t from = 0;       // rows [from, to)
  std::int64_t to = 0;
  std::int64_t rows_written = 0;
  std::string checksum;
  std::string done_at;         // RFC 3339
  std::int64_t run = 0;
};

// {"partition", "from", "to", "rows_written", "checksum", "done_at", "run"}
nlohmann::json range_marker_to_json(const RangeMarker& marker);

}  // namespace idemproof::ref
