// ScenarioVocabulary: the names a scenario file may use that are defined
// outside the model library: the oracles (and their parameters) and the fault
// kinds. The oracle registry (oracles/oracle.h) and the injector registry
// produce it; the scenario loader checks `expect:` and `faults:` against it,
// so a typo is an error with file:line:column, not a silent skip.
//
// Thread-safety: plain values.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace idemproof {

enum class ParamType { kString, kInt, kBool, kDuration, kStringList };

struct OracleParamSpec {
  std::string name;
  ParamType type = ParamType::kString;
  bool required = false;
  std::string doc;  // one line, for docs and `lint`
};

struct OracleSignature {
  std::string name;
  std::string doc;  // one line: what holds when the verdict is valid
  std::vector<OracleParamSpec> params;
  // Judges answer bodies: a valid verdict over a history with a truncated
  // request answer (max_body) becomes unknown.
  bool compares_bodies = false;
  // What must have happened for a valid verdict to mean anything, as a
  // plural noun phrase ("overlapping duplicates"); the oracle counts it
  // (Verdict::premise). Empty: no premise beyond the oracle's own checks.
  std::string premise = {};
};

struct ScenarioVocabulary {
  std::vector<OracleSignature> oracles;
  // Fault kinds the injectors provide. nullopt = not checked (the loader
  // accepts any kind; the runtime must then reject unknown ones).
  std::optional<std::vector<std::string>> fault_kinds;

  const OracleSignature* FindOracle(const std::string& name) const;
};

}  // namespace idemproof
