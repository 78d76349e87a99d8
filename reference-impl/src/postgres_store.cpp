#include "idemproof/ref/postgres_store.h"

#include <utility>

#include "postgres_db.h"
#include "record_sql.h"

namespace idemproof::ref {
namespace {

using pg::Params;
using pg::Result;
using pg::Row;
using pg::run;

// A claim retries when its row vanished between its statements (released or
// swept by another process); a handful of rounds always suffices in practice.
constexpr int kClaimRounds = 16;

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
    run(conn_, pg::kAdjustStock, Params().add(sku).add(kInitialStock).add(delta));
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
                         : "idempotency_records"),
      pool_(std::make_unique<pg::Pool>(
          url_, pg::PoolOptions{options_.connections, options_.connection_wait, options_.connect_timeout})) {
  pg::create_schema(*pool_, {
      std::string("CREATE TABLE IF NOT EXISTS idempotency_records ") + kRecordsSchema +
          ", PRIMARY KEY (method, route, key))",
      std::string("CREATE TABLE IF NOT EXISTS idempotency_records_unconstrained ") + kRecordsSchema + ")",
      // biz_no is deliberately not unique: the idempotency key is the only dedup.
      "CREATE TABLE IF NOT EXISTS orders (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
      " biz_no TEXT NOT NULL, sku TEXT NOT NULL, qty BIGINT NOT NULL,"
      " amount BIGINT NOT NULL, address TEXT, status TEXT NOT NULL,"
      " created_at TEXT NOT NULL)",
      "CREATE INDEX IF NOT EXISTS orders_by_biz_no ON orders (biz_no)",
      "CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available BIGINT NOT NULL)",
      "CREATE TABLE IF NOT EXISTS refunds (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
      " biz_no TEXT NOT NULL, amount BIGINT NOT NULL, created_at TEXT NOT NULL)",
      "CREATE TABLE IF NOT EXISTS transfers (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
      " biz_no TEXT NOT NULL, amount BIGINT NOT NULL, created_at TEXT NOT NULL)"});
}

PostgresStore::~PostgresStore() = default;

bool PostgresStore::transact(const std::function<bool(StoreTransaction&)>& body) {
  auto conn = pool_->acquire();
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
  auto conn = pool_->acquire();
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
  run(pool_->acquire().get(), record_sql::overwrite_in_progress(records_table_, '$'), record_params(request));
  return ClaimOutcome{ClaimKind::took_over, std::nullopt};
}

ClaimOutcome PostgresStore::claim_check_then_insert(const ClaimRequest& request) {
  if (auto existing = select_live(pool_->acquire().get(), records_table_, request.scope, request.now)) {
    return outcome_for_existing(*existing, request.fingerprint);
  }
  // The flaw: between the check and the insert, nothing stops a twin (no
  // connection is held while it pauses, so twins really overlap).
  pause_between_check_and_write(options_.claim);
  run(pool_->acquire().get(), record_sql::insert_in_progress(records_table_, '$'), record_params(request));
  return ClaimOutcome{ClaimKind::claimed, std::nullopt};
}

bool PostgresStore::release(const RequestScope& scope, const std::string& owner) {
  return run(pool_->acquire().get(), record_sql::release(records_table_, '$'),
             Params().add(scope.method).add(scope.route_template).add(scope.key).add(owner))
             .affected() > 0;
}

bool PostgresStore::renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) {
  return run(pool_->acquire().get(), record_sql::renew(records_table_, '$'),
             Params().add(to_epoch_ns(expires_at)).add(scope.method).add(scope.route_template).add(scope.key).add(owner))
             .affected() > 0;
}

std::optional<RequestRecord> PostgresStore::lookup(const RequestScope& scope, TimePoint now) {
  return select_live(pool_->acquire().get(), records_table_, scope, now);
}

std::size_t PostgresStore::sweep(TimePoint now) {
  return run(pool_->acquire().get(), record_sql::sweep(records_table_, '$', options_.claim.discipline),
             Params().add(to_epoch_ns(now)))
      .affected();
}

}  // namespace idemproof::ref
