// Balancer: the harness's own load balancer in front of a target's
// instances (target `instances:` / `balance:`). It places each request that
// names no instance by the target's policy — in turn (round_robin), by a
// hash of the concrete key (by_key: one key always on one instance while it
// is up), or seeded random (the run's seed: the same seed places the same
// way) — skipping instances that are down (killed, stopped, not started). It
// remembers where the last request of each key went, for `instance: other`
// (a retry after a lost answer, a redelivery, a takeover on another instance).
//
// Pure placement: `up` says which instances may take a request now; the
// balancer never talks to the network.
//
// Thread-safety: every member may be called from any thread (background
// sends place their requests concurrently); `up` is called under the
// balancer's lock and must not call back into it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/thread_annotations.h"
#include "model/target/instances.h"

namespace idemproof::runtime {

class Balancer {
 public:
  using UpCheck = std::function<bool(const std::string& instance)>;

  // REQUIRES: `instances` is not empty (the target's, in order: "main" first).
  Balancer(std::vector<std::string> instances, BalancePolicy policy, std::uint64_t seed);

  // Where one request of `key` goes: an up instance by the policy; nullopt
  // when none is up.
  std::optional<std::string> Place(const std::string& key, const UpCheck& up);
  // `count` requests released together: over the up instances in turn, from
  // where the policy places the first (a burst split across instances).
  // Empty when none is up.
  std::vector<std::string> PlaceInTurn(const std::string& key, int count, const UpCheck& up);
  // An up instance other than the key's anchor — where its last request
  // placed without `other` went (the owner, the one whose answer was lost)
  // — the next up one in the target's order after where its last request
  // went, so successive `other` requests take the others in turn (the
  // policy's place when the key was never sent). nullopt when no instance
  // but the anchor is up. A two-instance target whose anchor died keeps
  // sending to the one other.
  std::optional<std::string> Other(const std::string& key, const UpCheck& up);
  // Records where a request of `key` went; `by_other`: it was placed by
  // Other (it moves the turn, not the anchor).
  void Sent(const std::string& key, const std::string& instance, bool by_other = false);

  const std::vector<std::string>& instances() const { return instances_; }

 private:
  // The policy's first choice (an index into instances_).
  std::size_t Choose(const std::string& key) REQUIRES(mu_);
  // The first up instance from `from` on, in order (wrapping).
  std::optional<std::size_t> FirstUp(std::size_t from, const UpCheck& up, const std::string& skip = "") const
      REQUIRES(mu_);

  const std::vector<std::string> instances_;
  const BalancePolicy policy_;
  base::Mutex mu_;
  std::uint64_t turn_ GUARDED_BY(mu_) = 0;
  std::mt19937_64 random_ GUARDED_BY(mu_);
  std::map<std::string, std::string> last_ GUARDED_BY(mu_);     // key -> instance
  std::map<std::string, std::string> anchor_ GUARDED_BY(mu_);   // key -> last instance not placed by Other
};

}  // namespace idemproof::runtime
