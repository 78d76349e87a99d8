#include "injectors/fault_selector.h"

#include <limits>

namespace idemproof::injectors {

FaultSettings FaultSettings::read(YamlOptions& options, const std::string& kind) {
  FaultSettings s;
  s.name = options.string("name").value_or(kind);
  if (std::optional<YAML::Node> match = options.child("match")) {
    YamlOptions m(*match, kind + ".match", *match);
    s.method = m.string("method");
    s.path = m.string("path");
    if (Status st = m.finish(); !st.ok()) options.fail(st);
  }
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  s.first = options.integer("first", 1, kMax);
  s.every = options.integer("every", 1, kMax);
  s.limit = options.integer("limit", 0, kMax);
  s.probability = options.number("probability", 0.0, 1.0).value_or(1.0);
  s.seed = static_cast<std::uint64_t>(options.integer("seed", 0, kMax).value_or(0));
  return s;
}

FaultSelector::FaultSelector(FaultSettings settings)
    : settings_(std::move(settings)), rng_(settings_.seed) {}

bool FaultSelector::matches(std::string_view method, std::string_view target) const {
  if (settings_.method && *settings_.method != method) return false;
  if (!settings_.path) return true;
  const std::string_view path = target.substr(0, target.find('?'));
  std::string_view want = *settings_.path;
  if (!want.empty() && want.back() == '*') {
    want.remove_suffix(1);
    return path.substr(0, want.size()) == want;
  }
  return path == want;
}

bool FaultSelector::select(std::string_view method, std::string_view target) {
  const bool match = matches(method, target);
  base::MutexLock lock(mu_);
  ++counters_.seen;
  if (!match) return false;
  const std::int64_t n = ++counters_.matched;
  if (settings_.first && n > *settings_.first) return false;
  if (settings_.every && n % *settings_.every != 0) return false;
  if (settings_.limit && counters_.injected >= *settings_.limit) return false;
  if (settings_.probability < 1.0) {
    // One draw per candidate, so the sequence depends only on seed and order.
    std::uniform_real_distribution<double> draw(0.0, 1.0);
    if (!(draw(rng_) < settings_.probability)) return false;
  }
  ++counters_.injected;
  return true;
}

FaultCounters FaultSelector::counters() const {
  base::MutexLock lock(mu_);
  return counters_;
}

}  // namespace idemproof::injectors
