#include "idemproof/ref/range_marker_store.h"

#include <sqlite3.h>

#include "sqlite_statement.h"

#include <algorithm>

namespace idemproof::ref {
namespace {

using Stmt = SqliteStatement;

constexpr const char* kMarkerColumns = "part, range_from, range_to, rows_written, checksum, done_at, run";

RangeMarker read_marker(const Stmt& s) {
  return RangeMarker{s.text(0), s.int64(1), s.int64(2), s.int64(3), s.text(4), s.text(5), s.int64(6)};
}

}  // namespace

RangeMarkerStore::RangeMarkerStore(const std::string& path) {
  db_ = SqliteOpen(path, {
      "CREATE TABLE IF NOT EXISTS batch_jobs (job TEXT PRIMARY KEY, runs INTEGER NOT NULL)",
      "CREATE TABLE IF NOT EXISTS batch_results (job TEXT NOT NULL, row_id INTEGER NOT NULL,"
       " account TEXT NOT NULL, amount INTEGER NOT NULL, fee INTEGER NOT NULL, run INTEGER NOT NULL,"
       " PRIMARY KEY (job, row_id)) WITHOUT ROWID",
      "CREATE TABLE IF NOT EXISTS batch_results_log (job TEXT NOT NULL, row_id INTEGER NOT NULL,"
       " account TEXT NOT NULL, amount INTEGER NOT NULL, fee INTEGER NOT NULL, run INTEGER NOT NULL)",
      "CREATE INDEX IF NOT EXISTS batch_results_log_job ON batch_results_log (job, row_id)",
      "CREATE TABLE IF NOT EXISTS range_markers (job TEXT NOT NULL, part TEXT NOT NULL,"
       " range_from INTEGER NOT NULL, range_to INTEGER NOT NULL, rows_written INTEGER NOT NULL,"
       " checksum TEXT NOT NULL, done_at TEXT NOT NULL, run INTEGER NOT NULL,"
       " PRIMARY KEY (job, part)) WITHOUT ROWID"});
}

RangeMarkerStore::~RangeMarkerStore() { SqliteClose(db_); }

void RangeMarkerStore::exec(const char* sql) { SqliteExec(db_, sql); }

std::int64_t RangeMarkerStore::start_run(const std::string& job) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "INSERT INTO batch_jobs (job, runs) VALUES (?1, 1)"
              " ON CONFLICT (job) DO UPDATE SET runs = runs + 1 RETURNING runs");
  s.bind(1, job);
  if (!s.step()) throw StoreError("start_run: no row returned");
  return s.int64(0);
}

std::optional<std::int64_t> RangeMarkerStore::runs(const std::string& job) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT runs FROM batch_jobs WHERE job = ?1");
  s.bind(1, job);
  if (!s.step()) return std::nullopt;
  return s.int64(0);
}

std::optional<RangeMarker> RangeMarkerStore::marker(const std::string& job, const std::string& part) {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string("SELECT ") + kMarkerColumns + " FROM range_markers WHERE job = ?1 AND part = ?2").c_str());
  s.bind(1, job).bind(2, part);
  if (!s.step()) return std::nullopt;
  return read_marker(s);
}

void RangeMarkerStore::write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
                             const std::optional<RangeMarker>& marker) {
  std::lock_guard lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    Stmt s(db_, how == RowWrite::upsert
                    ? "INSERT INTO batch_results (job, row_id, account, amount, fee, run)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (job, row_id) DO UPDATE SET"
                      " account = excluded.account, amount = excluded.amount, fee = excluded.fee,"
                      " run = excluded.run"
                    : "INSERT INTO batch_results_log (job, row_id, account, amount, fee, run)"
                      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    for (const auto& r : rows) {
      s.bind(1, job).bind(2, r.id).bind(3, r.account).bind(4, r.amount).bind(5, r.fee).bind(6, r.run);
      s.step();
      s.reset();
    }
    if (marker) {
      Stmt m(db_, "INSERT INTO range_markers (job, part, range_from, range_to, rows_written, checksum, done_at, run)"
                  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (job, part) DO UPDATE SET"
                  " range_from = excluded.range_from, range_to = excluded.range_to,"
                  " rows_written = excluded.rows_written, checksum = excluded.checksum,"
                  " done_at = excluded.done_at, run = excluded.run");
      m.bind(1, job).bind(2, marker->part).bind(3, marker->from).bind(4, marker->to);
      m.bind(5, marker->rows_written).bind(6, marker->checksum).bind(7, marker->done_at).bind(8, marker->run);
      m.step();
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<BatchRow> RangeMarkerStore::rows(const std::string& job) {
  std::lock_guard lock(mu_);
  std::vector<BatchRow> out;
  for (const char* table : {"batch_results", "batch_results_log"}) {
    Stmt s(db_, (std::string("SELECT row_id, account, amount, fee, run FROM ") + table +
                 " WHERE job = ?1 ORDER BY row_id")
                    .c_str());
    s.bind(1, job);
    while (s.step()) out.push_back(BatchRow{s.int64(0), s.text(1), s.int64(2), s.int64(3), s.int64(4)});
  }
  std::stable_sort(out.begin(), out.end(), [](const BatchRow& a, const BatchRow& b) { return a.id < b.id; });
  return out;
}

std::vector<RangeMarker> RangeMarkerStore::markers(const std::string& job) {
  std::lock_guard lock(mu_);
  std::vector<RangeMarker> out;
  Stmt s(db_, (std::string("SELECT ") + kMarkerColumns + " FROM range_markers WHERE job = ?1 ORDER BY range_from, part").c_str());
  s.bind(1, job);
  while (s.step()) out.push_back(read_marker(s));
  return out;
}

}  // namespace idemproof::ref
