// EffectStore::Engine: EffectStore's methods on one database. Two engines:
// SQLite (effect_store.cpp) and PostgreSQL (postgres_effect_store.cpp), with
// the contract of effect_store.h each; the statements they share are in
// effect_sql.h.
#pragma once

#include <memory>
#include <string>

#include "idemproof/ref/effect_store.h"
#include "idemproof/ref/random_token.h"

namespace idemproof::ref {

class EffectStore::Engine {
 public:
  virtual ~Engine() = default;
  virtual PaymentIntent open_intent(const std::string& scope_key, const std::string& biz_no, std::int64_t amount,
                                    const std::string& created_at) = 0;
  virtual void note_call(const std::string& token) = 0;
  virtual void finish_intent(const std::string& token, const std::string& transaction_id) = 0;
  virtual void fail_intent(const std::string& token, int status) = 0;
  virtual std::vector<PaymentIntent> pending_intents() = 0;
  virtual std::vector<PaymentIntent> payments(const std::string& biz_no) = 0;
  virtual PaymentIntent record_unkeyed_payment(const std::string& biz_no, std::int64_t amount,
                                               const std::string& transaction_id,
                                               const std::string& created_at) = 0;
  virtual CallbackOutcome apply_callback(const std::string& seq, const std::string& biz_no,
                                         const std::string& event, Dedup dedup) = 0;
  virtual nlohmann::json callback_state(const std::string& biz_no) = 0;
  virtual InboxOutcome apply_message(const std::string& message_id, const std::string& account,
                                     std::int64_t amount, Dedup dedup) = 0;
  virtual nlohmann::json account(const std::string& account) = 0;
};

// The PostgreSQL engine on `database`'s pool (creates its tables). Throws StoreError.
std::unique_ptr<EffectStore::Engine> make_postgres_effect_engine(PostgresStore& database);

// Shared by both engines: the ids of a payment intent (its token, the
// provider's idempotency key) and of a `no-intent` payment.
inline std::string new_intent_token() { return "pi_" + random_token(); }
inline std::string new_unkeyed_payment_id() { return "pay_" + random_token(); }

// A payment_intents row read in effect_sql::kIntentColumns' order, from either
// engine's row (SqliteStatement, pg::Row: both have text(i) and int64(i)).
template <typename Row>
PaymentIntent read_intent(const Row& s) {
  return PaymentIntent{s.text(0), s.text(1), s.text(2), s.int64(3), s.text(4),
                       s.int64(5),  s.text(6), static_cast<int>(s.int64(7)), s.text(8)};
}

// Shared by both engines: what a callback does, given the biz's state before.
// Allowed transitions: none -> paid, paid -> refunded.
inline bool callback_allowed(const std::string& state, const std::string& event) {
  return (event == "paid" && state == "none") || (event == "refunded" && state == "paid");
}

// Dedup::on: whether the callback changes nothing, and then `out` says why.
// `seq_was_new`: inserting its sequence number inserted a row.
inline bool callback_refused(bool seq_was_new, const std::string& seq, const std::string& state,
                             const std::string& event, CallbackOutcome& out) {
  if (!seq_was_new) {
    out.duplicate = true;
    out.state = state;
    out.ignored = "sequence number " + seq + " already applied";
    return true;
  }
  if (!callback_allowed(state, event)) {
    out.state = state;
    out.ignored = "transition " + state + " -> " + event + " not allowed";
    return true;
  }
  return false;
}

}  // namespace idemproof::ref
