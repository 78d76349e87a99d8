#include "idemproof/ref/sqlite_store.h"

#include <sqlite3.h>

#include "record_sql.h"
#include "sqlite_statement.h"

#include <utility>

namespace idemproof::ref {
namespace {

using Statement = SqliteStatement;
using record_sql::kOrderColumns;
using record_sql::read_order;
using record_sql::read_record;

constexpr const char* kRecordsSchema =
    "(method TEXT NOT NULL, route TEXT NOT NULL, key TEXT NOT NULL,"
    " fingerprint TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),"
    " owner TEXT NOT NULL, lease_expires_ns INTEGER NOT NULL,"
    " status INTEGER, content_type TEXT, location TEXT, body BLOB,"
    " completed_ns INTEGER, expires_ns INTEGER";

}  // namespace

class SqliteStore::Transaction final : public StoreTransaction {
 public:
  Transaction(sqlite3* db, const std::string& records_table, ClaimDiscipline discipline)
      : db_(db), records_(records_table), discipline_(discipline) {}

  bool complete(const RequestScope& scope, const std::string& owner,
                const StoredResponse& response, TimePoint completed_at, TimePoint expires_at,
                Fencing fencing) override {
    const auto c = record_sql::complete(records_, '?', discipline_, fencing);
    Statement s(db_, c.sql);
    s.bind(1, std::int64_t{response.status})
        .bind(2, response.content_type)
        .bind(3, response.location)
        .bind_blob(4, response.body)
        .bind(5, to_epoch_ns(completed_at))
        .bind(6, to_epoch_ns(expires_at))
        .bind(7, scope.method)
        .bind(8, scope.route_template)
        .bind(9, scope.key);
    if (c.binds_owner) s.bind(10, owner);
    s.run();
    return s.changes() > 0;
  }

  Order insert_order(const OrderDraft& draft) override {
    Statement s(db_,
                "INSERT INTO orders (biz_no, sku, qty, amount, address, status, created_at)"
                " VALUES (?1, ?2, ?3, ?4, NULL, 'created', ?5)");
    s.bind(1, draft.biz_no).bind(2, draft.sku).bind(3, draft.qty).bind(4, draft.amount)
        .bind(5, draft.created_at);
    s.run();
    return created_order(sqlite3_last_insert_rowid(db_), draft);
  }

  std::optional<Order> find_order(std::int64_t id) override {
    Statement s(db_, std::string("SELECT ") + kOrderColumns + " FROM orders WHERE id = ?1");
    s.bind(1, id);
    if (!s.step()) return std::nullopt;
    return read_order(s);
  }

  std::vector<Order> find_orders(const std::optional<std::string>& biz_no) override {
    std::string sql = std::string("SELECT ") + kOrderColumns + " FROM orders";
    if (biz_no) sql += " WHERE biz_no = ?1";
    sql += " ORDER BY id";
    Statement s(db_, sql);
    if (biz_no) s.bind(1, *biz_no);
    std::vector<Order> out;
    while (s.step()) out.push_back(read_order(s));
    return out;
  }

  void update_order(const Order& order) override {
    Statement s(db_, "UPDATE orders SET address = ?1, status = ?2 WHERE id = ?3");
    if (order.address) {
      s.bind(1, *order.address);
    } else {
      s.bind_null(1);
    }
    s.bind(2, order.status).bind(3, order.id);
    s.run();
  }

  Movement insert_movement(MovementKind kind, const Movement& movement) override {
    Statement s(db_, "INSERT INTO " + std::string(movement_table(kind)) +
                         " (biz_no, amount, created_at) VALUES (?1, ?2, ?3)");
    s.bind(1, movement.biz_no).bind(2, movement.amount).bind(3, movement.created_at);
    s.run();
    Movement m = movement;
    m.id = sqlite3_last_insert_rowid(db_);
    return m;
  }

  std::vector<Movement> find_movements(MovementKind kind, const std::string& biz_no) override {
    Statement s(db_, "SELECT id, biz_no, amount, created_at FROM " + std::string(movement_table(kind)) +
                         " WHERE biz_no = ?1 ORDER BY id");
    s.bind(1, biz_no);
    std::vector<Movement> out;
    while (s.step()) out.push_back(Movement{s.int64(0), s.text(1), s.int64(2), s.text(3)});
    return out;
  }

  std::int64_t available_stock(const std::string& sku) override {
    Statement s(db_, "SELECT available FROM stock WHERE sku = ?1");
    s.bind(1, sku);
    return s.step() ? s.int64(0) : kInitialStock;
  }

  void adjust_stock(const std::string& sku, std::int64_t delta) override {
    Statement s(db_,
                "INSERT INTO stock (sku, available) VALUES (?1, ?2 + ?3)"
                " ON CONFLICT (sku) DO UPDATE SET available = available + ?3");
    s.bind(1, sku).bind(2, kInitialStock).bind(3, delta);
    s.run();
  }

 private:
  sqlite3* db_;
  const std::string& records_;
  ClaimDiscipline discipline_;
};

SqliteStore::SqliteStore(const std::string& path, SqliteStoreOptions options)
    : options_(options),
      records_table_(options.discipline == ClaimDiscipline::check_then_insert
                         ? "idempotency_records_unconstrained"
                         : "idempotency_records") {
  db_ = SqliteOpen(
      path,
      {std::string("CREATE TABLE IF NOT EXISTS idempotency_records ") + kRecordsSchema +
           ", PRIMARY KEY (method, route, key)) WITHOUT ROWID",
       std::string("CREATE TABLE IF NOT EXISTS idempotency_records_unconstrained ") + kRecordsSchema + ")",
       // biz_no is deliberately not unique: the idempotency key is the only dedup.
       "CREATE TABLE IF NOT EXISTS orders (id INTEGER PRIMARY KEY AUTOINCREMENT,"
       " biz_no TEXT NOT NULL, sku TEXT NOT NULL, qty INTEGER NOT NULL,"
       " amount INTEGER NOT NULL, address TEXT, status TEXT NOT NULL,"
       " created_at TEXT NOT NULL)",
       "CREATE INDEX IF NOT EXISTS orders_by_biz_no ON orders (biz_no)",
       "CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available INTEGER NOT NULL)",
       "CREATE TABLE IF NOT EXISTS refunds (id INTEGER PRIMARY KEY AUTOINCREMENT,"
       " biz_no TEXT NOT NULL, amount INTEGER NOT NULL, created_at TEXT NOT NULL)",
       "CREATE TABLE IF NOT EXISTS transfers (id INTEGER PRIMARY KEY AUTOINCREMENT,"
       " biz_no TEXT NOT NULL, amount INTEGER NOT NULL, created_at TEXT NOT NULL)"});
}

SqliteStore::~SqliteStore() { SqliteClose(db_); }

void SqliteStore::exec(const char* sql) { SqliteExec(db_, sql); }

bool SqliteStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  std::lock_guard lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    Transaction tx(db_, records_table_, options_.discipline);
    if (!body(tx)) {
      exec("ROLLBACK");
      return false;
    }
    exec("COMMIT");
    return true;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

ClaimOutcome SqliteStore::claim(const ClaimRequest& request) {
  switch (options_.discipline) {
    case ClaimDiscipline::atomic_insert: return *claim_atomic(request);
    case ClaimDiscipline::check_then_insert: return claim_check_then_insert(request);
    case ClaimDiscipline::read_then_replace: return claim_read_then_replace(request);
  }
  throw StoreError("claim: unknown discipline");
}

std::optional<ClaimOutcome> SqliteStore::claim_atomic(const ClaimRequest& request, bool replace_completed) {
  std::optional<ClaimOutcome> outcome;
  transact([&](StoreTransaction&) {
    Statement insert(db_, record_sql::claim_insert(records_table_, '?'));
    insert.bind(1, request.scope.method)
        .bind(2, request.scope.route_template)
        .bind(3, request.scope.key)
        .bind(4, request.fingerprint)
        .bind(5, request.lease.owner)
        .bind(6, to_epoch_ns(request.lease.expires_at));
    insert.run();
    if (insert.changes() == 1) {
      outcome = ClaimOutcome{ClaimKind::claimed, std::nullopt};
      return true;
    }
    // The scope is taken; a dead record is replaced in one conditional UPDATE.
    Statement takeover(db_, record_sql::takeover(records_table_, '?', replace_completed));
    takeover.bind(1, to_epoch_ns(request.now))
        .bind(2, request.fingerprint)
        .bind(3, request.lease.owner)
        .bind(4, to_epoch_ns(request.lease.expires_at))
        .bind(5, request.scope.method)
        .bind(6, request.scope.route_template)
        .bind(7, request.scope.key);
    takeover.run();
    if (takeover.changes() == 1) {
      outcome = ClaimOutcome{ClaimKind::took_over, std::nullopt};
      return true;
    }
    auto existing = select_live(request.scope, request.now);
    if (!existing) {
      if (!replace_completed) return true;  // an expired completed record: the caller's to replace
      throw StoreError("claim: scope neither free nor live");
    }
    outcome = outcome_for_existing(*existing, request.fingerprint);
    return true;
  });
  return outcome;
}

ClaimOutcome SqliteStore::claim_read_then_replace(const ClaimRequest& request) {
  // An absent key, a live record and an expired lease: as the correct store.
  if (auto outcome = claim_atomic(request, /*replace_completed=*/false)) return *outcome;
  // The flaw: it read "expired"; between that read and the overwrite nothing
  // stops a twin that read the same, and the overwrite checks nothing.
  pause_between_check_and_write(options_);
  write_in_progress_unchecked(request, /*overwrite=*/true);
  return ClaimOutcome{ClaimKind::took_over, std::nullopt};
}

void SqliteStore::write_in_progress_unchecked(const ClaimRequest& request, bool overwrite) {
  std::lock_guard lock(mu_);
  Statement write(db_, overwrite ? record_sql::overwrite_in_progress(records_table_, '?')
                                 : record_sql::insert_in_progress(records_table_, '?'));
  write.bind(1, request.scope.method)
      .bind(2, request.scope.route_template)
      .bind(3, request.scope.key)
      .bind(4, request.fingerprint)
      .bind(5, request.lease.owner)
      .bind(6, to_epoch_ns(request.lease.expires_at));
  write.run();
}

ClaimOutcome SqliteStore::claim_check_then_insert(const ClaimRequest& request) {
  {
    std::lock_guard lock(mu_);
    if (auto existing = select_live(request.scope, request.now)) {
      return outcome_for_existing(*existing, request.fingerprint);
    }
  }
  // The flaw: between the check and the insert, nothing stops a twin.
  pause_between_check_and_write(options_);
  write_in_progress_unchecked(request, /*overwrite=*/false);
  return ClaimOutcome{ClaimKind::claimed, std::nullopt};
}

std::optional<RequestRecord> SqliteStore::select_live(const RequestScope& scope, TimePoint now) {
  Statement s(db_, record_sql::select_live(records_table_, '?'));
  s.bind(1, to_epoch_ns(now)).bind(2, scope.method).bind(3, scope.route_template).bind(4, scope.key);
  if (!s.step()) return std::nullopt;
  return read_record(s);
}

bool SqliteStore::release(const RequestScope& scope, const std::string& owner) {
  std::lock_guard lock(mu_);
  Statement s(db_, record_sql::release(records_table_, '?'));
  s.bind(1, scope.method).bind(2, scope.route_template).bind(3, scope.key).bind(4, owner);
  s.run();
  return s.changes() > 0;
}

bool SqliteStore::renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) {
  std::lock_guard lock(mu_);
  Statement s(db_, record_sql::renew(records_table_, '?'));
  s.bind(1, to_epoch_ns(expires_at)).bind(2, scope.method).bind(3, scope.route_template).bind(4, scope.key);
  s.bind(5, owner);
  s.run();
  return s.changes() > 0;
}

std::optional<RequestRecord> SqliteStore::lookup(const RequestScope& scope, TimePoint now) {
  std::lock_guard lock(mu_);
  return select_live(scope, now);
}

std::size_t SqliteStore::sweep(TimePoint now) {
  std::lock_guard lock(mu_);
  Statement s(db_, record_sql::sweep(records_table_, '?', options_.discipline));
  s.bind(1, to_epoch_ns(now));
  s.run();
  return static_cast<std::size_t>(s.changes());
}

}  // namespace idemproof::ref
