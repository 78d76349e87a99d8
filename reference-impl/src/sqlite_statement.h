// SqliteStatement: one prepared SQLite statement, finalized on scope exit, and
// SqliteExec for statements without results. Shared by the reference's three
// SQLite stores (request records, side effects, range markers), which keep
// their own connections and tables. Errors are thrown as StoreError, which
// handle_request turns into a 500 problem.
//
// Thread-safety: as the connection it was prepared on (one thread at a time).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

class SqliteStatement {
 public:
  // `db` must outlive the statement.
  SqliteStatement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      throw StoreError(std::string("prepare: ") + sqlite3_errmsg(db) + " in " + sql);
    }
  }
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int i, std::int64_t v) { return check(sqlite3_bind_int64(stmt_, i, v)); }
  SqliteStatement& bind(int i, const std::string& v) {
    return check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  SqliteStatement& bind_blob(int i, const std::string& v) {
    return check(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  SqliteStatement& bind_null(int i) { return check(sqlite3_bind_null(stmt_, i)); }

  // True when a row is available; false when the statement is done.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("step: ") + sqlite3_errmsg(db_));
  }
  void run() { step(); }
  // Ready to run again with new bindings.
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int changes() const { return sqlite3_changes(db_); }

  std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  // Text or blob bytes of a column (embedded NULs kept).
  std::string text(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }

 private:
  SqliteStatement& check(int rc) {
    if (rc != SQLITE_OK) throw StoreError(std::string("bind: ") + sqlite3_errmsg(db_));
    return *this;
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs `sql` (no results); throws StoreError naming the statement.
inline void SqliteExec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : "unknown error";
    sqlite3_free(error);
    throw StoreError(message + " in " + sql);
  }
}

// Opens (creating) the SQLite file at `path` the way every store of the
// reference wants it: WAL, synchronous FULL (a commit is on disk before its
// answer is sent), a 5 s busy timeout; then runs `schema` (CREATE ... IF NOT
// EXISTS). The caller owns the handle (sqlite3_close). Throws StoreError.
inline sqlite3* SqliteOpen(const std::string& path, std::initializer_list<std::string> schema) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    throw StoreError("open " + path + ": " + message);
  }
  sqlite3_busy_timeout(db, 5000);
  try {
    SqliteExec(db, "PRAGMA journal_mode = WAL");
    SqliteExec(db, "PRAGMA synchronous = FULL");
    for (const auto& statement : schema) SqliteExec(db, statement.c_str());
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  return db;
}

}  // namespace idemproof::ref
