// `instances:` and `balance:` of the target file: how many target processes
// there are, their names, and how requests are spread over them.
#pragma once

#include <optional>
#include <string>

namespace YAML {
class Node;
}  // namespace YAML

namespace idemproof {

class TargetLoadContext;   // model/target/load_context.h
struct TargetDescription;  // model/target/description.h

// How the harness, as the target's balancer, places a request that names no
// instance (`balance:`): in turn, by a hash of its key, or seeded random.
enum class BalancePolicy { kRoundRobin, kByKey, kRandom };
// "round_robin", "by_key", "random".
const char* BalancePolicyName(BalancePolicy policy);

// The name of target instance number `index` (0-based): "main" for the first
// (the one scenarios start, stop and kill by default), "instance-2",
// "instance-3", ... for the others a target file declares (`instances:`).
std::string TargetInstanceName(int index);
// The index of a declared instance name ("main" = 0, "instance-N" = N-1);
// nullopt for any other name (a spawned one, "other").
std::optional<int> TargetInstanceIndex(const std::string& name);
// The most instances a target file may declare.
inline constexpr int kMostInstances = 16;

// Reads `instances:`, `balance:`, `shared_store:` and `base_url:` of the
// file's root map (after `start:`, which `instances: N` needs).
void ParseInstances(TargetLoadContext& cx, const YAML::Node& root, TargetDescription& t);

}  // namespace idemproof
