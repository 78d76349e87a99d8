// SqliteStore: the Store on one SQLite file (WAL journal, synchronous=FULL,
// so a completed request record is on disk when its answer leaves).
//
// The idempotency table's primary key is the scope (method, route template,
// key): a claim is one INSERT ... ON CONFLICT DO NOTHING, the constraint
// decides the owner; a dead record is replaced by one conditional UPDATE.
//
// ClaimDiscipline::check_then_insert is the `check-then-insert` flaw: records
// go to a table WITHOUT the constraint, and a claim reads, pauses, then
// inserts, so concurrent duplicates really execute.
//
// ClaimDiscipline::read_then_replace is the `expiry-race` flaw: the claim of
// an absent key is still the atomic INSERT, but a key held by an EXPIRED
// completed record is replaced by read ("expired"), pause, blind overwrite;
// completion is a blind write by scope (no owner fence); the sweep leaves
// expired completed records for the next claim to replace (lazy expiry, as a
// store whose TTL deletion lags). So N concurrent retries after the TTL all
// execute. The correct store replaces a dead record in one conditional
// UPDATE inside the claim's transaction.
//
// One connection, serialised by a mutex: thread-safe. Opening creates the
// schema; an existing file keeps its data (that is what survives a crash).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "idemproof/ref/claim_discipline.h"
#include "idemproof/ref/clock.h"
#include "idemproof/ref/store.h"

struct sqlite3;

namespace idemproof::ref {

// The claim discipline (correct or one of the store's flaws).
using SqliteStoreOptions = ClaimOptions;

class SqliteStore final : public Store {
 public:
  // Opens (creating if needed) the database at `path`. Throws StoreError.
  explicit SqliteStore(const std::string& path, SqliteStoreOptions options = {});
  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  ClaimOutcome claim(const ClaimRequest& request) override;
  bool release(const RequestScope& scope, const std::string& owner) override;
  bool renew(const RequestScope& scope, const std::string& owner, TimePoint expires_at) override;
  std::optional<RequestRecord> lookup(const RequestScope& scope, TimePoint now) override;
  std::size_t sweep(TimePoint now) override;
  bool transact(const std::function<bool(StoreTransaction&)>& body) override;

 private:
  class Transaction;

  // The claim in one transaction. `replace_completed` false (the expiry-race
  // flaw): an expired completed record is not taken over; nullopt says so.
  std::optional<ClaimOutcome> claim_atomic(const ClaimRequest& request, bool replace_completed = true);
  ClaimOutcome claim_read_then_replace(const ClaimRequest& request);
  // The flaws' write of an in-progress claim, checking nothing: an INSERT, or
  // (`overwrite`) an upsert over whatever the scope's record holds.
  // REQUIRES: mu_ not held.
  void write_in_progress_unchecked(const ClaimRequest& request, bool overwrite);
  ClaimOutcome claim_check_then_insert(const ClaimRequest& request);
  std::optional<RequestRecord> select_live(const RequestScope& scope, TimePoint now);
  void exec(const char* sql);

  SqliteStoreOptions options_;
  std::string records_table_;
  std::mutex mu_;
  sqlite3* db_ = nullptr;
};

}  // namespace idemproof::ref
