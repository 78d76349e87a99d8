// Literal batch histories: a job's runs and the results read after each one,
// written by hand the way the runtime records them (history.h), with result
// documents shaped like the reference service's GET /jobs/{job}/result.
// Each flaw shape of the batch layer is a few lines with these helpers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/history.h"
#include "model/target.h"

namespace idemproof::testing {

// A target with a batch section: rows at $.rows identified by $.id, the
// write stamp $.run volatile, markers at $.markers with sha256-rows
// checksums, partitions of 10 rows. Parsed by the real loader.
const TargetDescription& BatchTarget();

// One result row as the reference writes it: id, a derived amount, the run
// that wrote it.
nlohmann::json ResultRowJson(std::int64_t id, int run);
// Rows [from, to) written by `run`.
nlohmann::json RowsJson(std::int64_t from, std::int64_t to, int run);
// Concatenates row arrays (duplicates are kept: a doubled range).
nlohmann::json Concat(std::initializer_list<nlohmann::json> parts);
// Correct markers (rows_written and checksum computed from `rows`) for the
// partitions of 10 rows in [from, to), named by their number.
nlohmann::json MarkersJson(const nlohmann::json& rows, std::int64_t from, std::int64_t to);

class BatchHistory {
 public:
  // A run of `job` over [from, to): invoke + ok with `status` (and the
  // replay marker when `replayed`); status 0: invoke + info, no answer (a
  // run cut off by a kill). Returns the invoke's index.
  std::int64_t Run(const std::string& job, const std::string& role, std::int64_t from, std::int64_t to,
                   std::optional<std::int64_t> fail_after, int status, bool replayed = false,
                   const std::string& of = "");
  // The job's result read after the run at `after`.
  BatchHistory& Result(const std::string& job, std::int64_t after, const nlohmann::json& rows,
                       const nlohmann::json& markers);
  // The same with the whole document the result call returned (a totals form).
  BatchHistory& ResultDoc(const std::string& job, std::int64_t after, const nlohmann::json& doc);
  // A result read that failed.
  BatchHistory& ResultFailed(const std::string& job, std::int64_t after, const std::string& error);

  const History& history() const { return h_; }

 private:
  History h_;
  int t_ = 0;
};

}  // namespace idemproof::testing
