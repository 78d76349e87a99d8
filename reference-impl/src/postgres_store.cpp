#include "idemproof/ref/postgres_store.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <utility>

#include "record_sql.h"

namespace idemproof::ref {
namespace {

constexpr Oid kByteaOid = 17;  // pg_type.h is a server header; the OID is fixed
// Any constant: every process opening a store on the database takes this
// lock, so two concurrent CREATE ... IF NOT EXISTS never race on the catalog.
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(7262019318)";
// A claim retries when its row vanished between its statements (released or
// swept by another process); a handful of rounds always suffices in practice.
constexpr int kClaimRounds = 16;

std::string trimmed(std::string message) {
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
Result run(PGconn* conn, const std::string& sql, Params params = {}) {
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

Params record_params(const ClaimRequest& request) {
  Params p;
  p.add(request.scope.method)
      .add(request.scope.route_template)
      .add(request.scope.key)
      .add(request.fingerprint)
      .add(request.lease.owner)
      .add(to_epoch_ns(request.lease.expires_at));
  return p;
}

std::optional<RequestRecord> select_live(PGconn* conn, const std::string& table, const RequestScope& scope,
                                         TimePoint now) {
  auto r = run(conn, record_sql::select_live(table, '$'),
               Params().add(to_epoch_ns(now)).add(scope.method).add(scope.route_template).add(scope.key));
  if (r.rows() == 0) return std::nullopt;
  return record_sql::read_record(r.row(0));
}

constexpr const char* kRecordsSchema =
    "(method TEXT NOT NULL, route TEXT NOT NULL, key TEXT NOT NULL,"
    " fingerprint TEXT NOT NULL,"
    " state TEXT NOT NULL CHECK (state IN ('in_progress', 'completed')),"
    " owner TEXT NOT NULL, lease_expires_ns BIGINT NOT NULL,"
    " status INTEGER, content_type TEXT, location TEXT, body BYTEA,"
    " completed_ns BIGINT, expires_ns BIGINT";

}  // namespace

bool is_postgres_url(const std::string& url) {
  return url.starts_with("postgres://") || url.starts_with("postgresql://");
}

// A connection of the pool, given back when this dies.
class PostgresStore::PooledConnection {
 public:
  PooledConnection(PostgresStore& store, PGconn* conn) : store_(&store), conn_(conn) {}
  PooledConnection(PooledConnection&& other) noexcept
      : store_(other.store_), conn_(std::exchange(other.conn_, nullptr)) {}
  PooledConnection& operator=(PooledConnection&&) = delete;
  ~PooledConnection() {
    if (conn_ != nullptr) store_->give_back(conn_);
  }
  PGconn* get() const { return conn_; }

 private:
  PostgresStore* store_;
  PGconn* conn_;
};

class PostgresStore::Transaction final : public StoreTransaction {
 public:
  Transaction(PGconn* conn, const std::string& records_table, ClaimDiscipline discipline)
      : conn_(conn), records_(records_table), discipline_(discipline) {}

  bool complete(const RequestScope& scope, const std::string& owner, const StoredResponse& response,
                TimePoint completed_at, TimePoint expires_at, Fencing fencing) override {
    const auto c = record_sql::complete(records_, '$', discipline_, fencing);
    Params p;
    p.add(std::int64_t{response.status})
        .add(response.content_type)
        .add(response.location)
        .add_bytes(response.body)
        .add(to_epoch_ns(completed_at))
        .add(to_epoch_ns(expires_at))
        .add(scope.method)
        .add(scope.route_template)
        .add(scope.key);
    if (c.binds_owner) p.add(owner);
    return run(conn_, c.sql, std::move(p)).affected() > 0;
  }

  Order insert_order(const OrderDraft& draft) override {
    auto r = run(conn_,
                 "INSERT INTO orders (biz_no, sku, qty, amount, address, status, created_at)"
                 " VALUES ($1, $2, $3, $4, NULL, 'created', $5) RETURNING id",
                 Params().add(draft.biz_no).add(draft.sku).add(draft.qty).add(draft.amount).add(draft.created_at));
    return created_order(r.row(0).int64(0), draft);
  }

  // FOR UPDATE: whoever reads an order to change it holds it until commit.
  std::optional<Order> find_order(std::int64_t id) override {
    auto r = run(conn_, std::string("SELECT ") + record_sql::kOrderColumns + " FROM orders WHERE id = $1 FOR UPDATE",
                 Params().add(id));
    if (r.rows() == 0) return std::nullopt;
    return record_sql::read_order(r.row(0));
  }

  std::vector<Order> find_orders(const std::optional<std::string>& biz_no) override {
    std::string sql = std::string("SELECT ") + record_sql::kOrderColumns + " FROM orders";
    Params p;
    if (biz_no) {
      sql += " WHERE biz_no = $1";
      p.add(*biz_no);
    }
    auto r = run(conn_, sql + " ORDER BY id", std::move(p));
    std::vector<Order> out;
    for (int i = 0; i < r.rows(); ++i) out.push_back(record_sql::read_order(r.row(i)));
    return out;
  }

  void update_order(const Order& order) override {
    Params p;
    if (order.address) {
      p.add(*order.address);
    } else {
      p.add_null();
    }
    run(conn_, "UPDATE orders SET address = $1, status = $2 WHERE id = $3", std::move(p.add(order.status).add(order.id)));
  }

  Movement insert_movement(MovementKind kind, const Movement& movement) override {
    auto r = run(conn_,
                 "INSERT INTO " + std::string(movement_table(kind)) +
                     " (biz_no, amount, created_at) VALUES ($1, $2, $3) RETURNING id",
                 Params().add(movement.biz_no).add(movement.amount).add(movement.created_at));
    Movement m = movement;
    m.id = r.row(0).int64(0);
    return m;
  }

  std::vector<Movement> find_movements(MovementKind kind, const std::string& biz_no) override {
    auto r = run(conn_,
                 "SELECT id, biz_no, amount, created_at FROM " + std::string(movement_table(kind)) +
                     " WHERE biz_no = $1 ORDER BY id",
                 Params().add(biz_no));
    std::vector<Movement> out;
    for (int i = 0; i < r.rows(); ++i) {
      const Row row = r.row(i);
      out.push_back(Movement{row.int64(0), row.text(1), row.int64(2), row.text(3)});
    }
    return out;
  }

  // The sku's row is created if missing and locked until commit, so a check of
  // the stock and the change that follows it are not interleaved with another
  // transaction's (SQLite has one writer; here the row lock does it).
  std::int64_t available_stock(const std::string& sku) override {
    run(conn_, "INSERT INTO stock (sku, available) VALUES ($1, $2) ON CONFLICT (sku) DO NOTHING",
        Params().add(sku).add(kInitialStock));
    auto r = run(conn_, "SELECT available FROM stock WHERE sku = $1 FOR UPDATE", Params().add(sku));
    return r.rows() > 0 ? r.row(0).int64(0) : kInitialStock;
  }

  void adjust_stock(const std::string& sku, std::int64_t delta) override {
    run(conn_,
        "INSERT INTO stock (sku, available) VALUES ($1, $2::bigint + $3::bigint)"
        " ON CONFLICT (sku) DO UPDATE SET available = stock.available + $3::bigint",
        Params().add(sku).add(kInitialStock).add(delta));
  }

 private:
  PGconn* conn_;
  const std::string& records_;
  ClaimDiscipline discipline_;
};

PostgresStore::PostgresStore(std::string url, PostgresStoreOptions options)
    : url_(std::move(url)),
      options_(std::move(options)),
      records_table_(options_.claim.discipline == ClaimDiscipline::check_then_insert
                         ? "idempotency_records_unconstrained"
                         : "idempotency_records") {
  if (!is_postgres_url(url_)) throw StoreError("postgres: not a postgres:// or postgresql:// URL: " + url_);
  if (options_.connections == 0) throw StoreError("postgres: a pool of zero connections");
  try {
    auto conn = acquire();
    PGconn* c = conn.get();
    run(c, "BEGIN");
    run(c, kSchemaLock);
    for (const std::string& statement : {
             std::string("CREATE TABLE IF NOT EXISTS idempotency_records ") + kRecordsSchema +
                 ", PRIMARY KEY (method, route, key))",
             std::string("CREATE TABLE IF NOT EXISTS idempotency_records_unconstrained ") + kRecordsSchema + ")",
             // biz_no is deliberately not unique: the idempotency key is the only dedup.
             std::string("CREATE TABLE IF NOT EXISTS orders (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
                         " biz_no TEXT NOT NULL, sku TEXT NOT NULL, qty BIGINT NOT NULL,"
                         " amount BIGINT NOT NULL, address TEXT, status TEXT NOT NULL,"
                         " created_at TEXT NOT NULL)"),
             std::string("CREATE INDEX IF NOT EXISTS orders_by_biz_no ON orders (biz_no)"),
             std::string("CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available BIGINT NOT NULL)"),
             std::string("CREATE TABLE IF NOT EXISTS refunds (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
                         " biz_no TEXT NOT NULL, amount BIGINT NOT NULL, created_at TEXT NOT NULL)"),
             std::string("CREATE TABLE IF NOT EXISTS transfers (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
                         " biz_no TEXT NOT NULL, amount BIGINT NOT NULL, created_at TEXT NOT NULL)")}) {
      run(c, statement);
    }
    run(c, "COMMIT");
  } catch (...) {
    for (PGconn* c : idle_) PQfinish(c);
    throw;
  }
}

PostgresStore::~PostgresStore() {
  for (PGconn* c : idle_) PQfinish(c);
}

PGconn* PostgresStore::connect() const {
  // connect_timeout first: a connect_timeout in the URL, expanded after it, wins.
  const std::string timeout = std::to_string(options_.connect_timeout.count());
  const char* const keys[] = {"connect_timeout", "dbname", nullptr};
  const char* const values[] = {timeout.c_str(), url_.c_str(), nullptr};
  PGconn* c = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (c == nullptr) throw StoreError("postgres: out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string message = trimmed(PQerrorMessage(c));
    PQfinish(c);
    throw StoreError("postgres: cannot connect: " + message);
  }
  // NOTICEs (e.g. "relation already exists, skipping") are not errors.
  PQsetNoticeProcessor(c, [](void*, const char*) {}, nullptr);
  return c;
}

PostgresStore::PooledConnection PostgresStore::acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + options_.connection_wait;
  const auto available = [&] { return !idle_.empty() || open_ < options_.connections; };
  if (!freed_.wait_until(lock, deadline, available)) {
    throw StoreError("postgres: no free connection within " + std::to_string(options_.connection_wait.count()) +
                     " ms (pool of " + std::to_string(options_.connections) + ")");
  }
  if (!idle_.empty()) {
    PGconn* c = idle_.back();
    idle_.pop_back();
    return PooledConnection(*this, c);
  }
  ++open_;  // reserved: connect without holding the lock
  lock.unlock();
  try {
    return PooledConnection(*this, connect());
  } catch (...) {
    lock.lock();
    --open_;
    freed_.notify_one();
    throw;
  }
}

void PostgresStore::give_back(PGconn* conn) {
  // A broken connection, or one left inside a transaction, is not reused.
  const bool reusable = PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) == PQTRANS_IDLE;
  if (!reusable) PQfinish(conn);
  {
    std::lock_guard lock(mu_);
    if (reusable) {
      idle_.push_back(conn);
    } else {
      --open_;
    }
  }
  freed_.notify_one();
}

bool PostgresStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  auto conn = acquire();
  PGconn* c = conn.get();
  run(c, "BEGIN");
  try {
    Transaction tx(c, records_table_, options_.claim.discipline);
    if (!body(tx)) {
      run(c, "ROLLBACK");
      return false;
    }
    run(c, "COMMIT");
    return true;
  } catch (...) {
    // Best effort; a connection still in a transaction is dropped by give_back.
    PQclear(PQexec(c, "ROLLBACK"));
    throw;
  }
}

ClaimOutcome PostgresStore::claim(const ClaimRequest& request) {
  switch (options_.claim.discipline) {
    case ClaimDiscipline::atomic_insert: return *claim_atomic(request);
    case ClaimDiscipline::check_then_insert: return claim_check_then_insert(request);
    case ClaimDiscipline::read_then_replace: return claim_read_then_replace(request);
  }
  throw StoreError("claim: unknown discipline");
}

std::optional<ClaimOutcome> PostgresStore::claim_atomic(const ClaimRequest& request, bool replace_completed) {
  auto conn = acquire();
  PGconn* c = conn.get();
  // Each statement commits on its own (READ COMMITTED sees the latest
  // commits); a transaction around them would add no atomicity. The
  // constraint decides between concurrent INSERTs, the row lock between
  // concurrent takeovers (the loser re-reads the winner's live lease).
  for (int round = 0; round < kClaimRounds; ++round) {
    if (run(c, record_sql::claim_insert(records_table_, '$'), record_params(request)).affected() == 1) {
      return ClaimOutcome{ClaimKind::claimed, std::nullopt};
    }
    auto takeover = run(c, record_sql::takeover(records_table_, '$', replace_completed),
                        Params()
                            .add(to_epoch_ns(request.now))
                            .add(request.fingerprint)
                            .add(request.lease.owner)
                            .add(to_epoch_ns(request.lease.expires_at))
                            .add(request.scope.method)
                            .add(request.scope.route_template)
                            .add(request.scope.key));
    if (takeover.affected() == 1) return ClaimOutcome{ClaimKind::took_over, std::nullopt};
    if (auto existing = select_live(c, records_table_, request.scope, request.now)) {
      return outcome_for_existing(*existing, request.fingerprint);
    }
    // An expired completed record: the expiry-race flaw's caller replaces it.
    if (!replace_completed) return std::nullopt;
    // Released or swept by another process between our statements: again.
  }
  throw StoreError("claim: the scope's record kept vanishing (" + std::to_string(kClaimRounds) + " rounds)");
}

ClaimOutcome PostgresStore::claim_read_then_replace(const ClaimRequest& request) {
  // An absent key, a live record and an expired lease: as the correct store.
  if (auto outcome = claim_atomic(request, /*replace_completed=*/false)) return *outcome;
  // The flaw: it read "expired"; between that read and the overwrite nothing
  // stops a twin that read the same, and the overwrite checks nothing.
  pause_between_check_and_write(options_.claim);
  run(acquire().get(), record_sql::overwrite_in_progress(records_table_, '$'), record_params(request));
  return ClaimOutcome{ClaimKind::took_over, std::nullopt};
}

ClaimOutcome PostgresStore::claim_check_then_insert(const ClaimRequest& request) {
  if (auto existing = select_live(acquire().get(), records_table_, request.scope, request.now)) {
    return outcome_for_existing(*existing, request.fingerprint);
  }
  // The flaw: between the check and the insert, nothing stops a twin (no
  // connection is held while it pauses, so twins really overlap).
  pause_between_check_and_write(options_.claim);
  run(acquire().get(), record_sql::insert_in_progress(records_table_, '$'), record_params(request));
  return ClaimOutcome{ClaimKind::claimed, std::nullopt};
}

bool PostgresStore::release(const RequestScope& scope, const std::string& owner) {
  return run(acquire().get(), record_sql::release(records_table_, '$'),
             Params().add(scope.method).add(scope.route_template).add(scope.key).add(owner))
             .affected() > 0;
}

std::optional<RequestRecord> PostgresStore::lookup(const RequestScope& scope, TimePoint now) {
  return select_live(acquire().get(), records_table_, scope, now);
}

std::size_t PostgresStore::sweep(TimePoint now) {
  return run(acquire().get(), record_sql::sweep(records_table_, '$', options_.claim.discipline),
             Params().add(to_epoch_ns(now)))
      .affected();
}

}  // namespace idemproof::ref
