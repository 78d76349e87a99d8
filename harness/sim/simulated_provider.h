// SimulatedProvider: the external payment system inside the simulation. It
// keeps the ledger of effects (charges) the invariants read, outlives the
// simulated process's crashes, and behaves like the stub the live harness
// uses: a charge is atomic and idempotent per idempotency key (the same key
// returns the first transaction, no new effect); find() tells whether a key
// was charged.
//
// Each call is surrounded by step points: before a charge ("provider
// charge") and after it, before the core records it ("record the charge"),
// so a crash can fall between the effect and its record; and before a
// lookup ("provider lookup"). Calls made while no request runs (the
// restart's reconciliation, run by the driver) do not yield.
//
// Thread-safety: used on the scheduler's thread only (one caller at a time).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "idemproof/ref/payment_provider.h"
#include "sim/step_scheduler.h"

namespace idemproof::sim {

struct ProviderEffect {
  std::string idempotency_key;  // what the core gave the provider
  std::string reference;        // the biz_no
  std::int64_t amount = 0;
  std::string transaction_id;   // "tx_1", "tx_2", ... in order of charging
};

class SimulatedProvider final : public ref::PaymentProvider {
 public:
  // `scheduler` must outlive this object.
  explicit SimulatedProvider(StepScheduler& scheduler) : scheduler_(scheduler) {}

  ref::ProviderAnswer charge(const std::string& idempotency_key, const std::string& reference,
                             std::int64_t amount) override;
  ref::ProviderLookup find(const std::string& idempotency_key) override;

  // Every effect, in order.
  const std::vector<ProviderEffect>& effects() const { return effects_; }

 private:
  StepScheduler& scheduler_;
  std::vector<ProviderEffect> effects_;
};

}  // namespace idemproof::sim
