#include "runtime/balancer.h"

#include <algorithm>

namespace idemproof::runtime {

namespace {

// FNV-1a: the same key lands on the same instance on every machine (std::hash does not promise that).
std::uint64_t StableHash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

Balancer::Balancer(std::vector<std::string> instances, BalancePolicy policy, std::uint64_t seed)
    : instances_(std::move(instances)), policy_(policy), random_(seed) {}

std::size_t Balancer::Choose(const std::string& key) {
  const std::size_t n = instances_.size();
  switch (policy_) {
    case BalancePolicy::kRoundRobin: return static_cast<std::size_t>(turn_++ % n);
    case BalancePolicy::kByKey: return static_cast<std::size_t>(StableHash(key) % n);
    case BalancePolicy::kRandom: return static_cast<std::size_t>(random_() % n);
  }
  return 0;
}

std::optional<std::size_t> Balancer::FirstUp(std::size_t from, const UpCheck& up, const std::string& skip) const {
  const std::size_t n = instances_.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t at = (from + i) % n;
    if (instances_[at] != skip && up(instances_[at])) return at;
  }
  return std::nullopt;
}

std::optional<std::string> Balancer::Place(const std::string& key, const UpCheck& up) {
  base::MutexLock lock(mu_);
  auto at = FirstUp(Choose(key), up);
  if (!at) return std::nullopt;
  return instances_[*at];
}

std::vector<std::string> Balancer::PlaceInTurn(const std::string& key, int count, const UpCheck& up) {
  base::MutexLock lock(mu_);
  std::vector<std::string> out;
  auto at = FirstUp(Choose(key), up);
  for (int i = 0; at && i < count; ++i) {
    out.push_back(instances_[*at]);
    at = FirstUp(*at + 1, up);
  }
  return out;
}

std::optional<std::string> Balancer::Other(const std::string& key, const UpCheck& up) {
  base::MutexLock lock(mu_);
  auto last = last_.find(key);
  if (last == last_.end()) {
    auto at = FirstUp(Choose(key), up);
    if (!at) return std::nullopt;
    return instances_[*at];
  }
  auto anchor = anchor_.find(key);
  const std::string& avoid = anchor == anchor_.end() ? last->second : anchor->second;
  auto pos = std::find(instances_.begin(), instances_.end(), last->second);
  const std::size_t from = pos == instances_.end() ? 0 : static_cast<std::size_t>(pos - instances_.begin()) + 1;
  auto at = FirstUp(from, up, avoid);
  if (!at) return std::nullopt;
  return instances_[*at];
}

void Balancer::Sent(const std::string& key, const std::string& instance, bool by_other) {
  base::MutexLock lock(mu_);
  // A request placed by Other keeps the anchor: the instance the retries are away from.
  if (!by_other) anchor_[key] = instance;
  last_[key] = instance;
}

}  // namespace idemproof::runtime
