#include "idemproof/ref/range_marker_store.h"

#include <sqlite3.h>

#include <algorithm>
#include <mutex>

#include "range_marker_engine.h"
#include "sqlite_statement.h"

namespace idemproof::ref {
namespace {

using Stmt = SqliteStatement;
constexpr char P = '?';

RangeMarker read_marker(const Stmt& s) {
  return RangeMarker{s.text(0), s.int64(1), s.int64(2), s.int64(3), s.text(4), s.text(5), s.int64(6)};
}

// The SQLite engine: one connection of its own, one transaction at a time.
class SqliteRangeMarkerEngine final : public RangeMarkerStore::Engine {
 public:
  explicit SqliteRangeMarkerEngine(const std::string& path)
      : db_(SqliteOpen(path, {
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
            " PRIMARY KEY (job, part)) WITHOUT ROWID"})) {}
  ~SqliteRangeMarkerEngine() override { SqliteClose(db_); }

  std::int64_t start_run(const std::string& job) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, "INSERT INTO batch_jobs (job, runs) VALUES (?1, 1)"
                " ON CONFLICT (job) DO UPDATE SET runs = runs + 1 RETURNING runs");
    s.bind(1, job);
    if (!s.step()) throw StoreError("start_run: no row returned");
    return s.int64(0);
  }

  std::optional<std::int64_t> runs(const std::string& job) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, marker_sql::runs(P));
    s.bind(1, job);
    if (!s.step()) return std::nullopt;
    return s.int64(0);
  }

  std::optional<RangeMarker> marker(const std::string& job, const std::string& part) override {
    std::lock_guard lock(mu_);
    Stmt s(db_, marker_sql::marker(P));
    s.bind(1, job).bind(2, part);
    if (!s.step()) return std::nullopt;
    return read_marker(s);
  }

  void write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
             const std::optional<RangeMarker>& marker) override {
    std::lock_guard lock(mu_);
    SqliteExec(db_, "BEGIN IMMEDIATE");
    try {
      Stmt s(db_, marker_sql::write_row(P, how));
      for (const auto& r : rows) {
        s.bind(1, job).bind(2, r.id).bind(3, r.account).bind(4, r.amount).bind(5, r.fee).bind(6, r.run);
        s.step();
        s.reset();
      }
      if (marker) {
        Stmt m(db_, marker_sql::upsert_marker(P));
        m.bind(1, job).bind(2, marker->part).bind(3, marker->from).bind(4, marker->to);
        m.bind(5, marker->rows_written).bind(6, marker->checksum).bind(7, marker->done_at).bind(8, marker->run);
        m.step();
      }
      SqliteExec(db_, "COMMIT");
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  std::vector<BatchRow> rows(const std::string& job) override {
    std::lock_guard lock(mu_);
    std::vector<BatchRow> out;
    for (const char* table : {"batch_results", "batch_results_log"}) {
      Stmt s(db_, marker_sql::rows(P, table));
      s.bind(1, job);
      while (s.step()) out.push_back(BatchRow{s.int64(0), s.text(1), s.int64(2), s.int64(3), s.int64(4)});
    }
    return out;
  }

  std::vector<RangeMarker> markers(const std::string& job) override {
    std::lock_guard lock(mu_);
    std::vector<RangeMarker> out;
    Stmt s(db_, marker_sql::markers(P));
    s.bind(1, job);
    while (s.step()) out.push_back(read_marker(s));
    return out;
  }

 private:
  std::mutex mu_;
  sqlite3* db_ = nullptr;
};

}  // namespace

RangeMarkerStore::RangeMarkerStore(const std::string& path)
    : engine_(std::make_unique<SqliteRangeMarkerEngine>(path)) {}
RangeMarkerStore::RangeMarkerStore(PostgresStore& database)
    : engine_(make_postgres_range_marker_engine(database)) {}
RangeMarkerStore::~RangeMarkerStore() = default;

std::int64_t RangeMarkerStore::start_run(const std::string& job) { return engine_->start_run(job); }
std::optional<std::int64_t> RangeMarkerStore::runs(const std::string& job) { return engine_->runs(job); }
std::optional<RangeMarker> RangeMarkerStore::marker(const std::string& job, const std::string& part) {
  return engine_->marker(job, part);
}
void RangeMarkerStore::write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
                             const std::optional<RangeMarker>& marker) {
  engine_->write(job, rows, how, marker);
}
std::vector<BatchRow> RangeMarkerStore::rows(const std::string& job) {
  // Both tables' rows (each by row id), merged by row id.
  std::vector<BatchRow> out = engine_->rows(job);
  std::stable_sort(out.begin(), out.end(), [](const BatchRow& a, const BatchRow& b) { return a.id < b.id; });
  return out;
}
std::vector<RangeMarker> RangeMarkerStore::markers(const std::string& job) { return engine_->markers(job); }

}  // namespace idemproof::ref
