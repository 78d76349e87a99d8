#include "postgres_db.h"

#include <poll.h>

#include "idemproof/ref/postgres_store.h"

namespace idemproof::ref {
namespace pg {

namespace {
// An idle connection has nothing to read: one that is readable (an EOF, an
// RST, the server's FATAL before it closes) was most likely ended meanwhile
// (the server restarted, the network reset it). Checked before reuse, as
// careful pools do, so a store that failed and came back costs no request a
// 5xx; a connection dropped wrongly costs only a reconnect.
bool Ended(PGconn* c) {
  pollfd p{PQsocket(c), POLLIN, 0};
  return PQstatus(c) != CONNECTION_OK || ::poll(&p, 1, 0) != 0;
}
}  // namespace

Pool::Pool(std::string url, PoolOptions options) : url_(std::move(url)), options_(options) {
  if (!is_postgres_url(url_)) throw StoreError("postgres: not a postgres:// or postgresql:// URL: " + url_);
  if (options_.connections == 0) throw StoreError("postgres: a pool of zero connections");
}

Pool::~Pool() {
  for (PGconn* c : idle_) PQfinish(c);
}

PGconn* Pool::connect() const {
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

Pool::Connection Pool::acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + options_.connection_wait;
  const auto available = [&] { return !idle_.empty() || open_ < options_.connections; };
  if (!freed_.wait_until(lock, deadline, available)) {
    throw StoreError("postgres: no free connection within " + std::to_string(options_.connection_wait.count()) +
                     " ms (pool of " + std::to_string(options_.connections) + ")");
  }
  while (!idle_.empty()) {
    PGconn* c = idle_.back();
    idle_.pop_back();
    if (!Ended(c)) return Connection(*this, c);
    PQfinish(c);
    --open_;
  }
  ++open_;  // reserved: connect without holding the lock
  lock.unlock();
  try {
    return Connection(*this, connect());
  } catch (...) {
    lock.lock();
    --open_;
    freed_.notify_one();
    throw;
  }
}

void Pool::give_back(PGconn* conn) {
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

}  // namespace pg
}  // namespace idemproof::ref
