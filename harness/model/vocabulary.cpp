#include "model/vocabulary.h"

namespace idemproof {

const OracleSignature* ScenarioVocabulary::FindOracle(const std::string& name) const {
  for (const auto& o : oracles)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace idemproof
