#include "runtime/request_routing.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <utility>

namespace idemproof::runtime {

RequestRouting::RequestRouting(const TargetDescription& target, const InterpreterOptions& options,
                               const Scenario& scenario, const std::unique_ptr<TargetInstances>& instances)
    : target_(target), options_(options), instances_(instances) {
  records_instances_ = target.instance_count > 1;
  for (const Step& step : scenario.steps)
    records_instances_ = records_instances_ || step.kind->spawns_instance() || !step.NamedInstance().empty();
}

void RequestRouting::Reset(const std::string& run) {
  // Seeded per scenario run: the same --seed places the same way.
  std::seed_seq seed{static_cast<std::uint32_t>(options_.seed), static_cast<std::uint32_t>(options_.seed >> 32),
                     static_cast<std::uint32_t>(std::hash<std::string>{}(run))};
  std::uint32_t words[2];
  seed.generate(words, words + 2);
  balancer_ = std::make_unique<Balancer>(instances_->declared(), target_.balance,
                                         (std::uint64_t{words[0]} << 32) | words[1]);
}

Result<RequestRouting::Placement> RequestRouting::Place(const std::string& instance, const std::string& key) {
  auto placed = PlaceBurst(instance, {key});
  if (!placed.ok()) return placed.status();
  return placed->front();
}

Result<std::vector<RequestRouting::Placement>> RequestRouting::PlaceBurst(const std::string& instance,
                                                                          const std::vector<std::string>& keys) {
  auto up = [this](const std::string& name) { return instances_->Up(name); };
  std::vector<std::string> names;
  if (!instance.empty() && instance != kOtherInstance) {
    names.assign(keys.size(), instance);
  } else if (instance == kOtherInstance) {
    auto other = balancer_->Other(keys.front(), up);
    if (!other)
      return Status(StatusCode::kUnsupported, "instance: other: no target instance up besides the one the last "
                                              "request of this key went to");
    names.assign(keys.size(), *other);
  } else if (Routed() || keys.size() == 1) {
    // An armed fault's proxy fronts main: what the balancer places goes through it.
    std::optional<std::string> one = Routed() ? std::optional<std::string>("main") : balancer_->Place(keys.front(), up);
    names.assign(keys.size(), one.value_or("main"));  // none up: main, whose request then fails on the wire
  } else {
    names = balancer_->PlaceInTurn(keys.front(), static_cast<int>(keys.size()), up);
    if (names.empty()) names.assign(keys.size(), "main");
  }
  std::vector<Placement> out;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    Placement p{names[i], ""};
    if (p.instance == "main") {
      p.url = ClientBaseUrl();
    } else {
      auto url = instances_->Url(p.instance);
      if (!url.ok()) return url.status();
      p.url = *url;
    }
    balancer_->Sent(keys[i], p.instance, instance == kOtherInstance);
    out.push_back(std::move(p));
  }
  return out;
}

std::string RequestRouting::BaseUrl() { return instances_ ? instances_->MainUrl() : ""; }

std::string RequestRouting::ClientBaseUrl() {
  {
    base::MutexLock lock(mu_);
    if (!client_base_url_.empty()) return client_base_url_;
  }
  return BaseUrl();
}

bool RequestRouting::Routed() {
  base::MutexLock lock(mu_);
  return !client_base_url_.empty();
}

void RequestRouting::UpdateClientRoute() {
  std::optional<std::string> url = options_.faults ? options_.faults->ClientBaseUrl() : std::nullopt;
  base::MutexLock lock(mu_);
  client_base_url_ = url.value_or("");
}

}  // namespace idemproof::runtime
