#include "ledger.h"

namespace idemproof::stub {

Attempt Ledger::charge(const ChargeRequest& request, const std::string& fault) {
  base::MutexLock lock(mu_);
  Attempt a{static_cast<std::int64_t>(attempts_.size()) + 1, request.idempotency_key,
            request.reference, request.amount, "effect", "", fault};
  if (honour_keys_ && !request.idempotency_key.empty()) {
    for (const auto& e : effects_) {
      if (e.idempotency_key == request.idempotency_key) {
        a.outcome = "replayed";
        a.transaction_id = e.transaction_id;
        attempts_.push_back(a);
        return a;
      }
    }
  }
  a.transaction_id = "txn-" + std::to_string(effects_.size() + 1);
  effects_.push_back(Effect{a.transaction_id, request.idempotency_key, request.reference,
                            request.amount, a.seq});
  attempts_.push_back(a);
  return a;
}

Attempt Ledger::fail(const ChargeRequest& request, const std::string& fault) {
  base::MutexLock lock(mu_);
  Attempt a{static_cast<std::int64_t>(attempts_.size()) + 1, request.idempotency_key,
            request.reference, request.amount, "failed", "", fault};
  attempts_.push_back(a);
  return a;
}

std::vector<Effect> Ledger::effects(const std::optional<std::string>& key,
                                    const std::optional<std::string>& reference) const {
  base::MutexLock lock(mu_);
  std::vector<Effect> out;
  for (const auto& e : effects_) {
    if (key && e.idempotency_key != *key) continue;
    if (reference && e.reference != *reference) continue;
    out.push_back(e);
  }
  return out;
}

std::vector<Attempt> Ledger::attempts(const std::optional<std::string>& reference) const {
  base::MutexLock lock(mu_);
  std::vector<Attempt> out;
  for (const auto& a : attempts_) {
    if (!reference || a.reference == *reference) out.push_back(a);
  }
  return out;
}

void Ledger::clear() {
  base::MutexLock lock(mu_);
  effects_.clear();
  attempts_.clear();
}

nlohmann::json effect_to_json(const Effect& e) {
  return {{"transaction_id", e.transaction_id}, {"idempotency_key", e.idempotency_key},
          {"reference", e.reference},           {"amount", e.amount},
          {"attempt", e.attempt}};
}

nlohmann::json attempt_to_json(const Attempt& a) {
  return {{"seq", a.seq},         {"idempotency_key", a.idempotency_key},
          {"reference", a.reference}, {"amount", a.amount},
          {"outcome", a.outcome}, {"transaction_id", a.transaction_id},
          {"fault", a.fault}};
}

}  // namespace idemproof::stub
