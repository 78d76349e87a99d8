// PostgresStore: the Store on a PostgreSQL database (libpq), which several
// idemproof-ref processes may share: the claim is decided by the server, not
// by a process.
//
// The contract is SqliteStore's, statement for statement:
//  - claim: one INSERT ... ON CONFLICT DO NOTHING on the scope's primary key
//    (method, route, key); a dead record (expired lease or TTL) is taken over
//    by one conditional UPDATE; otherwise the live record decides the answer.
//  - completion: an UPDATE fenced by the owner token (Fencing::by_owner), in
//    the same transaction as the business rows written through the
//    StoreTransaction (orders, stock, refunds, transfers).
//  - release, lookup and sweep as in store.h.
//  - ClaimDiscipline::check_then_insert and read_then_replace are the same
//    two flaws as on SQLite (claim_discipline.h), so they really execute
//    duplicates here too, across processes as well.
//
// Transactions run at READ COMMITTED. What SQLite gets from its one writer,
// this store gets from row locks: a transaction that reads stock or an order
// locks that row (SELECT ... FOR UPDATE) until it commits, so two requests on
// one sku or one order serialise; requests on different rows run in parallel.
//
// Thread-safe: a pool of up to `connections` libpq connections, opened as
// needed; each claim / release / lookup / sweep / transact takes one for its
// duration (waiting at most `connection_wait` for a free one). The
// PostgreSQL engines of RangeMarkerStore and EffectStore share this pool
// (pool()), so every table of a service lives in the one database.
//
// REQUIRES: `url` is a libpq URI (postgres:// or postgresql://) naming a
// reachable server and database on which the user may create tables; the
// schema is created on open (safely when several processes open at once: an
// advisory lock serialises the CREATE ... IF NOT EXISTS).
// Errors of libpq or the server are thrown as StoreError with its message.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "idemproof/ref/claim_discipline.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

namespace pg {
class Pool;  // src/postgres_db.h
}

struct PostgresStoreOptions {
  ClaimOptions claim;
  std::size_t connections = 8;  // at most this many open at once
  std::chrono::milliseconds connection_wait{30'000};
  std::chrono::seconds connect_timeout{10};  // unless the URL sets connect_timeout
};

// True for the URLs PostgresStore accepts: postgres://... or postgresql://...
bool is_postgres_url(const std::string& url);

class PostgresStore final : public Store {
 public:
  // Connects (one connection) and creates the schema. Throws StoreError.
  explicit PostgresStore(std::string url, PostgresStoreOptions options = {});
  ~PostgresStore() override;
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override;
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override;
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override;
  std::size_t sweep(TimePoint now) override;
  bool transact(const std::function<bool(StoreTransaction&)>& body) override;

  // The store's connections, for the other stores on its database.
  pg::Pool& pool() { return *pool_; }

 private:
  class Transaction;

  // The correct claim; `replace_completed` false (the expiry-race flaw): an
  // expired completed record is not taken over, nullopt says so.
  std::optional<ClaimOutcome> claim_atomic(const ClaimRequest& request, bool replace_completed = true);
  ClaimOutcome claim_read_then_replace(const ClaimRequest& request);
  ClaimOutcome claim_check_then_insert(const ClaimRequest& request);

  const std::string url_;
  const PostgresStoreOptions options_;
  const std::string records_table_;
  std::unique_ptr<pg::Pool> pool_;
};

}  // namespace idemproof::ref
