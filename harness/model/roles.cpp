#include "model/roles.h"

#include <algorithm>

namespace idemproof {

const std::vector<std::string>& ActionRoleNames() {
  static const std::vector<std::string> kRoles = {"create", "put", "delete", "pay", "callback"};
  return kRoles;
}

const std::vector<std::string>& ProbeRoleNames() {
  static const std::vector<std::string> kRoles = {"counter", "resource", "ledger", "record", "applied"};
  return kRoles;
}

bool IsActionRole(const std::string& role) {
  const auto& roles = ActionRoleNames();
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

bool IsProbeRole(const std::string& role) {
  const auto& roles = ProbeRoleNames();
  return std::find(roles.begin(), roles.end(), role) != roles.end();
}

}  // namespace idemproof
