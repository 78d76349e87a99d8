// KeptBudget: the run's allowance of answer-body bytes (the target file's
// `max_kept`), shared by every request of the run, so an endless-body target
// cannot fill memory or disk however many answers it gives (max_body only
// bounds one answer).
//
// Every answer keeps its first kHead bytes whatever is left (statuses,
// headers and a small body stay comparable; most services never go past
// it); what it keeps beyond them comes out of the budget. Before a send the
// sender reserves a cap per answer, and after it gives back what the answer
// did not keep. Answers sent at once (a burst) share what is left equally,
// so a burst of N can never hold more than the budget between them. An
// answer cut below max_body because the budget was short is truncated as
// any cut answer is (oracles that compare bodies say unknown), and marked
// as cut by max_kept.
//
// Thread-safety: all methods may be called from any thread at once.
#ifndef IDEMPROOF_HARNESS_RUNTIME_KEPT_BUDGET_H_
#define IDEMPROOF_HARNESS_RUNTIME_KEPT_BUDGET_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include "base/thread_annotations.h"

namespace idemproof::runtime {

class KeptBudget {
 public:
  static constexpr std::size_t kHead = 4096;

  explicit KeptBudget(std::uint64_t total) : total_(total) {}
  KeptBudget(const KeptBudget&) = delete;
  KeptBudget& operator=(const KeptBudget&) = delete;

  // Reserves for `n` answers sent at once, each at most `max_body` bytes;
  // returns the cap of each: min(max_body, kHead + an equal share of
  // what is left). REQUIRES: n > 0. Each answer is given back by Release().
  std::size_t Reserve(std::size_t n, std::size_t max_body);
  // An answer reserved with `cap` kept `kept` bytes: what it did not keep
  // beyond kHead goes back to the budget.
  void Release(std::size_t cap, std::size_t kept);

  // The whole total again (a new run on the same budget: explore's trials).
  // REQUIRES: no reservation outstanding.
  void Reset();

  std::uint64_t total() const { return total_; }
  // Bytes beyond the heads reserved or kept so far.
  std::uint64_t used() const;

 private:
  const std::uint64_t total_;
  mutable base::Mutex mu_;
  std::uint64_t used_ GUARDED_BY(mu_) = 0;
};

}  // namespace idemproof::runtime

#endif  // IDEMPROOF_HARNESS_RUNTIME_KEPT_BUDGET_H_
