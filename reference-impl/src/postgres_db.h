// The reference's one libpq layer, shared by its PostgreSQL stores
// (PostgresStore: request records and business rows; the PostgreSQL engines
// of RangeMarkerStore and EffectStore): a pool of connections, positional
// parameters, result rows read like a SqliteStatement, and a transaction
// helper. Errors of libpq or the server are thrown as StoreError.
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "idemproof/ref/store.h"

namespace idemproof::ref::pg {

inline constexpr Oid kByteaOid = 17;  // pg_type.h is a server header; the OID is fixed
// Any constant: every process opening a store on the database takes this
// lock, so two concurrent CREATE ... IF NOT EXISTS never race on the catalog.
inline constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7262019318)";

// Statements more than one PostgreSQL store runs.
// Adds 3 to the stock of sku 1 (2: the stock of a sku never touched); the
// row's lock is held until commit.
inline constexpr const char* kAdjustStock =
    "INSERT INTO stock (sku, available) VALUES ($1, $2::bigint + $3::bigint)"
    " ON CONFLICT (sku) DO UPDATE SET available = stock.available + $3::bigint";

inline std::string trimmed(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message;
}

// One row of a result, read like a SqliteStatement (record_sql's readers).
class Row {
 public:
  Row(const PGresult* result, int row) : r_(result), row_(row) {}
  bool is_null(int col) const { return PQgetisnull(r_, row_, col) != 0; }
  std::int64_t int64(int col) const { return is_null(col) ? 0 : std::strtoll(PQgetvalue(r_, row_, col), nullptr, 10); }
  // Text as is; bytea (text format: \x hex) decoded to its bytes.
  std::string text(int col) const {
    if (is_null(col)) return {};
    const char* v = PQgetvalue(r_, row_, col);
    if (PQftype(r_, col) != kByteaOid) return std::string(v, static_cast<std::size_t>(PQgetlength(r_, row_, col)));
    std::size_t n = 0;
    unsigned char* bytes = PQunescapeBytea(reinterpret_cast<const unsigned char*>(v), &n);
    if (bytes == nullptr) throw StoreError("postgres: cannot decode bytea");
    std::string out(reinterpret_cast<const char*>(bytes), n);
    PQfreemem(bytes);
    return out;
  }

 private:
  const PGresult* r_;
  int row_;
};

class Result {
 public:
  explicit Result(PGresult* r) : r_(r, PQclear) {}
  int rows() const { return PQntuples(r_.get()); }
  Row row(int i) const { return Row(r_.get(), i); }
  // Rows an INSERT / UPDATE / DELETE touched.
  std::size_t affected() const { return std::strtoull(PQcmdTuples(r_.get()), nullptr, 10); }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

// Positional parameters $1, $2, ... in text format; bytes in binary format
// (bytea takes any byte; text could not hold a NUL).
class Params {
 public:
  Params& add(std::int64_t v) { return push(std::to_string(v), false, 0); }
  Params& add(const std::string& v) { return push(v, false, 0); }
  Params& add_bytes(const std::string& v) { return push(v, false, 1); }
  Params& add_null() { return push({}, true, 0); }

  // Pointer arrays for PQexecParams, valid while this object lives unchanged.
  int size() const { return static_cast<int>(values_.size()); }
  const char* const* values() {
    pointers_.clear();
    for (std::size_t i = 0; i < values_.size(); ++i) pointers_.push_back(nulls_[i] ? nullptr : values_[i].c_str());
    return pointers_.data();
  }
  const int* lengths() const { return lengths_.data(); }
  const int* formats() const { return formats_.data(); }

 private:
  Params& push(std::string v, bool null, int format) {
    lengths_.push_back(static_cast<int>(v.size()));
    values_.push_back(std::move(v));
    nulls_.push_back(null);
    formats_.push_back(format);
    return *this;
  }
  std::vector<std::string> values_;
  std::vector<bool> nulls_;
  std::vector<int> lengths_, formats_;
  std::vector<const char*> pointers_;
};

// Runs one statement; throws StoreError with the server's message.
inline Result run(PGconn* conn, const std::string& sql, Params params = {}) {
  PGresult* r = PQexecParams(conn, sql.c_str(), params.size(), nullptr, params.values(), params.lengths(),
                             params.formats(), 0);
  if (r == nullptr) throw StoreError("postgres: " + trimmed(PQerrorMessage(conn)) + " in " + sql);
  const auto status = PQresultStatus(r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::string message = trimmed(PQresultErrorMessage(r));
    PQclear(r);
    throw StoreError("postgres: " + message + " in " + sql);
  }
  return Result(r);
}

struct PoolOptions {
  std::size_t connections = 8;  // at most this many open at once
  std::chrono::milliseconds connection_wait{30'000};
  std::chrono::seconds connect_timeout{10};  // unless the URL sets connect_timeout
};

// Up to `connections` libpq connections to `url`, opened as needed. Thread-safe.
// REQUIRES: a user holds at most one connection at a time (a second acquire
// while holding one could wait for itself when the pool is exhausted).
class Pool {
 public:
  class Connection;  // one connection of the pool, given back on destruction

  // Opens nothing yet. Throws StoreError for a URL that is not postgres:// or
  // postgresql://, or a pool of zero connections.
  Pool(std::string url, PoolOptions options);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // A free connection (opening one if the pool may grow), waiting at most
  // connection_wait. Throws StoreError.
  Connection acquire();

 private:
  void give_back(PGconn* conn);
  PGconn* connect() const;

  const std::string url_;
  const PoolOptions options_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<PGconn*> idle_;  // guarded by mu_
  std::size_t open_ = 0;       // guarded by mu_: idle + in use + being opened
};

class Pool::Connection {
 public:
  Connection(Pool& pool, PGconn* conn) : pool_(&pool), conn_(conn) {}
  Connection(Connection&& other) noexcept : pool_(other.pool_), conn_(std::exchange(other.conn_, nullptr)) {}
  Connection& operator=(Connection&&) = delete;
  ~Connection() {
    if (conn_ != nullptr) pool_->give_back(conn_);
  }
  PGconn* get() const { return conn_; }

 private:
  Pool* pool_;
  PGconn* conn_;
};

// Runs `body(conn)` between BEGIN and COMMIT on a connection of `pool`;
// anything it throws rolls back and propagates. Returns what `body` returns.
template <typename Body>
auto in_transaction(Pool& pool, Body body) {
  auto conn = pool.acquire();
  PGconn* c = conn.get();
  run(c, "BEGIN");
  try {
    auto out = body(c);
    run(c, "COMMIT");
    return out;
  } catch (...) {
    // Best effort; a connection still in a transaction is dropped by give_back.
    PQclear(PQexec(c, "ROLLBACK"));
    throw;
  }
}

// Creates `schema` (CREATE ... IF NOT EXISTS statements) in one transaction
// under kSchemaLock, so processes opening at once do not race on the catalog.
inline void create_schema(Pool& pool, const std::vector<std::string>& schema) {
  in_transaction(pool, [&](PGconn* c) {
    run(c, kSchemaLock);
    for (const std::string& statement : schema) run(c, statement);
    return 0;
  });
}

}  // namespace idemproof::ref::pg
