// RangeMarkerStore's PostgreSQL engine (range_marker_engine.h): the batch
// tables of range_marker_store.h in the PostgresStore's database, on its
// pool. Each method is one transaction at READ COMMITTED; the upserts' row
// locks order concurrent writers of one row (instances sharing the database).
#include <libpq-fe.h>

#include "idemproof/ref/postgres_store.h"
#include "postgres_db.h"
#include "range_marker_engine.h"

namespace idemproof::ref {
namespace {

using pg::Params;
using pg::Row;
using pg::run;
constexpr char P = '$';

RangeMarker read_marker(const Row& s) {
  return RangeMarker{s.text(0), s.int64(1), s.int64(2), s.int64(3), s.text(4), s.text(5), s.int64(6)};
}

class PostgresRangeMarkerEngine final : public RangeMarkerStore::Engine {
 public:
  explicit PostgresRangeMarkerEngine(PostgresStore& database) : pool_(database.pool()) {
    pg::create_schema(pool_, {
        "CREATE TABLE IF NOT EXISTS batch_jobs (job TEXT PRIMARY KEY, runs BIGINT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS batch_results (job TEXT NOT NULL, row_id BIGINT NOT NULL,"
        " account TEXT NOT NULL, amount BIGINT NOT NULL, fee BIGINT NOT NULL, run BIGINT NOT NULL,"
        " PRIMARY KEY (job, row_id))",
        "CREATE TABLE IF NOT EXISTS batch_results_log (job TEXT NOT NULL, row_id BIGINT NOT NULL,"
        " account TEXT NOT NULL, amount BIGINT NOT NULL, fee BIGINT NOT NULL, run BIGINT NOT NULL)",
        "CREATE INDEX IF NOT EXISTS batch_results_log_job ON batch_results_log (job, row_id)",
        "CREATE TABLE IF NOT EXISTS range_markers (job TEXT NOT NULL, part TEXT NOT NULL,"
        " range_from BIGINT NOT NULL, range_to BIGINT NOT NULL, rows_written BIGINT NOT NULL,"
        " checksum TEXT NOT NULL, done_at TEXT NOT NULL, run BIGINT NOT NULL,"
        " PRIMARY KEY (job, part))"});
  }

  std::int64_t start_run(const std::string& job) override {
    return pg::in_transaction(pool_, [&](PGconn* c) {
      auto r = run(c, "INSERT INTO batch_jobs (job, runs) VALUES ($1, 1)"
                      " ON CONFLICT (job) DO UPDATE SET runs = batch_jobs.runs + 1 RETURNING runs",
                   Params().add(job));
      if (r.rows() == 0) throw StoreError("start_run: no row returned");
      return r.row(0).int64(0);
    });
  }

  std::optional<std::int64_t> runs(const std::string& job) override {
    return pg::in_transaction(pool_, [&](PGconn* c) -> std::optional<std::int64_t> {
      auto r = run(c, marker_sql::runs(P), Params().add(job));
      if (r.rows() == 0) return std::nullopt;
      return r.row(0).int64(0);
    });
  }

  std::optional<RangeMarker> marker(const std::string& job, const std::string& part) override {
    return pg::in_transaction(pool_, [&](PGconn* c) -> std::optional<RangeMarker> {
      auto r = run(c, marker_sql::marker(P), Params().add(job).add(part));
      if (r.rows() == 0) return std::nullopt;
      return read_marker(r.row(0));
    });
  }

  void write(const std::string& job, const std::vector<BatchRow>& rows, RowWrite how,
             const std::optional<RangeMarker>& marker) override {
    pg::in_transaction(pool_, [&](PGconn* c) {
      const std::string sql = marker_sql::write_row(P, how);
      for (const auto& r : rows) {
        run(c, sql, Params().add(job).add(r.id).add(r.account).add(r.amount).add(r.fee).add(r.run));
      }
      if (marker) {
        run(c, marker_sql::upsert_marker(P),
            Params()
                .add(job)
                .add(marker->part)
                .add(marker->from)
                .add(marker->to)
                .add(marker->rows_written)
                .add(marker->checksum)
                .add(marker->done_at)
                .add(marker->run));
      }
      return 0;
    });
  }

  std::vector<BatchRow> rows(const std::string& job) override {
    return pg::in_transaction(pool_, [&](PGconn* c) {
      std::vector<BatchRow> out;
      for (const char* table : {"batch_results", "batch_results_log"}) {
        auto r = run(c, marker_sql::rows(P, table), Params().add(job));
        for (int i = 0; i < r.rows(); ++i) {
          const Row row = r.row(i);
          out.push_back(BatchRow{row.int64(0), row.text(1), row.int64(2), row.int64(3), row.int64(4)});
        }
      }
      return out;
    });
  }

  std::vector<RangeMarker> markers(const std::string& job) override {
    return pg::in_transaction(pool_, [&](PGconn* c) {
      std::vector<RangeMarker> out;
      auto r = run(c, marker_sql::markers(P), Params().add(job));
      for (int i = 0; i < r.rows(); ++i) out.push_back(read_marker(r.row(i)));
      return out;
    });
  }

 private:
  pg::Pool& pool_;
};

}  // namespace

std::unique_ptr<RangeMarkerStore::Engine> make_postgres_range_marker_engine(PostgresStore& database) {
  return std::make_unique<PostgresRangeMarkerEngine>(database);
}

}  // namespace idemproof::ref
