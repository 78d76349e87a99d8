// SQL shared by the reference's two durable stores (SqliteStore,
// PostgresStore): every statement on the request-record table, and the
// readers of a record and an order row. The stores differ in placeholder
// syntax (?1 vs $1), column types and client library, not in the claim,
// fencing and expiry logic; that logic is spelled once, here.
//
// Each builder takes the records table and the placeholder prefix ('?' for
// SQLite, '$' for PostgreSQL) and documents its numbered parameters.
#pragma once

#include <string>

#include "idemproof/ref/claim_discipline.h"
#include "idemproof/ref/order.h"
#include "idemproof/ref/request_record.h"

namespace idemproof::ref::record_sql {

inline constexpr const char* kRecordColumns =
    "method, route, key, fingerprint, state, owner, lease_expires_ns, status, content_type, "
    "location, body, completed_ns, expires_ns";

inline constexpr const char* kOrderColumns = "id, biz_no, sku, qty, amount, address, status, created_at";

// A record is dead (as good as absent) when its lease or TTL has passed at
// `now` (a placeholder: "?1", "$1").
inline std::string dead_at(const std::string& now) {
  return "((state = 'in_progress' AND lease_expires_ns <= " + now + ") OR"
         " (state = 'completed' AND expires_ns <= " + now + "))";
}
// Only an in-progress record whose lease has passed (the expiry-race flaw's
// store never sweeps, nor atomically replaces, expired completed records).
inline std::string lease_dead_at(const std::string& now) {
  return "(state = 'in_progress' AND lease_expires_ns <= " + now + ")";
}

inline std::string param(char prefix, int i) { return prefix + std::to_string(i); }

// The claim: 1 method, 2 route, 3 key, 4 fingerprint, 5 owner, 6 lease expiry.
// The primary key decides; on the unconstrained table it inserts always.
inline std::string insert_in_progress(const std::string& table, char p) {
  return "INSERT INTO " + table + " (" + kRecordColumns + ") VALUES (" + param(p, 1) + ", " +
         param(p, 2) + ", " + param(p, 3) + ", " + param(p, 4) + ", 'in_progress', " + param(p, 5) +
         ", " + param(p, 6) + ", NULL, NULL, NULL, NULL, NULL, NULL)";
}
inline std::string claim_insert(const std::string& table, char p) {
  return insert_in_progress(table, p) + " ON CONFLICT DO NOTHING";
}
// The expiry-race flaw's blind overwrite of the scope's record, whatever it
// holds (same parameters as claim_insert).
inline std::string overwrite_in_progress(const std::string& table, char p) {
  return insert_in_progress(table, p) +
         " ON CONFLICT (method, route, key) DO UPDATE SET fingerprint = excluded.fingerprint,"
         " state = 'in_progress', owner = excluded.owner, lease_expires_ns = excluded.lease_expires_ns,"
         " status = NULL, content_type = NULL, location = NULL, body = NULL, completed_ns = NULL,"
         " expires_ns = NULL";
}

// Takeover of a dead record in one conditional UPDATE: 1 now, 2 fingerprint,
// 3 owner, 4 lease expiry, 5 method, 6 route, 7 key. `replace_completed`
// false (the expiry-race flaw): only an expired lease is taken over.
inline std::string takeover(const std::string& table, char p, bool replace_completed) {
  return "UPDATE " + table + " SET fingerprint = " + param(p, 2) + ", state = 'in_progress', owner = " +
         param(p, 3) + ", lease_expires_ns = " + param(p, 4) +
         ", status = NULL, content_type = NULL, location = NULL, body = NULL, completed_ns = NULL,"
         " expires_ns = NULL WHERE method = " + param(p, 5) + " AND route = " + param(p, 6) +
         " AND key = " + param(p, 7) + " AND " +
         (replace_completed ? dead_at(param(p, 1)) : lease_dead_at(param(p, 1)));
}

// The live record of a scope: 1 now, 2 method, 3 route, 4 key. Completed rows
// first: only the check-then-insert flaw's table can hold several per scope.
inline std::string select_live(const std::string& table, char p) {
  return std::string("SELECT ") + kRecordColumns + " FROM " + table + " WHERE method = " + param(p, 2) +
         " AND route = " + param(p, 3) + " AND key = " + param(p, 4) + " AND NOT " +
         dead_at(param(p, 1)) + " ORDER BY state = 'completed' DESC LIMIT 1";
}

// Release: 1 method, 2 route, 3 key, 4 owner.
inline std::string release(const std::string& table, char p) {
  return "DELETE FROM " + table + " WHERE method = " + param(p, 1) + " AND route = " + param(p, 2) +
         " AND key = " + param(p, 3) + " AND owner = " + param(p, 4) + " AND state = 'in_progress'";
}

// Renewal of a live lease: 1 lease expiry, 2 method, 3 route, 4 key, 5 owner.
inline std::string renew(const std::string& table, char p) {
  return "UPDATE " + table + " SET lease_expires_ns = " + param(p, 1) + " WHERE method = " + param(p, 2) +
         " AND route = " + param(p, 3) + " AND key = " + param(p, 4) + " AND owner = " + param(p, 5) +
         " AND state = 'in_progress'";
}

// Sweep: 1 now. The expiry-race flaw's store leaves expired completed records
// for the next claim to replace (lazy expiry).
inline std::string sweep(const std::string& table, char p, ClaimDiscipline discipline) {
  const bool lazy = discipline == ClaimDiscipline::read_then_replace;
  return "DELETE FROM " + table + " WHERE " + (lazy ? lease_dead_at(param(p, 1)) : dead_at(param(p, 1)));
}

// Completion: 1 status, 2 content type, 3 location, 4 body, 5 completed at,
// 6 expires at, 7 method, 8 route, 9 key, and 10 owner when `binds_owner`.
struct Completion {
  std::string sql;
  bool binds_owner = false;
};
inline Completion complete(const std::string& table, char p, ClaimDiscipline discipline, Fencing fencing) {
  Completion c;
  c.sql = "UPDATE " + table + " SET state = 'completed', status = " + param(p, 1) +
          ", content_type = " + param(p, 2) + ", location = " + param(p, 3) + ", body = " + param(p, 4) +
          ", completed_ns = " + param(p, 5) + ", expires_ns = " + param(p, 6) +
          " WHERE method = " + param(p, 7) + " AND route = " + param(p, 8) + " AND key = " + param(p, 9);
  // The expiry-race flaw's store writes blindly: no owner fence.
  if (discipline == ClaimDiscipline::read_then_replace) fencing = Fencing::none;
  // Without the unique constraint several rows may share a scope: the owner
  // picks its own row (this is the check-then-insert flaw's table).
  c.binds_owner = fencing == Fencing::by_owner || discipline == ClaimDiscipline::check_then_insert;
  if (c.binds_owner) c.sql += " AND owner = " + param(p, 10);
  if (fencing == Fencing::by_owner) c.sql += " AND state = 'in_progress'";
  return c;
}

// `Row`: text(col), int64(col), is_null(col) over a row of kRecordColumns.
template <typename Row>
RequestRecord read_record(const Row& s) {
  RequestRecord r;
  r.scope = {s.text(0), s.text(1), s.text(2)};
  r.fingerprint = s.text(3);
  r.state = s.text(4) == "completed" ? RecordState::completed : RecordState::in_progress;
  r.lease = {s.text(5), from_epoch_ns(s.int64(6))};
  if (r.state == RecordState::completed) {
    r.response = StoredResponse{static_cast<int>(s.int64(7)), s.text(8), s.text(9), s.text(10)};
    r.completed_at = from_epoch_ns(s.int64(11));
    r.expires_at = from_epoch_ns(s.int64(12));
  }
  return r;
}

// A row of kOrderColumns.
template <typename Row>
Order read_order(const Row& s) {
  Order o;
  o.id = s.int64(0);
  o.biz_no = s.text(1);
  o.sku = s.text(2);
  o.qty = s.int64(3);
  o.amount = s.int64(4);
  if (!s.is_null(5)) o.address = s.text(5);
  o.status = s.text(6);
  o.created_at = s.text(7);
  return o;
}

}  // namespace idemproof::ref::record_sql
