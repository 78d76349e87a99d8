// Probes (probes.h).
#include "model/target/probes.h"

namespace idemproof {

nlohmann::json EgressMatch::AsFaultMatch() const {
  nlohmann::json match = nlohmann::json::object();
  if (!method.empty()) match["method"] = method;
  if (!path.empty()) match["path"] = path;
  return match;
}

}  // namespace idemproof
