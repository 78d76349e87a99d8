#include "injectors/registry.h"

namespace idemproof::injectors {

Status Registry::add(const std::string& kind, InjectorFactory factory) {
  if (!factories_.emplace(kind, std::move(factory)).second) {
    return Status(StatusCode::kInternal, "injector kind '" + kind + "' registered twice");
  }
  return Status::Ok();
}

std::vector<std::string> Registry::kinds() const {
  std::vector<std::string> out;
  for (const auto& [k, f] : factories_) out.push_back(k);
  return out;
}

Result<std::unique_ptr<Injector>> Registry::build(const YAML::Node& block) const {
  YAML::Node kind_node;
  YAML::Node options_node;
  if (block.IsScalar()) {
    kind_node = block;
  } else if (block.IsMap() && block.size() == 1) {
    kind_node = block.begin()->first;
    options_node = block.begin()->second;
  } else {
    return error_at(block, "an injector is a kind or a map with one key, the kind");
  }
  const std::string kind = kind_node.Scalar();
  auto it = factories_.find(kind);
  if (it == factories_.end()) {
    std::string known;
    for (const auto& [k, f] : factories_) known += (known.empty() ? "" : ", ") + k;
    return error_at(kind_node, "unknown injector '" + kind + "' (known: " + known + ")");
  }
  YamlOptions options(options_node, kind, kind_node);
  FaultSettings settings = FaultSettings::read(options, kind);
  // Unknown keys are judged only after the factory has read its own options.
  if (!options.first_error().ok()) return options.first_error();
  auto built = it->second(kind, options, std::move(settings));
  if (Status st = options.finish(); !st.ok()) return st;
  return built;
}

}  // namespace idemproof::injectors
