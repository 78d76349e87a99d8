// ParseScenarioNode: the scenario loader over a document already parsed, for
// files that hold a scenario next to blocks of their own (an explore file's
// `explore:`): the caller removes its blocks from the parsed document, so
// the scenario is read as YAML and its errors keep the file's
// file:line:column. Same checks and errors as ParseScenario (scenario.h).
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "base/status.h"
#include "model/scenario.h"
#include "model/vocabulary.h"

namespace idemproof {

Result<Scenario> ParseScenarioNode(const YAML::Node& root, const std::string& file,
                                   const ScenarioVocabulary& vocabulary, bool parameters_used_elsewhere = false);

}  // namespace idemproof
