#include "clients/kept_budget.h"

#include <algorithm>

namespace idemproof::runtime {

std::size_t KeptBudget::Reserve(std::size_t n, std::size_t max_body) {
  if (max_body <= kHead || n == 0) return max_body;
  base::MutexLock lock(mu_);
  const std::uint64_t left = total_ - std::min(total_, used_);
  const std::uint64_t share = std::min<std::uint64_t>(left / n, max_body - kHead);
  used_ += share * n;
  return kHead + static_cast<std::size_t>(share);
}

void KeptBudget::Release(std::size_t cap, std::size_t kept) {
  if (cap <= kHead) return;
  const std::size_t granted = cap - kHead;
  const std::size_t spent = std::min(granted, kept > kHead ? kept - kHead : 0);
  base::MutexLock lock(mu_);
  used_ -= std::min<std::uint64_t>(used_, granted - spent);
}

void KeptBudget::Reset() {
  base::MutexLock lock(mu_);
  used_ = 0;
}

std::uint64_t KeptBudget::used() const {
  base::MutexLock lock(mu_);
  return used_;
}

}  // namespace idemproof::runtime
