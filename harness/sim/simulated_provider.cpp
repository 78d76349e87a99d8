#include "sim/simulated_provider.h"

namespace idemproof::sim {

ref::ProviderAnswer SimulatedProvider::charge(const std::string& idempotency_key,
                                              const std::string& reference, std::int64_t amount) {
  scheduler_.StepPoint("provider charge");
  ref::ProviderAnswer answer;
  answer.kind = ref::ProviderAnswer::Kind::charged;
  answer.status = 201;
  for (const auto& e : effects_) {
    if (e.idempotency_key == idempotency_key) answer.transaction_id = e.transaction_id;
  }
  if (answer.transaction_id.empty()) {
    answer.transaction_id = "tx_" + std::to_string(effects_.size() + 1);
    effects_.push_back({idempotency_key, reference, amount, answer.transaction_id});
    scheduler_.Note(" -> charged " + answer.transaction_id);
  } else {
    scheduler_.Note(" -> replayed " + answer.transaction_id + " (same provider key)");
  }
  scheduler_.StepPoint("record the charge");
  return answer;
}

ref::ProviderLookup SimulatedProvider::find(const std::string& idempotency_key) {
  scheduler_.StepPoint("provider lookup");
  ref::ProviderLookup found;
  found.answered = true;
  for (const auto& e : effects_) {
    if (e.idempotency_key == idempotency_key) found.transaction_id = e.transaction_id;
  }
  // With no request running this is the restart's reconciliation: say so on its line.
  scheduler_.Note(std::string(scheduler_.Current() == 0 ? "; provider lookup" : "") +
                  (found.transaction_id ? " -> found " + *found.transaction_id : " -> none"));
  return found;
}

}  // namespace idemproof::sim
