#include "idemproof/ref/effect_store.h"

#include <sqlite3.h>

#include "idemproof/ref/random_token.h"
#include "sqlite_statement.h"

namespace idemproof::ref {
namespace {

using Stmt = SqliteStatement;

constexpr const char* kIntentColumns =
    "token, scope_key, biz_no, amount, state, calls, transaction_id, failure_status, created_at";

PaymentIntent read_intent(const Stmt& s) {
  return PaymentIntent{s.text(0), s.text(1), s.text(2), s.int64(3), s.text(4),
                       s.int64(5),  s.text(6), static_cast<int>(s.int64(7)), s.text(8)};
}

std::string new_token(const char* prefix) { return prefix + random_token(); }

}  // namespace

nlohmann::json payment_to_json(const PaymentIntent& p) {
  return {{"intent", p.token},     {"biz_no", p.biz_no},
          {"amount", p.amount},    {"status", p.state == "done" ? "paid" : p.state},
          {"transaction_id", p.transaction_id.empty() ? nlohmann::json(nullptr)
                                                      : nlohmann::json(p.transaction_id)},
          {"created_at", p.created_at}};
}

EffectStore::EffectStore(const std::string& path) {
  db_ = SqliteOpen(path, {
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
      "CREATE TABLE IF NOT EXISTS stock (sku TEXT PRIMARY KEY, available INTEGER NOT NULL)"});
}

EffectStore::~EffectStore() { SqliteClose(db_); }

void EffectStore::exec(const char* sql) { SqliteExec(db_, sql); }

template <typename Body>
auto EffectStore::in_transaction(Body body) {
  std::lock_guard lock(mu_);
  exec("BEGIN IMMEDIATE");
  try {
    auto out = body();
    exec("COMMIT");
    return out;
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

PaymentIntent EffectStore::open_intent(const std::string& scope_key, const std::string& biz_no,
                                       std::int64_t amount, const std::string& created_at) {
  return in_transaction([&] {
    Stmt insert(db_,
                "INSERT INTO payment_intents (token, scope_key, biz_no, amount, state, created_at)"
                " VALUES (?1, ?2, ?3, ?4, 'pending', ?5) ON CONFLICT (scope_key) DO NOTHING");
    insert.bind(1, new_token("pi_")).bind(2, scope_key).bind(3, biz_no).bind(4, amount)
        .bind(5, created_at);
    insert.step();
    Stmt s(db_, (std::string("SELECT ") + kIntentColumns +
                 " FROM payment_intents WHERE scope_key = ?1").c_str());
    s.bind(1, scope_key);
    if (!s.step()) throw StoreError("open_intent: no intent after insert");
    return read_intent(s);
  });
}

void EffectStore::note_call(const std::string& token) {
  in_transaction([&] {
    Stmt s(db_, "UPDATE payment_intents SET calls = calls + 1 WHERE token = ?1");
    s.bind(1, token).step();
    return 0;
  });
}

void EffectStore::finish_intent(const std::string& token, const std::string& transaction_id) {
  in_transaction([&] {
    Stmt s(db_, "UPDATE payment_intents SET state = 'done', transaction_id = ?2"
                " WHERE token = ?1 AND state = 'pending'");
    s.bind(1, token).bind(2, transaction_id).step();
    return 0;
  });
}

void EffectStore::fail_intent(const std::string& token, int status) {
  in_transaction([&] {
    Stmt s(db_, "UPDATE payment_intents SET state = 'failed', failure_status = ?2"
                " WHERE token = ?1 AND state = 'pending'");
    s.bind(1, token).bind(2, std::int64_t{status}).step();
    return 0;
  });
}

std::vector<PaymentIntent> EffectStore::pending_intents() {
  return in_transaction([&] {
    Stmt s(db_, (std::string("SELECT ") + kIntentColumns +
                 " FROM payment_intents WHERE state = 'pending' ORDER BY rowid").c_str());
    std::vector<PaymentIntent> out;
    while (s.step()) out.push_back(read_intent(s));
    return out;
  });
}

std::vector<PaymentIntent> EffectStore::payments(const std::string& biz_no) {
  return in_transaction([&] {
    std::vector<PaymentIntent> out;
    Stmt s(db_, (std::string("SELECT ") + kIntentColumns +
                 " FROM payment_intents WHERE biz_no = ?1 AND state = 'done' ORDER BY rowid")
                    .c_str());
    s.bind(1, biz_no);
    while (s.step()) out.push_back(read_intent(s));
    Stmt u(db_, "SELECT token, biz_no, amount, transaction_id, created_at FROM payments_unkeyed"
                " WHERE biz_no = ?1 ORDER BY rowid");
    u.bind(1, biz_no);
    while (u.step()) {
      out.push_back(PaymentIntent{u.text(0), "", u.text(1), u.int64(2), "done", 1, u.text(3), 0,
                                  u.text(4)});
    }
    return out;
  });
}

PaymentIntent EffectStore::record_unkeyed_payment(const std::string& biz_no, std::int64_t amount,
                                                  const std::string& transaction_id,
                                                  const std::string& created_at) {
  return in_transaction([&] {
    PaymentIntent p{new_token("pay_"), "", biz_no, amount, "done", 1, transaction_id, 0,
                    created_at};
    Stmt s(db_, "INSERT INTO payments_unkeyed (token, biz_no, amount, transaction_id, created_at)"
                " VALUES (?1, ?2, ?3, ?4, ?5)");
    s.bind(1, p.token).bind(2, biz_no).bind(3, amount).bind(4, transaction_id).bind(5, created_at);
    s.step();
    return p;
  });
}

CallbackOutcome EffectStore::apply_callback(const std::string& seq, const std::string& biz_no,
                                            const std::string& event, Dedup dedup,
                                            const std::function<void(const std::string&)>& release_stock) {
  return in_transaction([&] {
    CallbackOutcome out;
    std::string state = "none";
    {
      Stmt s(db_, "SELECT state, applied FROM callback_states WHERE biz_no = ?1");
      s.bind(1, biz_no);
      if (s.step()) {
        state = s.text(0);
        out.applied_count = s.int64(1);
      }
    }
    if (dedup == Dedup::on) {
      Stmt seen(db_, "INSERT INTO provider_callbacks (seq, biz_no, event) VALUES (?1, ?2, ?3)"
                     " ON CONFLICT (seq) DO NOTHING");
      seen.bind(1, seq).bind(2, biz_no).bind(3, event).step();
      if (seen.changes() == 0) {
        out.duplicate = true;
        out.state = state;
        out.ignored = "sequence number " + seq + " already applied";
        return out;
      }
      const bool allowed = (event == "paid" && state == "none") ||
                           (event == "refunded" && state == "paid");
      if (!allowed) {
        out.state = state;
        out.ignored = "transition " + state + " -> " + event + " not allowed";
        return out;
      }
    }
    // The effect of the transition: a refund gives the biz's stock back.
    if (event == "refunded" && release_stock) {
      release_stock(biz_no);
    } else if (event == "refunded") {
      Stmt orders(db_, "SELECT sku, qty FROM orders WHERE biz_no = ?1");
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
    Stmt upsert(db_, "INSERT INTO callback_states (biz_no, state, applied) VALUES (?1, ?2, ?3)"
                     " ON CONFLICT (biz_no) DO UPDATE SET state = ?2, applied = ?3");
    upsert.bind(1, biz_no).bind(2, out.state).bind(3, out.applied_count).step();
    return out;
  });
}

nlohmann::json EffectStore::callback_state(const std::string& biz_no) {
  return in_transaction([&] {
    Stmt s(db_, "SELECT state, applied FROM callback_states WHERE biz_no = ?1");
    s.bind(1, biz_no);
    if (s.step()) return nlohmann::json{{"biz_no", biz_no}, {"state", s.text(0)}, {"applied", s.int64(1)}};
    return nlohmann::json{{"biz_no", biz_no}, {"state", "none"}, {"applied", 0}};
  });
}

InboxOutcome EffectStore::apply_message(const std::string& message_id, const std::string& account,
                                        std::int64_t amount, Dedup dedup) {
  return in_transaction([&] {
    InboxOutcome out;
    bool fresh = true;
    if (dedup == Dedup::on) {
      // The dedup row and the effect commit together, or neither does.
      Stmt seen(db_, "INSERT INTO inbox_messages (message_id) VALUES (?1)"
                     " ON CONFLICT (message_id) DO NOTHING");
      seen.bind(1, message_id).step();
      fresh = seen.changes() == 1;
    }
    if (fresh) {
      Stmt add(db_, "INSERT INTO inbox_accounts (account, balance, applied) VALUES (?1, ?2, 1)"
                    " ON CONFLICT (account) DO UPDATE SET balance = balance + ?2,"
                    " applied = applied + 1");
      add.bind(1, account).bind(2, amount).step();
    }
    out.applied = fresh;
    Stmt s(db_, "SELECT balance, applied FROM inbox_accounts WHERE account = ?1");
    s.bind(1, account);
    if (s.step()) {
      out.balance = s.int64(0);
      out.applied_count = s.int64(1);
    }
    return out;
  });
}

nlohmann::json EffectStore::account(const std::string& account) {
  return in_transaction([&] {
    Stmt s(db_, "SELECT balance, applied FROM inbox_accounts WHERE account = ?1");
    s.bind(1, account);
    if (s.step()) {
      return nlohmann::json{{"account", account}, {"balance", s.int64(0)}, {"applied", s.int64(1)}};
    }
    return nlohmann::json{{"account", account}, {"balance", 0}, {"applied", 0}};
  });
}

}  // namespace idemproof::ref
