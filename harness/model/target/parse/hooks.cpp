// `hooks:` (hooks.h).
#include <vector>

#include "model/capabilities.h"
#include "model/target/description.h"
#include "model/target/hooks.h"
#include "model/target/parse/load_context.h"

namespace idemproof {
namespace {

// A hook's role: its `role:` (a capability a hook provides), else the
// one its name spells by default (capabilities.h), else none.
std::string HookRole(TargetLoadContext& cx, const std::string& name, const YAML::Node& node) {
  std::vector<std::string> roles;
  for (const auto& c : CapabilityTable())
    if (!c.hook.empty()) roles.push_back(c.name);
  if (node.IsMap() && node["role"]) return cx.KnownRole(node["role"], "hook '" + name + "'", roles);
  for (const auto& c : CapabilityTable())
    if (!c.hook.empty() && c.hook == name) return c.name;
  return "";
}

}  // namespace

void ParseHooks(TargetLoadContext& cx, const YAML::Node& hooks, TargetDescription& t) {
  cx.r.ExpectMap(hooks, "hooks");
  for (auto it = hooks.begin(); it != hooks.end(); ++it) {
    std::string name = cx.Name(it->first, "hook");
    HookDescription h;
    h.name = name;
    h.call = cx.Call(it->second, "hook '" + name + "'", {"role"});
    h.role = HookRole(cx, name, it->second);
    h.mark = cx.r.MarkOf(it->first);
    for (const auto& [other, earlier] : t.hooks)
      if (!h.role.empty() && earlier.role == h.role)
        cx.r.Fail(it->second["role"] ? it->second["role"] : it->first,
                  "hook '" + name + "': hook '" + other + "' already has role " + h.role + "; one hook per role");
    t.hooks[name] = h;
  }
}

}  // namespace idemproof
