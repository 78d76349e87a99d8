// RangeMarkerStore: the durable state of batch jobs, in the service's SQLite
// file on a connection of its own or (--store postgres://) in the
// PostgresStore's database on its pool, in tables apart from the idempotency
// records (the TTL sweep never touches them: markers live as long as the
// data they describe).
//
//   batch_jobs         job -> runs started (numbers each run)
//   batch_results      the job's result rows, PRIMARY KEY (job, row_id):
//                      written by upsert, so a redone row is the same row
//   batch_results_log  the same columns without a key: plain inserts (the
//                      `no-range-marker` / `batch-id-in-request-table` flaws)
//   range_markers      PRIMARY KEY (job, part): from, to, rows_written,
//                      checksum, done_at, run of a completed range
//
// Every method is one transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: READ
// COMMITTED, the upserts' row locks), so a partition's rows and its marker
// commit together. Thread-safe (SQLite: one mutex; PostgreSQL: a pooled
// connection per method). Throws StoreError on a database failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "idemproof/ref/batch_rows.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

class PostgresStore;

// How rows reach the result table.
enum class RowWrite { upsert, insert };

class RangeMarkerStore {
 public:
  // Opens (creating the tables if needed) the SQLite file at `path`.
  explicit RangeMarkerStore(const std::string& path);
  // On `database`'s PostgreSQL database and pool (creating the tables if
  // needed). REQUIRES: `database` outlives this store.
  explicit RangeMarkerStore(PostgresStore& database);
  ~RangeMarkerStore();
  RangeMarkerStore(const RangeMarkerStore&) = delete;
  RangeMarkerStore& operator=(const RangeMarkerStore&) = delete;

  // Starts a run of `job` (creating the job): returns its number, 1 for the first.
  std::int64_t start_run(const std::string& job);
  // Runs started for `job`; nullopt for a job never run.
  std::optional<std::int64_t> runs(const std::string& job);

  // The marker of (job, part), if any.
  std::optional<RangeMarker> marker(const std::string& job, const std::string& part);
  // Writes `rows` and, when given, upserts `marker`, in one transaction.
  void write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
             const std::optional<RangeMarker>& marker);

  // Every result row of `job` (both tables), by row id; every marker, by from.
  std::vector<BatchRow> rows(const std::string& job);
  std::vector<RangeMarker> markers(const std::string& job);

  // The methods above on one database (src/range_marker_engine.h).
  class Engine;

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace idemproof::ref
