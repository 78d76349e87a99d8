// Target instances' names (instances.h).
#include <cctype>
#include <string>

#include "model/target/instances.h"

namespace idemproof {

const char* BalancePolicyName(BalancePolicy policy) {
  switch (policy) {
    case BalancePolicy::kRoundRobin: return "round_robin";
    case BalancePolicy::kByKey: return "by_key";
    case BalancePolicy::kRandom: return "random";
  }
  return "?";
}

std::string TargetInstanceName(int index) { return index == 0 ? "main" : "instance-" + std::to_string(index + 1); }

std::optional<int> TargetInstanceIndex(const std::string& name) {
  if (name == "main") return 0;
  const std::string prefix = "instance-";
  if (name.rfind(prefix, 0) != 0 || name.size() == prefix.size() || name.size() > prefix.size() + 3) return std::nullopt;
  int n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  // "instance-1" is "main"; "instance-02" is no name the harness gives.
  if (n < 2 || name[prefix.size()] == '0') return std::nullopt;
  return n - 1;
}

}  // namespace idemproof
