// RangeMarkerStore::Engine: RangeMarkerStore's methods on one database. Two
// engines: SQLite (range_marker_store.cpp) and PostgreSQL
// (postgres_range_marker_store.cpp), each with the contract of
// range_marker_store.h; the statements they share are below ('?' or '$'
// placeholders, as record_sql.h).
#pragma once

#include <memory>
#include <string>

#include "idemproof/ref/range_marker_store.h"

namespace idemproof::ref {

class RangeMarkerStore::Engine {
 public:
  virtual ~Engine() = default;
  virtual std::int64_t start_run(const std::string& job) = 0;
  virtual std::optional<std::int64_t> runs(const std::string& job) = 0;
  virtual std::optional<RangeMarker> marker(const std::string& job, const std::string& part) = 0;
  virtual void write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
                     const std::optional<RangeMarker>& marker) = 0;
  virtual std::vector<BatchRow> rows(const std::string& job) = 0;
  virtual std::vector<RangeMarker> markers(const std::string& job) = 0;
};

// The PostgreSQL engine on `database`'s pool (creates its tables). Throws StoreError.
std::unique_ptr<RangeMarkerStore::Engine> make_postgres_range_marker_engine(PostgresStore& database);

namespace marker_sql {

inline constexpr const char* kMarkerColumns = "part, range_from, range_to, rows_written, checksum, done_at, run";

inline std::string param(char prefix, int i) { return prefix + std::to_string(i); }

// 1 job.
inline std::string runs(char p) { return "SELECT runs FROM batch_jobs WHERE job = " + param(p, 1); }
// 1 job, 2 part.
inline std::string marker(char p) {
  return std::string("SELECT ") + kMarkerColumns + " FROM range_markers WHERE job = " + param(p, 1) +
         " AND part = " + param(p, 2);
}
// 1 job.
inline std::string markers(char p) {
  return std::string("SELECT ") + kMarkerColumns + " FROM range_markers WHERE job = " + param(p, 1) +
         " ORDER BY range_from, part";
}
// 1 job, 2 row id, 3 account, 4 amount, 5 fee, 6 run: upsert keeps one row
// per id; insert (the log table) adds a copy each time.
inline std::string write_row(char p, RowWrite how) {
  const std::string values = " VALUES (" + param(p, 1) + ", " + param(p, 2) + ", " + param(p, 3) + ", " +
                             param(p, 4) + ", " + param(p, 5) + ", " + param(p, 6) + ")";
  if (how == RowWrite::insert) {
    return "INSERT INTO batch_results_log (job, row_id, account, amount, fee, run)" + values;
  }
  return "INSERT INTO batch_results (job, row_id, account, amount, fee, run)" + values +
         " ON CONFLICT (job, row_id) DO UPDATE SET account = excluded.account, amount = excluded.amount,"
         " fee = excluded.fee, run = excluded.run";
}
// 1 job, 2 part, 3 from, 4 to, 5 rows written, 6 checksum, 7 done at, 8 run.
inline std::string upsert_marker(char p) {
  std::string values;
  for (int i = 1; i <= 8; ++i) values += (i > 1 ? ", " : "") + param(p, i);
  return "INSERT INTO range_markers (job, part, range_from, range_to, rows_written, checksum, done_at, run)"
         " VALUES (" + values + ") ON CONFLICT (job, part) DO UPDATE SET"
         " range_from = excluded.range_from, range_to = excluded.range_to,"
         " rows_written = excluded.rows_written, checksum = excluded.checksum,"
         " done_at = excluded.done_at, run = excluded.run";
}
// 1 job; `table` batch_results or batch_results_log.
inline std::string rows(char p, const std::string& table) {
  return "SELECT row_id, account, amount, fee, run FROM " + table + " WHERE job = " + param(p, 1) +
         " ORDER BY row_id";
}

}  // namespace marker_sql
}  // namespace idemproof::ref
