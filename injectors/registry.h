// Registry: builds injectors from their YAML blocks, by kind.
//
// A block is either a bare kind (`- hedge`) or a map with exactly one key, the
// kind, whose value holds the options (`- delay: {side: response, duration:
// 200ms, first: 1}`). The registry reads the shared FaultSettings, hands the
// rest to the kind's factory, then rejects any option nobody read. Every
// error is a Status naming line:column of the offending node.
//
// register_builtin_injectors() registers this room's kinds: drop-response,
// replay-upstream, hedge, delay, reset, kill-after-answer, fail (proxy
// faults). It is defined in proxy_faults/builtin_proxy_faults.cpp, the one
// place that names them, so the registry depends on no fault. Other rooms
// add theirs with Registry::add.
//
// Thread-safety: add() before use; build() is const and safe concurrently.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "injectors/injector.h"

namespace idemproof::injectors {

// Reads the kind's own options from `options` (errors go into `options`) and
// builds the injector with the already-read shared `settings`.
using InjectorFactory = std::function<Result<std::unique_ptr<Injector>>(
    const std::string& kind, YamlOptions& options, FaultSettings settings)>;

class Registry {
 public:
  // invalid_state if `kind` is already registered.
  Status add(const std::string& kind, InjectorFactory factory);
  Result<std::unique_ptr<Injector>> build(const YAML::Node& block) const;
  std::vector<std::string> kinds() const;

 private:
  std::map<std::string, InjectorFactory> factories_;
};

void register_builtin_injectors(Registry& registry);

}  // namespace idemproof::injectors
