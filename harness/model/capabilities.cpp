#include "model/capabilities.h"

#include "model/target/description.h"

namespace idemproof {

const std::vector<CapabilityInfo>& CapabilityTable() {
  static const std::vector<CapabilityInfo> kTable = {
      {"slow_request", "the next request's business step is slow", "slow", "slow_business", false},
      {"retryable_failure", "the downstream fails retryably (a 5xx) once", "fails_retryably",
       "fail_next_retryable", false},
      {"heal", "undo every capability caused so far", "", "heal", true},
      {"slow_past_lease", "the next request's business step outlasts the declared lease ({{slow_ms}})",
       "slow_past_lease", "", false},
      {"kill_after_charge", "the target dies right after its downstream answered the charge", "",
       "kill_after_charge", false, true, true},
      {"final_failure", "the downstream rejects the next request with a final error (a 4xx the target stores)",
       "fails_finally", "fail_next_final", false},
      {"die_before_ack", "the consumer dies after applying the next published message, before acknowledging it",
       "die_before_ack", "die_before_ack", false, false, true, true},
  };
  return kTable;
}

const CapabilityInfo* FindCapability(const std::string& name) {
  for (const auto& c : CapabilityTable())
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<std::string> CapabilityNames() {
  std::vector<std::string> out;
  for (const auto& c : CapabilityTable()) out.push_back(c.name);
  return out;
}

Result<CapabilityProvision> ResolveCapability(const std::string& name, const std::string& action,
                                              const TargetDescription& target) {
  const CapabilityInfo* info = FindCapability(name);
  if (info == nullptr) return Status::InvalidArgument("unknown capability '" + name + "'");
  CapabilityProvision p;
  if (info->message && !action.empty()) {
    auto m = target.messages.find(action);
    if (m != target.messages.end()) {
      auto v = m->second.variants.find(info->variant);
      if (v != m->second.variants.end() && !v->second.fields.empty()) {
        p.kind = CapabilityProvision::Kind::kVariant;
        p.action = action;
        p.variant = info->variant;
        return p;
      }
    }
  } else if (!info->variant.empty() && !action.empty()) {
    const ActionDescription* a = target.FindAction(action);
    if (a != nullptr && a->variants.count(info->variant)) {
      p.kind = CapabilityProvision::Kind::kVariant;
      p.action = action;
      p.variant = info->variant;
      return p;
    }
  }
  if (const HookDescription* hook = info->hook.empty() ? nullptr : target.HookFor(info->name)) {
    p.kind = CapabilityProvision::Kind::kHook;
    p.hook = hook->name;
    return p;
  }
  if (info->egress && !action.empty()) {
    for (const auto& [name, probe] : target.probes) {
      if (probe.egress.empty() || probe.role != "ledger" || probe.of != action) continue;
      p.kind = CapabilityProvision::Kind::kEgress;
      p.action = action;
      p.ledger = name;
      return p;
    }
  }
  if (info->always) return p;
  std::string ways;
  if (info->message)
    ways = "a variant '" + info->variant + "' with broker fields of message '" + (action.empty() ? "?" : action) + "'";
  else if (!info->variant.empty())
    ways = "a variant '" + info->variant + "' of action '" + (action.empty() ? "?" : action) + "'";
  if (!info->hook.empty())
    ways += std::string(ways.empty() ? "" : " or ") + "a hook '" + info->hook + "'";  // or any with that role
  if (info->egress)
    ways += std::string(ways.empty() ? "" : " or ") + "a ledger probe with egress: of action '" +
            (action.empty() ? "?" : action) + "'";
  return Status(StatusCode::kUnsupported, "capability " + name + " (" + info->summary + "): " + ways);
}

// TargetDescription::HookFor is defined here, not beside the type: a hook
// without a role takes the one its name spells (the capability table).
const HookDescription* TargetDescription::HookFor(const std::string& role) const {
  for (const auto& [name, hook] : hooks)
    if (hook.role == role) return &hook;
  // A hook built without the loader (role unset) by its default name.
  const CapabilityInfo* info = FindCapability(role);
  if (info == nullptr || info->hook.empty()) return nullptr;
  auto it = hooks.find(info->hook);
  return it != hooks.end() && it->second.role.empty() ? &it->second : nullptr;
}

}  // namespace idemproof
