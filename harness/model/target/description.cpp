// TargetDescription's lookups (description.h).
#include <set>

#include "model/target/description.h"

namespace idemproof {

const ActionDescription* TargetDescription::FindAction(const std::string& n) const {
  auto it = actions.find(n);
  return it == actions.end() ? nullptr : &it->second;
}

HeaderList TargetDescription::HeadersAs(const std::string& caller) const {
  const CallerDescription* c = nullptr;
  for (const auto& d : callers)
    if (d.name == caller) c = &d;
  if (c == nullptr) return headers;
  HeaderList out;
  for (const auto& [name, value] : headers) {
    bool replaced = false;
    for (const auto& h : c->headers) replaced = replaced || equals_ignoring_case(h.first, name);
    if (!replaced) out.emplace_back(name, value);
  }
  for (const auto& h : c->headers) out.push_back(h);
  return out;
}

std::vector<std::string> TargetDescription::DownstreamsOf(const std::string& action) const {
  std::set<std::string> out;
  const ActionDescription* a = FindAction(action);
  if (a == nullptr) return {};
  if (a->calls) {
    out.insert(a->calls->begin(), a->calls->end());
  } else {
    for (const auto& [name, probe] : probes)
      if (probe.role == "ledger" && probe.of == action && !probe.egress.empty()) out.insert(probe.egress);
  }
  std::vector<std::string> http;
  for (const auto& name : out)
    if (auto e = egress.find(name); e != egress.end() && !e->second.tcp) http.push_back(name);
  return http;
}

std::vector<JsonPath> TargetDescription::VolatilePathsFor(const std::string& action) const {
  std::vector<JsonPath> out = volatile_paths;
  if (const auto* a = FindAction(action)) out.insert(out.end(), a->volatile_paths.begin(), a->volatile_paths.end());
  // A replay differs from the first answer by its marker, by design.
  if (idempotency.replay && idempotency.replay->body) out.push_back(*idempotency.replay->body);
  return out;
}

}  // namespace idemproof
