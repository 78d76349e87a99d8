#include "model/vocabulary.h"

namespace idemproof {

const char* ParamTypeName(ParamType type) {
  switch (type) {
    case ParamType::kString: return "string";
    case ParamType::kInt: return "integer";
    case ParamType::kBool: return "boolean";
    case ParamType::kDuration: return "duration";
    case ParamType::kStringList: return "list of strings";
  }
  return "?";
}

const OracleSignature* ScenarioVocabulary::FindOracle(const std::string& name) const {
  for (const auto& o : oracles)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace idemproof
