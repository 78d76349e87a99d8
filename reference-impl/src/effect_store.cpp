#include "idemproof/ref/effect_store.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>

#include <mutex>

#include "effect_engine.h"
#include "effect_sql.h"
#include "sqlite_statement.h"

namespace idemproof::ref {
namespace {

using Stmt = SqliteStatement;
constexpr char P = '?';


// The SQLite engine: one connection of its own, one transaction at a time.
class SqliteEffectEngine final : public EffectStore::Engine {
 private:
  // Defined before its uses: its return type is deduced.
  template <typename Body>
  auto in_transaction(Body body) {
    std::lock_guard lock(mu_);
    SqliteExec(db_, "BEGIN IMMEDIATE");
    try {
      auto out = body();
      SqliteExec(db_, "COMMIT");
      return out;
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

 public:
  explicit SqliteEffectEngine(const std::string& path)
      : db_(SqliteOpen(path, {
            "CREATE TABLE IF NOT EXISTS payment_intents (token TEXT PRIMARY KEY,"
            " scope_key TEXT NOT NULL UNIQUE, biz_no TEXT NOT NULL, amount INTEGER NOT NULL,"
            " state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),"
            " calls INTEGER NOT NULL DEFAULT 0, transaction_id TEXT NOT NULL DEFAULT '',"
            " failure_status INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS payments_unkeyed (token TEXT PRIMARY KEY,"
            " biz_no TEXT NOT NULL, amount INTEGER NOT NULL, transaction_id TEXT NOT NULL,"
            " created_at TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS provider_callbacks (seq TEXT PRIMARY KEY,"
            " biz_no TEXT NOT NULL, event TEXT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS callback_states (biz_no TEXT PRIMARY KEY,"
            " state TEXT NOT NULL, applied INTEGER NOT NULL)",
            "CREATE TABLE IF NOT EXISTS inbox_messages (message_id TEXT PRIMARY KEY)",
            "CREATE TABLE IF NOT EXISTS inbox_accounts (account TEXT PRIMARY KEY,"
            " balance INTEGER NOT NULL, applied INTEGER NOT NULL)",
            // The order tables belong to SqliteStore; a refund callback touches them.
            "CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available INTEGER NOT NULL)"})) {}
  ~SqliteEffectEngine() override { SqliteClose(db_); }

  PaymentIntent open_intent(const std::string& scope_key, const std::string& biz_no, std::int64_t amount,
                            const std::string& created_at) override {
    return in_transaction([&] {
      Stmt insert(db_, effect_sql::insert_intent(P));
      insert.bind(1, new_intent_token()).bind(2, scope_key).bind(3, biz_no).bind(4, amount).bind(5, created_at);
      insert.step();
      Stmt s(db_, effect_sql::intent_by_scope(P));
      s.bind(1, scope_key);
      if (!s.step()) throw StoreError("open_intent: no intent after insert");
      return read_intent(s);
    });
  }

  void note_call(const std::string& token) override {
    in_transaction([&] {
      Stmt s(db_, effect_sql::note_call(P));
      s.bind(1, token).step();
      return 0;
    });
  }

  void finish_intent(const std::string& token, const std::string& transaction_id) override {
    in_transaction([&] {
      Stmt s(db_, effect_sql::finish_intent(P));
      s.bind(1, token).bind(2, transaction_id).step();
      return 0;
    });
  }

  void fail_intent(const std::string& token, int status) override {
    in_transaction([&] {
      Stmt s(db_, effect_sql::fail_intent(P));
      s.bind(1, token).bind(2, std::int64_t{status}).step();
      return 0;
    });
  }

  std::vector<PaymentIntent> pending_intents() override {
    return in_transaction([&] {
      Stmt s(db_, std::string("SELECT ") + effect_sql::kIntentColumns +
                      " FROM payment_intents WHERE state = 'pending' ORDER BY rowid");
      std::vector<PaymentIntent> out;
      while (s.step()) out.push_back(read_intent(s));
      return out;
    });
  }

  std::vector<PaymentIntent> payments(const std::string& biz_no) override {
    return in_transaction([&] {
      std::vector<PaymentIntent> out;
      Stmt s(db_, std::string("SELECT ") + effect_sql::kIntentColumns +
                      " FROM payment_intents WHERE biz_no = ?1 AND state = 'done' ORDER BY rowid");
      s.bind(1, biz_no);
      while (s.step()) out.push_back(read_intent(s));
      Stmt u(db_, "SELECT token, biz_no, amount, transaction_id, created_at FROM payments_unkeyed"
                  " WHERE biz_no = ?1 ORDER BY rowid");
      u.bind(1, biz_no);
      while (u.step()) {
        out.push_back(PaymentIntent{u.text(0), "", u.text(1), u.int64(2), "done", 1, u.text(3), 0, u.text(4)});
      }
      return out;
    });
  }

  PaymentIntent record_unkeyed_payment(const std::string& biz_no, std::int64_t amount,
                                       const std::string& transaction_id, const std::string& created_at) override {
    return in_transaction([&] {
      PaymentIntent p{new_unkeyed_payment_id(), "", biz_no, amount, "done", 1, transaction_id, 0, created_at};
      Stmt s(db_, effect_sql::insert_unkeyed(P));
      s.bind(1, p.token).bind(2, biz_no).bind(3, amount).bind(4, transaction_id).bind(5, created_at);
      s.step();
      return p;
    });
  }

  CallbackOutcome apply_callback(const std::string& seq, const std::string& biz_no, const std::string& event,
                                 Dedup dedup) override {
    return in_transaction([&] {
      CallbackOutcome out;
      std::string state = "none";
      {
        Stmt s(db_, effect_sql::callback_state(P));
        s.bind(1, biz_no);
        if (s.step()) {
          state = s.text(0);
          out.applied_count = s.int64(1);
        }
      }
      if (dedup == Dedup::on) {
        Stmt seen(db_, effect_sql::insert_callback(P));
        seen.bind(1, seq).bind(2, biz_no).bind(3, event).step();
        if (callback_refused(seen.changes() == 1, seq, state, event, out)) return out;
      }
      // The effect of the transition: a refund gives the biz's stock back.
      if (event == "refunded") {
        Stmt orders(db_, effect_sql::order_lines(P));
        orders.bind(1, biz_no);
        std::vector<std::pair<std::string, std::int64_t>> lines;
        while (orders.step()) lines.emplace_back(orders.text(0), orders.int64(1));
        for (const auto& [sku, qty] : lines) {
          Stmt stock(db_, "INSERT INTO stock (sku, available) VALUES (?1, ?2 + ?3)"
                          " ON CONFLICT (sku) DO UPDATE SET available = available + ?3");
          stock.bind(1, sku).bind(2, kInitialStock).bind(3, qty).step();
        }
      }
      out.applied = true;
      out.state = event;
      out.applied_count += 1;
      Stmt upsert(db_, effect_sql::upsert_callback_state(P));
      upsert.bind(1, biz_no).bind(2, out.state).bind(3, out.applied_count).step();
      return out;
    });
  }

  nlohmann::json callback_state(const std::string& biz_no) override {
    return in_transaction([&] {
      Stmt s(db_, effect_sql::callback_state(P));
      s.bind(1, biz_no);
      if (s.step()) return nlohmann::json{{"biz_no", biz_no}, {"state", s.text(0)}, {"applied", s.int64(1)}};
      return nlohmann::json{{"biz_no", biz_no}, {"state", "none"}, {"applied", 0}};
    });
  }

  InboxOutcome apply_message(const std::string& message_id, const std::string& account, std::int64_t amount,
                             Dedup dedup) override {
    return in_transaction([&] {
      InboxOutcome out;
      bool fresh = true;
      if (dedup != Dedup::off) {
        // The dedup row and the effect commit together, or neither does.
        Stmt seen(db_, effect_sql::insert_message(P));
        seen.bind(1, message_id).step();
        fresh = seen.changes() == 1;
      }
      if (fresh && dedup != Dedup::seen_only) {
        Stmt add(db_, "INSERT INTO inbox_accounts (account, balance, applied) VALUES (?1, ?2, 1)"
                      " ON CONFLICT (account) DO UPDATE SET balance = balance + ?2,"
                      " applied = applied + 1");
        add.bind(1, account).bind(2, amount).step();
      }
      out.applied = fresh;
      Stmt s(db_, effect_sql::account(P));
      s.bind(1, account);
      if (s.step()) {
        out.balance = s.int64(0);
        out.applied_count = s.int64(1);
      }
      return out;
    });
  }

  nlohmann::json account(const std::string& account) override {
    return in_transaction([&] {
      Stmt s(db_, effect_sql::account(P));
      s.bind(1, account);
      if (s.step()) {
        return nlohmann::json{{"account", account}, {"balance", s.int64(0)}, {"applied", s.int64(1)}};
      }
      return nlohmann::json{{"account", account}, {"balance", 0}, {"applied", 0}};
    });
  }

 private:
  std::mutex mu_;
  sqlite3* db_ = nullptr;
};

}  // namespace

nlohmann::json payment_to_json(const PaymentIntent& p) {
  return {{"intent", p.token},     {"biz_no", p.biz_no},
          {"amount", p.amount},    {"status", p.state == "done" ? "paid" : p.state},
          {"transaction_id", p.transaction_id.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(p.transaction_id)},
          {"created_at", p.created_at}};
}

EffectStore::EffectStore(const std::string& path) : engine_(std::make_unique<SqliteEffectEngine>(path)) {}
EffectStore::EffectStore(PostgresStore& database) : engine_(make_postgres_effect_engine(database)) {}
EffectStore::~EffectStore() = default;

PaymentIntent EffectStore::open_intent(const std::string& scope_key, const std::string& biz_no,
                                       std::int64_t amount, const std::string& created_at) {
  return engine_->open_intent(scope_key, biz_no, amount, created_at);
}
void EffectStore::note_call(const std::string& token) { engine_->note_call(token); }
void EffectStore::finish_intent(const std::string& token, const std::string& transaction_id) {
  engine_->finish_intent(token, transaction_id);
}
void EffectStore::fail_intent(const std::string& token, int status) { engine_->fail_intent(token, status); }
std::vector<PaymentIntent> EffectStore::pending_intents() { return engine_->pending_intents(); }
std::vector<PaymentIntent> EffectStore::payments(const std::string& biz_no) { return engine_->payments(biz_no); }
PaymentIntent EffectStore::record_unkeyed_payment(const std::string& biz_no, std::int64_t amount,
                                                  const std::string& transaction_id,
                                                  const std::string& created_at) {
  return engine_->record_unkeyed_payment(biz_no, amount, transaction_id, created_at);
}
CallbackOutcome EffectStore::apply_callback(const std::string& seq, const std::string& biz_no,
                                            const std::string& event, Dedup dedup) {
  return engine_->apply_callback(seq, biz_no, event, dedup);
}
nlohmann::json EffectStore::callback_state(const std::string& biz_no) { return engine_->callback_state(biz_no); }
InboxOutcome EffectStore::apply_message(const std::string& message_id, const std::string& account,
                                        std::int64_t amount, Dedup dedup) {
  return engine_->apply_message(message_id, account, amount, dedup);
}
nlohmann::json EffectStore::account(const std::string& account) { return engine_->account(account); }

}  // namespace idemproof::ref
