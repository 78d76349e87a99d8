// EffectStore: the reference service's records of side effects, next to the
// idempotency records: in the same SQLite file but on a connection of its
// own, or (--store postgres://) in the PostgreSQL database of the
// PostgresStore, on its pool of connections:
//
//   payment_intents    one row per (idempotency scope) — UNIQUE — written
//                      BEFORE the provider is called: pending -> done | failed.
//                      Its `token` is the idempotency key given to the provider.
//   payments_unkeyed   the `no-intent` flaw's record: a payment noted only after
//                      the provider answered
//   provider_callbacks the provider's sequence numbers already applied (PK)
//   callback_states    per biz_no: the payment state the callbacks advanced
//                      (none -> paid -> refunded) and how many were applied
//   inbox_messages     business message ids already applied (PK)
//   inbox_accounts     the consumer's effect: a balance per account
//
// Every method is one transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: READ
// COMMITTED with the biz's callback_states row and the account's row locked
// until commit, so concurrent callbacks of one biz, or messages of one
// account, serialise as on SQLite); a dedup row and the effect it guards
// commit together. A refund's stock release is in the same transaction too:
// orders and stock are in the same database on either engine. Thread-safe
// (SQLite: one mutex; PostgreSQL: one pooled connection per method). Throws
// StoreError on a database failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "idemproof/ref/clock.h"
#include "idemproof/ref/store.h"

namespace idemproof::ref {

class PostgresStore;

struct PaymentIntent {
  std::string token;           // "pi_<hex>": the provider's idempotency key
  std::string scope_key;       // the client's idempotency key (scope POST /payments)
  std::string biz_no;
  std::int64_t amount = 0;
  std::string state;           // "pending" | "done" | "failed"
  std::int64_t calls = 0;      // provider calls started (a recovery point)
  std::string transaction_id;  // set when done
  int failure_status = 0;      // set when failed
  std::string created_at;      // RFC 3339
};

nlohmann::json payment_to_json(const PaymentIntent& intent);

struct CallbackOutcome {
  bool duplicate = false;      // the sequence number was seen before
  bool applied = false;        // the state advanced (or, under the flaw, the effect ran)
  std::string state;           // the biz's state afterwards
  std::int64_t applied_count = 0;
  std::string ignored;         // why an unapplied callback changed nothing
};

struct InboxOutcome {
  bool applied = false;
  std::int64_t balance = 0;
  std::int64_t applied_count = 0;
};

// off: the named flaws. seen_only: record the message id as seen and apply
// nothing (`applied` says whether it was fresh): the seen-before-apply flaw's
// first step, its effect then applied with off.
enum class Dedup { on, off, seen_only };

class EffectStore {
 public:
  // Opens (creating the tables if needed) the SQLite file at `path`.
  explicit EffectStore(const std::string& path);
  // On `database`'s PostgreSQL database and pool (creating the tables if
  // needed). REQUIRES: `database` outlives this store.
  explicit EffectStore(PostgresStore& database);
  ~EffectStore();
  EffectStore(const EffectStore&) = delete;
  EffectStore& operator=(const EffectStore&) = delete;

  // The intent bound to `scope_key`, inserting a pending one when there is
  // none (the UNIQUE constraint decides; nobody reads first).
  PaymentIntent open_intent(const std::string& scope_key, const std::string& biz_no,
                            std::int64_t amount, const std::string& created_at);
  // Recovery point: a provider call is about to start.
  void note_call(const std::string& token);
  void finish_intent(const std::string& token, const std::string& transaction_id);
  void fail_intent(const std::string& token, int status);
  std::vector<PaymentIntent> pending_intents();
  // Done payments of `biz_no` (intents and, under the flaw, unkeyed payments).
  std::vector<PaymentIntent> payments(const std::string& biz_no);
  // The `no-intent` flaw: a payment recorded after the fact.
  PaymentIntent record_unkeyed_payment(const std::string& biz_no, std::int64_t amount,
                                       const std::string& transaction_id,
                                       const std::string& created_at);

  // Applies a provider callback. Allowed transitions: none -> paid,
  // paid -> refunded; "refunded" also releases the stock of the biz's
  // orders. Dedup::off (callback-no-dedup): neither the sequence number nor
  // the transition is checked, the effect runs every time. The sequence
  // number, the state and the stock release commit in one transaction.
  CallbackOutcome apply_callback(const std::string& seq, const std::string& biz_no,
                                 const std::string& event, Dedup dedup);
  // {"biz_no", "state", "applied"} (state "none" when no callback applied).
  nlohmann::json callback_state(const std::string& biz_no);

  // Applies one queue message: adds `amount` to `account` once per
  // `message_id` (Dedup::off, inbox-no-dedup: every delivery).
  InboxOutcome apply_message(const std::string& message_id, const std::string& account,
                             std::int64_t amount, Dedup dedup);
  // {"account", "balance", "applied"}.
  nlohmann::json account(const std::string& account);

  // The methods above on one database (src/effect_engine.h).
  class Engine;

 private:
  std::unique_ptr<Engine> engine_;
};

}  // namespace idemproof::ref
