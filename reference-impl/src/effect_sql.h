// SQL shared by EffectStore's two engines (SQLite, PostgreSQL): the
// statements on intents, callbacks and the inbox that both databases run as
// they are, but for the placeholder prefix ('?' for SQLite, '$' for
// PostgreSQL, as record_sql.h). Schemas, insertion order (SQLite's rowid,
// PostgreSQL's identity column) and row locks are each engine's own.
// Each builder documents its numbered parameters.
#pragma once

#include <string>

namespace idemproof::ref::effect_sql {

inline constexpr const char* kIntentColumns =
    "token, scope_key, biz_no, amount, state, calls, transaction_id, failure_status, created_at";

inline std::string param(char prefix, int i) { return prefix + std::to_string(i); }

// 1 token, 2 scope key, 3 biz_no, 4 amount, 5 created at. The UNIQUE scope
// key decides; nobody reads first.
inline std::string insert_intent(char p) {
  return "INSERT INTO payment_intents (token, scope_key, biz_no, amount, state, created_at) VALUES (" +
         param(p, 1) + ", " + param(p, 2) + ", " + param(p, 3) + ", " + param(p, 4) + ", 'pending', " +
         param(p, 5) + ") ON CONFLICT (scope_key) DO NOTHING";
}
// 1 scope key.
inline std::string intent_by_scope(char p) {
  return std::string("SELECT ") + kIntentColumns + " FROM payment_intents WHERE scope_key = " + param(p, 1);
}
// 1 token.
inline std::string note_call(char p) {
  return "UPDATE payment_intents SET calls = calls + 1 WHERE token = " + param(p, 1);
}
// 1 token, 2 transaction id. Only a pending intent moves.
inline std::string finish_intent(char p) {
  return "UPDATE payment_intents SET state = 'done', transaction_id = " + param(p, 2) + " WHERE token = " +
         param(p, 1) + " AND state = 'pending'";
}
// 1 token, 2 failure status.
inline std::string fail_intent(char p) {
  return "UPDATE payment_intents SET state = 'failed', failure_status = " + param(p, 2) + " WHERE token = " +
         param(p, 1) + " AND state = 'pending'";
}
// 1 token, 2 biz_no, 3 amount, 4 transaction id, 5 created at.
inline std::string insert_unkeyed(char p) {
  return "INSERT INTO payments_unkeyed (token, biz_no, amount, transaction_id, created_at) VALUES (" +
         param(p, 1) + ", " + param(p, 2) + ", " + param(p, 3) + ", " + param(p, 4) + ", " + param(p, 5) + ")";
}

// 1 biz_no.
inline std::string callback_state(char p) {
  return "SELECT state, applied FROM callback_states WHERE biz_no = " + param(p, 1);
}
// 1 seq, 2 biz_no, 3 event: inserts nothing for a sequence number seen before.
inline std::string insert_callback(char p) {
  return "INSERT INTO provider_callbacks (seq, biz_no, event) VALUES (" + param(p, 1) + ", " + param(p, 2) +
         ", " + param(p, 3) + ") ON CONFLICT (seq) DO NOTHING";
}
// 1 biz_no, 2 state, 3 applied.
inline std::string upsert_callback_state(char p) {
  return "INSERT INTO callback_states (biz_no, state, applied) VALUES (" + param(p, 1) + ", " + param(p, 2) +
         ", " + param(p, 3) + ") ON CONFLICT (biz_no) DO UPDATE SET state = " + param(p, 2) +
         ", applied = " + param(p, 3);
}
// 1 biz_no: the order lines a refund gives back.
inline std::string order_lines(char p) { return "SELECT sku, qty FROM orders WHERE biz_no = " + param(p, 1); }

// 1 message id: inserts nothing for a message applied before.
inline std::string insert_message(char p) {
  return "INSERT INTO inbox_messages (message_id) VALUES (" + param(p, 1) + ") ON CONFLICT (message_id) DO NOTHING";
}
// 1 account.
inline std::string account(char p) {
  return "SELECT balance, applied FROM inbox_accounts WHERE account = " + param(p, 1);
}

}  // namespace idemproof::ref::effect_sql
