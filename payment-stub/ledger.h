// Ledger: what the fake external system (a payment provider) really did.
//
// Every charge attempt is recorded, whatever its outcome, and every effect
// (a committed charge, with its transaction id) once. A charge carrying an
// idempotency key already seen — when the ledger honours keys — creates no
// new effect: it is recorded as a "replayed" attempt answering the first
// effect's transaction id. So the oracles read the truth: how many effects a
// business action caused, and how often the caller knocked.
//
// Thread-safe (one mutex); in memory: the stub lives as long as a scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/thread_annotations.h"

namespace idemproof::stub {

// One committed charge.
struct Effect {
  std::string transaction_id;   // "txn-1", "txn-2", ... in commit order
  std::string idempotency_key;  // "" when the caller sent none
  std::string reference;        // the caller's business reference (biz_no)
  std::int64_t amount = 0;
  std::int64_t attempt = 0;     // the attempt that committed it
};

// One knock at POST /charge.
struct Attempt {
  std::int64_t seq = 0;         // 1, 2, ... in arrival order
  std::string idempotency_key;
  std::string reference;
  std::int64_t amount = 0;
  // "effect" (committed a new charge), "replayed" (key already seen: no new
  // charge), "failed" (a fault answered an error, nothing committed).
  std::string outcome;
  std::string transaction_id;   // set for effect / replayed
  std::string fault;            // the fault applied to this attempt, "" for none
};

struct ChargeRequest {
  std::string idempotency_key;  // "" = none
  std::string reference;
  std::int64_t amount = 0;
};

class Ledger {
 public:
  // `honour_keys` false: every attempt commits a new effect (a provider that
  // ignores idempotency keys).
  explicit Ledger(bool honour_keys = true) : honour_keys_(honour_keys) {}

  // Commits the charge (or recognises a repeated key); records the attempt.
  // Returns the attempt as recorded.
  Attempt charge(const ChargeRequest& request, const std::string& fault = "");
  // Records an attempt that a fault failed before any commit.
  Attempt fail(const ChargeRequest& request, const std::string& fault);

  // Effects with this key / reference (empty filter = all), in commit order.
  std::vector<Effect> effects(const std::optional<std::string>& key,
                              const std::optional<std::string>& reference) const;
  std::vector<Attempt> attempts(const std::optional<std::string>& reference) const;

  void clear();

 private:
  bool honour_keys_;
  mutable base::Mutex mu_;
  std::vector<Effect> effects_ GUARDED_BY(mu_);
  std::vector<Attempt> attempts_ GUARDED_BY(mu_);
};

nlohmann::json effect_to_json(const Effect& e);
nlohmann::json attempt_to_json(const Attempt& a);

}  // namespace idemproof::stub
