// SqliteStatement: one prepared SQLite statement, reset on scope exit, and
// SqliteExec for statements without results. Shared by the reference's three
// SQLite stores (request records, side effects, range markers), which keep
// their own connections and tables. Errors are thrown as StoreError, which
// handle_request turns into a 500 problem.
//
// Statements are prepared once per connection and SQL text and kept idle
// between uses: preparing (parsing, planning) costs more than running most
// of the stores' statements. A connection must be closed with SqliteClose,
// which finalizes them.
//
// Thread-safety: a statement as the connection it was prepared on (one
// thread at a time); the idle statements of all connections are behind one
// mutex.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "idemproof/ref/store.h"

namespace idemproof::ref {

// The idle prepared statements of every open connection, by SQL text. A
// statement in use is out of its list: the same SQL used twice at once gets
// a second statement.
class SqliteIdleStatements {
 public:
  // An idle statement of `db` for `sql`, or null (then the caller prepares one).
  static sqlite3_stmt* take(sqlite3* db, const std::string& sql) {
    std::lock_guard lock(mutex());
    auto connection = all().find(db);
    if (connection == all().end()) return nullptr;
    auto list = connection->second.find(sql);
    if (list == connection->second.end() || list->second.empty()) return nullptr;
    sqlite3_stmt* stmt = list->second.back();
    list->second.pop_back();
    return stmt;
  }
  // `stmt` (reset, no bindings) is idle again.
  static void give_back(sqlite3* db, const std::string& sql, sqlite3_stmt* stmt) {
    std::lock_guard lock(mutex());
    all()[db][sql].push_back(stmt);
  }
  // Finalizes every idle statement of `db` (it is closing).
  static void finalize_all(sqlite3* db) {
    std::lock_guard lock(mutex());
    auto connection = all().find(db);
    if (connection == all().end()) return;
    for (auto& [sql, list] : connection->second) {
      for (sqlite3_stmt* stmt : list) sqlite3_finalize(stmt);
    }
    all().erase(connection);
  }

 private:
  using BySql = std::unordered_map<std::string, std::vector<sqlite3_stmt*>>;
  static std::mutex& mutex() {
    static std::mutex mu;
    return mu;
  }
  // Never destroyed: a store of static or thread storage may close after
  // static destructors ran.
  static std::unordered_map<sqlite3*, BySql>& all() {
    static auto* statements = new std::unordered_map<sqlite3*, BySql>;
    return *statements;
  }
};

class SqliteStatement {
 public:
  // `db` must outlive the statement.
  SqliteStatement(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
    stmt_ = SqliteIdleStatements::take(db, sql);
    if (stmt_ == nullptr &&
        sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      sqlite3_finalize(stmt_);
      throw StoreError(std::string("prepare: ") + sqlite3_errmsg(db) + " in " + sql);
    }
  }
  ~SqliteStatement() {
    reset();
    SqliteIdleStatements::give_back(db_, sql_, stmt_);
  }
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
  std::string sql_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Runs `sql`, one statement (rows it yields are ignored); throws StoreError
// naming the statement. Prepared once per connection like any other: BEGIN
// and COMMIT run with every transaction.
inline void SqliteExec(sqlite3* db, const char* sql) {
  try {
    SqliteStatement statement(db, sql);
    while (statement.step()) {
    }
  } catch (const StoreError&) {
    throw StoreError(std::string(sqlite3_errmsg(db)) + " in " + sql);
  }
}

// Closes a connection opened by SqliteOpen, its idle statements first.
inline void SqliteClose(sqlite3* db) {
  SqliteIdleStatements::finalize_all(db);
  sqlite3_close(db);
}

// Opens (creating) the SQLite file at `path` the way every store of the
// reference wants it: WAL, synchronous FULL (a commit is on disk before its
// answer is sent), a 5 s busy timeout; then runs `schema` (CREATE ... IF NOT
// EXISTS). The caller owns the handle (SqliteClose). Throws StoreError.
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
